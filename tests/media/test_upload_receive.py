"""The local PUT service on its own: streamed bodies without Content-Length, lost rows, claims."""

from __future__ import annotations

import datetime as dt
import io

import pytest
from django.utils import timezone

from core.errors import ApplicationError
from media.models import AiImageJob, MediaFile
from media.services import UploadRequest, media_upload_receive, upload_urls_create
from media.storage import local_upload_signature
from media.tasks import generate_image, resume_image_jobs
from tests.factories.media import AiImageJobFactory

pytestmark = pytest.mark.django_db


def receive(key: str, body: bytes, *, content_length: str | None = None) -> MediaFile:
    expires = int((timezone.now() + dt.timedelta(minutes=5)).timestamp())
    return media_upload_receive(
        key=key,
        expires=str(expires),
        content_type="image/png",
        signature=local_upload_signature(key=key, expires=expires, content_type="image/png"),
        request_content_type="image/png",
        content_length=content_length,
        body=io.BytesIO(body),
    )


def test_a_body_without_length_is_capped_while_streaming(workspace, settings, local_media):
    settings.MEDIA_MAX_UPLOAD_BYTES = 5
    (ticket,) = upload_urls_create(workspace_id=workspace.id, files=[UploadRequest("a.png", "image/png")])
    with pytest.raises(ApplicationError) as error:
        receive(ticket.key, b"123456")
    assert (error.value.status_code, error.value.code) == (413, "file_too_large")
    assert MediaFile.objects.get(key=ticket.key).upload_claimed_at is None  # the claim was released
    assert not (local_media / ticket.key).exists()
    stored = receive(ticket.key, b"12345")
    assert (stored.size, (local_media / ticket.key).read_bytes()) == (5, b"12345")


def test_a_collected_upload_is_404_and_a_bad_length_400(workspace):
    (ticket,) = upload_urls_create(workspace_id=workspace.id, files=[UploadRequest("a.png", "image/png")])
    with pytest.raises(ApplicationError) as bad_length:
        receive(ticket.key, b"x", content_length="many")
    assert (bad_length.value.status_code, bad_length.value.code) == (400, "invalid_content_length")
    MediaFile.objects.filter(key=ticket.key).delete()
    with pytest.raises(ApplicationError) as gone:
        receive(ticket.key, b"x")
    assert (gone.value.status_code, gone.value.code) == (404, "upload_not_found")


def test_an_abandoned_claim_can_be_taken_over(workspace):
    (ticket,) = upload_urls_create(workspace_id=workspace.id, files=[UploadRequest("a.png", "image/png")])
    MediaFile.objects.filter(key=ticket.key).update(upload_claimed_at=timezone.now())
    with pytest.raises(ApplicationError) as busy:
        receive(ticket.key, b"x")
    assert busy.value.status_code == 409
    MediaFile.objects.filter(key=ticket.key).update(upload_claimed_at=timezone.now() - dt.timedelta(hours=1))
    assert receive(ticket.key, b"x").size == 1


def test_lost_image_jobs_are_re_enqueued(workspace, monkeypatch):
    stale = AiImageJobFactory(workspace=workspace)
    AiImageJob.objects.filter(id=stale.id).update(updated_at=timezone.now() - dt.timedelta(minutes=10))
    AiImageJobFactory(workspace=workspace)  # just queued: its task is on its way
    expired = AiImageJobFactory(
        workspace=workspace, status="processing", lease_until=timezone.now() - dt.timedelta(seconds=1)
    )
    AiImageJobFactory(workspace=workspace, status="completed")
    sent: list[str] = []
    monkeypatch.setattr(generate_image, "delay", sent.append)
    assert resume_image_jobs() == 2
    assert sorted(sent) == sorted([stale.id, expired.id])
