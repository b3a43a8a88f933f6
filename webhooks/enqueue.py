"""The one way delivery work is queued (tasks are sent by name, so this module imports no task
module and the engine can queue its own retries without an import cycle). Call it from
``transaction.on_commit`` only: the rows must be committed before a worker looks for them.

A queued task is only a wake-up call: the Delivery row (pending, ``next_attempt_at``, lease) is the
source of truth, the task claims it before sending, and the sweeper re-queues work whose task was
lost. So queueing twice is harmless and losing a message only delays."""

from __future__ import annotations

from typing import Any

from celery import current_app as app
from django.conf import settings

DELIVER_MANY = "webhooks.deliver_many"


def enqueue_deliveries(delivery_ids: list[str], *, countdown: float | None = None) -> None:
    """``webhooks.deliver_many`` tasks of up to ``WEBHOOK_DELIVERY_BATCH`` deliveries each (one is a
    batch of one): one event's deliveries go as one message and are sent side by side."""
    options: dict[str, Any] = {} if countdown is None else {"countdown": countdown}
    size = settings.WEBHOOK_DELIVERY_BATCH
    for start in range(0, len(delivery_ids), size):
        app.send_task(DELIVER_MANY, args=[list(delivery_ids[start : start + size])], **options)
