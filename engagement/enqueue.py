"""The one way inbox work is queued. Call it from ``transaction.on_commit`` only: a task is a
wake-up call, the rows (a source's due time, an action's PENDING status) are the truth, and each
task claims its rows before acting, so queuing twice is harmless and a lost message only delays."""

from __future__ import annotations

from collections.abc import Iterable

from celery import current_app as app

SYNC_ACCOUNT = "engagement.sync_account"
RUN_ACTIONS = "engagement.run_comment_actions"
ACTION_BATCH = 50


def enqueue_syncs(account_ids: Iterable[str]) -> None:
    for account_id in dict.fromkeys(account_ids):
        app.send_task(SYNC_ACCOUNT, args=[account_id])


def enqueue_syncs_at(wakeups: Iterable[tuple[str, float]]) -> None:
    """One sync task per ``(account, countdown in seconds)``: the task arrives when its sources
    fall due (at once for a countdown of 0)."""
    for account_id, countdown in dict.fromkeys(wakeups):
        app.send_task(SYNC_ACCOUNT, args=[account_id], countdown=countdown if countdown > 0 else None)


def enqueue_actions(action_ids: Iterable[str], *, countdown: float | None = None) -> None:
    ids = list(action_ids)
    for start in range(0, len(ids), ACTION_BATCH):
        app.send_task(
            RUN_ACTIONS,
            args=[ids[start : start + ACTION_BATCH]],
            countdown=countdown if countdown and countdown > 0 else None,
        )
