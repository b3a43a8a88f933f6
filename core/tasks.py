from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from core.models import IdempotencyRecord


@shared_task(name="core.purge_idempotency_records")
def purge_idempotency_records() -> int:
    """Delete records past their 24 h; running it twice deletes nothing more."""
    deleted, _ = IdempotencyRecord.objects.filter(expires_at__lte=timezone.now()).delete()
    return deleted
