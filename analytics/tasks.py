from __future__ import annotations

import datetime as dt

from celery import shared_task

from analytics import services


@shared_task(name="analytics.import_account_history", acks_late=True)
def import_account_history(account_id: str) -> None:
    services.import_account_history(account_id=account_id)


@shared_task(name="analytics.refresh_account", acks_late=True)
def refresh_account(account_id: str) -> None:
    services.refresh_account(account_id=account_id)


@shared_task(name="analytics.refresh_due")
def refresh_due() -> int:
    """Queue a refresh of every account not refreshed in the last 6 hours (and not already queued)."""
    return services.queue_due_refreshes(older_than=dt.timedelta(hours=6))
