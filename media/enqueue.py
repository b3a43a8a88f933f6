"""How the media app's services queue its Celery tasks: by task name, after the caller's
transaction commits. ``media.tasks`` imports the services it wraps; the services never import
it back, and this is their one way to reach it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import transaction

from config.celery import app


def enqueue_after_commit(task_name: str, args_per_call: Iterable[Sequence[Any]]) -> None:
    """Send ``task_name`` (``media.<task>``) once per argument list once the current transaction
    commits (at once outside one). A broker error is logged and the rest are still sent:
    the sweepers re-queue what was lost."""
    calls = [list(args) for args in args_per_call]

    def send() -> None:
        for args in calls:
            app.send_task(task_name, args=args)

    transaction.on_commit(send, robust=True)
