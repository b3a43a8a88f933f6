"""Celery tasks of the media app: thin wrappers, ids in, idempotent."""

from __future__ import annotations

import datetime as dt
from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from core import work
from media.ai.services import ai_image_job_run
from media.fitting import media_fit, media_fit_failed
from media.lifecycle import collect_garbage as garbage_sweep
from media.lifecycle import collect_orphans as orphans_sweep
from media.models import AiImageJob, AiJobStatus
from media.previews import preview_make
from media.probing import media_probe, media_probe_failed

STALE_QUEUED_JOB = dt.timedelta(minutes=5)


@shared_task(name="media.make_preview")
def make_preview(media_file_id: str) -> str:
    return preview_make(media_file_id=media_file_id)


@shared_task(
    name="media.probe",
    soft_time_limit=settings.MEDIA_PROBE_WALL_SECONDS + 30,
    time_limit=settings.MEDIA_PROBE_WALL_SECONDS + 60,
)
def probe_media(media_file_id: str) -> str:
    """The probe's child is killed at its wall-clock backstop (MEDIA_PROBE_WALL_SECONDS); the soft
    limit covers a storage read that hangs, and marks the file unusable rather than leaving it
    queued."""
    try:
        return media_probe(media_file_id=media_file_id)
    except SoftTimeLimitExceeded:
        return media_probe_failed(media_file_id=media_file_id, reason="probing the file took too long")


@shared_task(
    name="media.fit",
    soft_time_limit=settings.MEDIA_FIT_WALL_SECONDS + 60,
    time_limit=settings.MEDIA_FIT_WALL_SECONDS + 90,
)
def fit_media(variant_id: str) -> str:
    """Runs on the ``media`` queue (its own workers: fitting never delays publishing). The fit's
    child is killed at its wall-clock backstop (MEDIA_FIT_WALL_SECONDS); the soft limit covers a
    storage read that hangs."""
    try:
        return media_fit(variant_id=variant_id)
    except SoftTimeLimitExceeded:
        return media_fit_failed(variant_id=variant_id, reason="fitting the file took too long")


@shared_task(name="media.collect_garbage")
def collect_garbage() -> int:
    return garbage_sweep().deleted


@shared_task(name="media.collect_orphans")
def collect_orphans() -> int:
    return orphans_sweep()


@shared_task(name="media.generate_image", bind=True, max_retries=5)
def generate_image(self: Any, job_id: str) -> str:
    run = ai_image_job_run(job_id=job_id)
    if run.retry_in_seconds is not None:
        raise self.retry(countdown=run.retry_in_seconds)
    return run.status


@shared_task(name="media.resume_image_jobs")
def resume_image_jobs() -> int:
    """Re-enqueue jobs whose task was lost (queued for minutes, or processing past its lease);
    the job's own claim makes a duplicate run harmless."""
    now = timezone.now()
    stale = Q(status=AiJobStatus.QUEUED, updated_at__lt=now - STALE_QUEUED_JOB) | Q(
        work.lease_expired(now), status=AiJobStatus.PROCESSING
    )
    job_ids = list(AiImageJob.objects.filter(stale).values_list("id", flat=True)[:200])
    for job_id in job_ids:
        generate_image.delay(job_id)
    return len(job_ids)
