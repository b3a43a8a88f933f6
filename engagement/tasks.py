"""Thin Celery wrappers of the inbox: ids in, one service call each. Every task is idempotent: it
claims its rows before acting, so a duplicate or late delivery changes nothing."""

from __future__ import annotations

from celery import shared_task

from engagement import actions, sync


@shared_task(name="engagement.sync_due", ignore_result=True)
def sync_due_task() -> int:
    """Track newly published entries, then queue the sync of every account with due sources."""
    sync.sources_discover_due()
    return sync.syncs_queue_due()


@shared_task(name="engagement.sync_account", acks_late=True, ignore_result=True)
def sync_account_task(account_id: str) -> int:
    """Read the account's due sources and announce what is new."""
    return sync.sync_account(account_id=account_id).comments


@shared_task(name="engagement.run_comment_actions", ignore_result=True)
def run_comment_actions_task(action_ids: list[str]) -> int:
    """Each due reply, hide, unhide, delete or like among ``action_ids``, claimed before it is sent."""
    return actions.run_comment_actions(list(action_ids))


@shared_task(name="engagement.sweep_comment_actions", ignore_result=True)
def sweep_comment_actions_task() -> None:
    """Comment actions whose worker was lost, and due ones whose task was lost."""
    actions.recover()
