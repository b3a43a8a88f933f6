"""AI image jobs: creation, and the run that turns a job into a MediaFile of its workspace."""

from __future__ import annotations

import datetime as dt
import io
import logging
import uuid
from dataclasses import dataclass
from functools import partial

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from core import work
from core.errors import ValidationFailed
from media.ai.providers import RATIOS, GeneratedImage, ProviderError, get_provider
from media.ai.usage import Charge, UsageMember, usage_charge, usage_refund
from media.enqueue import GENERATE_IMAGE, enqueue_each
from media.files import new_key
from media.models import AiImageJob, AiJobStatus, AiUsageKind, MediaFile, MediaKind, MediaSource, ProbeStatus
from media.previews import previews_enqueue
from media.probing import probes_send
from media.storage import get_media_storage
from webhooks.events import emit_event

logger = logging.getLogger(__name__)

PROMPT_MAX_LENGTH = 2000
SESSION_ID_MAX_LENGTH = 200
MAX_ATTEMPTS = 3
LEASE = dt.timedelta(minutes=10)
# Waits before the 2nd and 3rd attempts after a retryable provider error (± 20 % jitter).
RETRY_SECONDS = (30.0, 60.0)
# "referenced-pending": a generated image is not collected for this long even if unused.
KEEP_GENERATED_FOR = dt.timedelta(days=7)
_UNEXPECTED_ERROR = "AI image generation failed unexpectedly"


@transaction.atomic
def ai_image_job_create(
    *,
    workspace_id: str,
    prompt: str,
    aspect_ratio: str = "1:1",
    session_id: str | None = None,
    member: UsageMember | None = None,
) -> AiImageJob:
    """Queue a job (status ``queued``) and enqueue ``media.generate_image`` after commit. Without
    a ``session_id`` a new session id (a UUID, as the published agent server expects) is made, so
    related generations can be grouped; any id given back (older ``sess_…`` ones too) is kept. The
    image is charged to ``member`` now (402 ``ai_quota_exhausted`` past the workspace's monthly
    units, and then no job) and refunded if the job fails."""
    errors = []
    if not isinstance(prompt, str) or not prompt.strip() or len(prompt) > PROMPT_MAX_LENGTH:
        errors.append(f"prompt must be 1 to {PROMPT_MAX_LENGTH} characters")
    if aspect_ratio not in RATIOS:
        errors.append(f"aspectRatio must be one of: {', '.join(RATIOS)}")
    if session_id is not None and not (1 <= len(session_id) <= SESSION_ID_MAX_LENGTH):
        errors.append(f"sessionId must be 1 to {SESSION_ID_MAX_LENGTH} characters")
    if errors:
        raise ValidationFailed(errors)
    charge = usage_charge(workspace_id=workspace_id, member=member, kind=AiUsageKind.IMAGE) if member else None
    job = AiImageJob.objects.create(
        workspace_id=workspace_id,
        prompt=prompt,
        aspect_ratio=aspect_ratio,
        session_id=session_id or str(uuid.uuid4()),
        usage_id=charge.usage_id if charge else None,
        charged_units=charge.units if charge else 0,
    )
    transaction.on_commit(partial(enqueue_each, GENERATE_IMAGE, [job.id]), robust=True)
    return job


@dataclass(frozen=True)
class JobRun:
    status: str
    retry_in_seconds: float | None = None


