"""The services the posts app calls: media_resolve, media_mark_referenced, media_previews."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.errors import ValidationFailed
from media.models import MediaFile
from media.services import MediaInfo, media_mark_referenced, media_previews, media_resolve
from tests.factories.media import UPLOADED_SIZE, MediaFileFactory

pytestmark = pytest.mark.django_db


def stored(workspace, local_media: Path, *, content: bytes = b"bytes", **kwargs) -> MediaFile:
    """A row whose object really is in local storage (uploaded or not yet seen as such)."""
    row = MediaFileFactory(workspace=workspace, **kwargs)
    path = local_media / row.key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return row


def test_resolve_keeps_order_and_duplicates(workspace, local_media):
    pdf = stored(workspace, local_media, uploaded=True, file_name="a.pdf", mime_type="application/pdf", kind="document")
    jpg = stored(workspace, local_media, uploaded=True)
    infos = media_resolve(workspace_id=workspace.id, urls=[jpg.public_url, pdf.public_url, jpg.public_url])
    assert infos == [
        MediaInfo(url=jpg.public_url, kind="image", mime_type="image/jpeg", size=UPLOADED_SIZE),
        MediaInfo(url=pdf.public_url, kind="document", mime_type="application/pdf", size=UPLOADED_SIZE),
        MediaInfo(url=jpg.public_url, kind="image", mime_type="image/jpeg", size=UPLOADED_SIZE),
    ]
    assert media_resolve(workspace_id=workspace.id, urls=[]) == []


def test_resolve_records_size_the_first_time_the_object_is_seen(workspace, local_media):
    row = stored(workspace, local_media, content=b"12345", file_name="v.mp4", mime_type="video/mp4", kind="video")
    assert media_resolve(workspace_id=workspace.id, urls=[row.public_url]) == [
        MediaInfo(url=row.public_url, kind="video", mime_type="video/mp4", size=5)
    ]
    row.refresh_from_db()
    assert row.size == 5 and row.uploaded_at is not None


def test_resolve_names_every_missing_url(workspace, other_workspace, local_media):
    ok = stored(workspace, local_media, uploaded=True)
    foreign = stored(other_workspace, local_media, uploaded=True)
    never_put = MediaFileFactory(workspace=workspace)
    unknown = "https://elsewhere.example/x.jpg"
    with pytest.raises(ValidationFailed) as error:
        media_resolve(
            workspace_id=workspace.id, urls=[ok.public_url, foreign.public_url, never_put.public_url, unknown]
        )
    assert error.value.code == "media_not_found"
    assert error.value.message == [
        f"mediaUrls: {url} was not found in this workspace's uploads (PUT the file first)"
        for url in (foreign.public_url, never_put.public_url, unknown)
    ]


@pytest.mark.parametrize("count", [1, 30])
def test_resolve_uses_a_constant_number_of_queries(workspace, local_media, count, django_capture_on_commit_callbacks):
    rows = [stored(workspace, local_media) for _ in range(count)]  # none seen as uploaded yet: the worst case
    with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks() as callbacks:
        media_resolve(workspace_id=workspace.id, urls=[r.public_url for r in rows])
    assert len(queries) == 3  # select, bulk update of sizes (and probe status), preview queueing
    assert len(callbacks) == 2  # the previews' messages and the probes'
    assert MediaFile.objects.filter(preview_status="queued").count() == count
    assert MediaFile.objects.filter(probe_status="queued").count() == count


def test_mark_referenced_sets_the_first_time_only(workspace, local_media):
    row = stored(workspace, local_media, uploaded=True)
    media_mark_referenced(workspace_id=workspace.id, urls=[row.public_url, row.public_url])
    row.refresh_from_db()
    first = row.first_referenced_at
    assert first is not None
    media_mark_referenced(workspace_id=workspace.id, urls=[row.public_url])
    row.refresh_from_db()
    assert row.first_referenced_at == first
    media_mark_referenced(workspace_id=workspace.id, urls=[])


def test_mark_referenced_refuses_files_that_are_gone_or_foreign(workspace, other_workspace, local_media):
    foreign = stored(other_workspace, local_media, uploaded=True)
    with pytest.raises(ValidationFailed) as error:
        media_mark_referenced(workspace_id=workspace.id, urls=[foreign.public_url])
    assert error.value.code == "media_not_found"
    foreign.refresh_from_db()
    assert foreign.first_referenced_at is None


def test_previews_map_each_url_in_one_query(workspace, local_media, settings):
    ready = MediaFileFactory(workspace=workspace, uploaded=True, preview_status="ready")
    ready.preview_key = f"{ready.key}.preview.webp"
    ready.save()
    pending = MediaFileFactory(workspace=workspace, uploaded=True, preview_status="queued")
    with CaptureQueriesContext(connection) as queries:
        previews = media_previews(urls=[pending.public_url, ready.public_url, "https://x.example/y.png"])
    assert len(queries) == 1
    assert previews == {
        pending.public_url: None,
        ready.public_url: f"{settings.PUBLIC_BASE_URL}/media/{ready.key}.preview.webp",
        "https://x.example/y.png": None,
    }
    assert media_previews(urls=[]) == {}


def test_a_document_broken_image_or_broken_video_gets_no_preview(workspace, local_media):
    from media.previews import preview_make

    document = stored(
        workspace, local_media, uploaded=True, file_name="d.pdf", mime_type="application/pdf", kind="document"
    )
    video = stored(workspace, local_media, uploaded=True, file_name="v.mp4", mime_type="video/mp4", kind="video")
    broken = stored(workspace, local_media, uploaded=True, content=b"not an image")
    assert preview_make(media_file_id=document.id) == "n/a"
    assert preview_make(media_file_id=video.id) == "failed"  # its bytes are no video
    assert preview_make(media_file_id=broken.id) == "failed"
    assert preview_make(media_file_id=broken.id) == "failed"
    assert preview_make(media_file_id="med_missing") == "gone"
    urls = [document.public_url, video.public_url, broken.public_url]
    assert media_previews(urls=urls) == dict.fromkeys(urls)