def ai_image_job_run(*, job_id: str) -> JobRun:
    """Claim the job (queued, or processing with an expired lease) with a lease (``core.work``),
    call the provider outside any transaction, then finalize in one transaction, fenced by that
    lease, that also emits exactly one event: ``image.completed`` (the image stored as an uploaded
    MediaFile of the workspace, kept at least 7 days) or ``image.failed``. A retryable provider
    error puts the job back to ``queued`` and asks for a retry after a jittered backoff, up to 3
    attempts. Running it again on a finished job, or on one another worker holds, changes
    nothing."""
    now = timezone.now()
    lease_until = now + LEASE
    claimable = AiImageJob.objects.filter(id=job_id).filter(
        Q(status=AiJobStatus.QUEUED) | Q(work.lease_expired(now), status=AiJobStatus.PROCESSING)
    )
    claimed = work.claim(
        claimable, lease_until=lease_until, status=AiJobStatus.PROCESSING, attempts=F("attempts") + 1, updated_at=now
    )
    job = AiImageJob.objects.filter(id=job_id).first()
    if job is None:
        return JobRun(status="gone")
    if not claimed or job.lease_until != lease_until:
        return JobRun(status=job.status)
    try:
        image = get_provider().generate(prompt=job.prompt, aspect_ratio=job.aspect_ratio)
    except ProviderError as exc:
        if exc.retryable and job.attempts < MAX_ATTEMPTS:
            processing = AiImageJob.objects.filter(id=job.id, status=AiJobStatus.PROCESSING)
            work.release(processing, lease_until=lease_until, status=AiJobStatus.QUEUED, updated_at=timezone.now())
            return JobRun(status=AiJobStatus.QUEUED, retry_in_seconds=work.backoff_seconds(job.attempts, RETRY_SECONDS))
        return JobRun(status=_finish_failed(job, exc.message))
    except Exception:
        logger.exception("AI image job %s: provider crashed", job.id)
        return JobRun(status=_finish_failed(job, _UNEXPECTED_ERROR))
    return JobRun(status=_finish_completed(job, image))


def _still_ours(job: AiImageJob) -> AiImageJob | None:
    """The job locked, if this run's claim (its lease, read back right after the claim) still
    holds it; None once another worker took it over."""
    processing = AiImageJob.objects.select_for_update().filter(id=job.id, status=AiJobStatus.PROCESSING)
    return work.fenced(processing, lease_until=job.lease_until).first()


def _finish_failed(job: AiImageJob, error: str) -> str:
    with transaction.atomic():
        current = _still_ours(job)
        if current is None:
            return AiImageJob.objects.get(id=job.id).status
        current.status, current.error = AiJobStatus.FAILED, error
        current.finished_at, current.lease_until = timezone.now(), None
        current.save(update_fields=["status", "error", "finished_at", "lease_until", "updated_at"])
        if current.usage_id is not None and current.charged_units:
            # the job leaves PROCESSING for good under this row lock, so the refund happens once
            usage_refund(charge=Charge(usage_id=current.usage_id, units=current.charged_units))
        emit_event(
            workspace_id=current.workspace_id,
            name="image.failed",
            data={
                "image": {
                    "jobId": current.id,
                    "sessionId": current.session_id,
                    "prompt": current.prompt,
                    "error": error,
                }
            },
        )
    return AiJobStatus.FAILED


def _finish_completed(job: AiImageJob, image: GeneratedImage) -> str:
    storage = get_media_storage()
    key = new_key(workspace_id=job.workspace_id, file_name="ai-image.png")
    storage.save(key, io.BytesIO(image.data), content_type=image.mime_type)
    try:
        with transaction.atomic():
            current = _still_ours(job)
            if current is None:
                storage.delete(key)
                return AiImageJob.objects.get(id=job.id).status
            now = timezone.now()
            media = MediaFile.objects.create(
                probe_status=ProbeStatus.QUEUED,
                probe_queued_at=now,
                workspace_id=current.workspace_id,
                key=key,
                public_url=storage.public_url(key),
                file_name="ai-image.png",
                mime_type=image.mime_type,
                kind=MediaKind.IMAGE,
                source=MediaSource.AI,
                size=len(image.data),
                uploaded_at=now,
                keep_until=now + KEEP_GENERATED_FOR,
            )
            current.status, current.media_file = AiJobStatus.COMPLETED, media
            current.image_url, current.image_id = media.public_url, media.id
            current.finished_at, current.lease_until = now, None
            current.save(
                update_fields=[
                    "status",
                    "media_file",
                    "image_url",
                    "image_id",
                    "finished_at",
                    "lease_until",
                    "updated_at",
                ]
            )
            emit_event(
                workspace_id=current.workspace_id,
                name="image.completed",
                data={
                    "image": {
                        "jobId": current.id,
                        "sessionId": current.session_id,
                        "prompt": current.prompt,
                        "imageUrl": media.public_url,
                        "imageId": media.id,
                    }
                },
            )
            previews_enqueue(media_file_ids=[media.id])
            probes_send(media_file_ids=[media.id])
    except BaseException:
        storage.delete(key)
        raise
    return AiJobStatus.COMPLETED
