"""The probe as the worker runs it: queued when a file is stored, recorded once on the row
(ready, unusable with its reason, or n/a for a document), shown by GET /media-files."""

from __future__ import annotations

import datetime as dt
import io
import os

import pytest
import requests
from celery.exceptions import SoftTimeLimitExceeded
from django.utils import timezone

from core.fields import format_instant
from media import probing, tasks
from media.enqueue import PROBE_MEDIA
from media.lifecycle import collect_garbage
from media.models import MediaFile
from media.services import media_resolve
from media.storage import get_media_storage
from media.tasks import probe_media
from tests.factories.media import MediaFileFactory
from tests.media import corpus

pytestmark = pytest.mark.django_db


def stored(
    workspace, data: bytes, *, name: str = "photo.png", mime: str = "image/png", kind: str = "image"
) -> MediaFile:
    row = MediaFileFactory(workspace=workspace, file_name=name, mime_type=mime, kind=kind, uploaded=True)
    get_media_storage().save(row.key, io.BytesIO(data), content_type=mime)
    return row


@pytest.fixture
def probes_run(monkeypatch) -> list[str]:
    """Each child probe started, by kind (the real one runs)."""
    started: list[str] = []
    real = probing.probe_file

    def counting(*, kind: str, path: str):
        started.append(kind)
        return real(kind=kind, path=path)

    monkeypatch.setattr(probing, "probe_file", counting)
    return started


def test_an_image_is_probed_once_and_run_twice_gives_the_same_result(workspace, probes_run):
    row = stored(workspace, corpus.image((1080, 1350), "PNG", "RGBA"))
    assert probe_media(row.id) == "ready"
    row.refresh_from_db()
    first = (row.probe_status, row.probe, row.probe_error)
    assert probe_media(row.id) == "ready"
    row.refresh_from_db()
    assert (row.probe_status, row.probe, row.probe_error) == first
    assert probes_run == ["image"]
    assert row.probe == {
        "type": "image",
        "format": "PNG",
        "width": 1080,
        "height": 1350,
        "orientation": 1,
        "displayWidth": 1080,
        "displayHeight": 1350,
        "colorMode": "RGBA",
        "frameCount": 1,
        "animated": False,
        "durationSeconds": None,
    }


def test_a_video_is_probed(workspace, tmp_path, probes_run):
    row = stored(workspace, corpus.video(tmp_path / "v.mp4", audio=True), name="v.mp4", mime="video/mp4", kind="video")
    assert probe_media(row.id) == "ready"
    assert probe_media(row.id) == "ready"
    row.refresh_from_db()
    assert (row.probe["videoCodec"], row.probe["audioCodec"], row.probe["hasAudio"]) == ("h264", "aac", True)
    assert probes_run == ["video"]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (os.urandom(32 * 1024), "not a readable MP4 or QuickTime file"),
        (corpus.image((200, 200), "PNG"), "not a readable MP4 or QuickTime file"),
    ],
    ids=["random-bytes", "an-image-named-mp4"],
)
def test_an_unreadable_video_is_marked_unusable_with_its_reason_once(workspace, probes_run, data, reason):
    row = stored(workspace, data, name="clip.mp4", mime="video/mp4", kind="video")
    assert probe_media(row.id) == "unusable"
    assert probe_media(row.id) == "unusable"
    row.refresh_from_db()
    assert (row.probe_status, row.probe, row.probe_error) == ("unusable", None, reason)
    assert probes_run == ["video"]


def test_a_decompression_bomb_is_marked_unusable(workspace):
    row = stored(workspace, corpus.decompression_bomb_png())
    assert probe_media(row.id) == "unusable"
    row.refresh_from_db()
    assert row.probe_error == "the image has more than 67108864 pixels"


def test_documents_are_not_probed(workspace, probes_run):
    row = stored(workspace, b"%PDF-1.4\n", name="deck.pdf", mime="application/pdf", kind="document")
    assert probe_media(row.id) == "n/a"
    assert probe_media(row.id) == "n/a"
    assert probes_run == []


def test_a_file_not_stored_yet_or_gone_is_left_alone(workspace, probes_run):
    pending = MediaFileFactory(workspace=workspace)
    assert probe_media(pending.id) == ""
    assert probe_media("med_nothing") == "gone"
    missing = MediaFileFactory(workspace=workspace, uploaded=True)  # row says stored, the bytes are not there
    assert probe_media(missing.id) == ""
    assert probes_run == []


def test_a_probe_past_the_soft_time_limit_marks_the_file_unusable(workspace, monkeypatch):
    row = stored(workspace, corpus.image((10, 10), "PNG"))

    def too_slow(*, media_file_id: str) -> str:
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(tasks, "media_probe", too_slow)
    assert probe_media(row.id) == "unusable"
    row.refresh_from_db()
    assert row.probe_error == "probing the file took too long"


def test_the_first_result_written_wins(workspace):
    row = stored(workspace, corpus.image((10, 10), "PNG"))
    assert probing.media_probe_failed(media_file_id=row.id, reason="first") == "unusable"
    assert probe_media(row.id) == "unusable"
    row.refresh_from_db()
    assert row.probe_error == "first"


def test_resolving_a_newly_stored_file_queues_its_probe_after_commit(
    workspace, monkeypatch, django_capture_on_commit_callbacks
):
    sent: list[tuple[str, list[str]]] = []
    monkeypatch.setattr(probing, "enqueue_each", lambda name, ids: sent.append((name, list(ids))))
    row = MediaFileFactory(workspace=workspace, file_name="p.png", mime_type="image/png")
    get_media_storage().save(row.key, io.BytesIO(corpus.image((10, 10), "PNG")), content_type="image/png")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        media_resolve(workspace_id=workspace.id, urls=[row.public_url])
        assert sent == []  # not before the commit
    assert len(callbacks) == 2  # the preview and the probe
    row.refresh_from_db()
    assert row.probe_status == "queued"
    assert sent == [(PROBE_MEDIA, [row.id])]
    with django_capture_on_commit_callbacks(execute=True):
        media_resolve(workspace_id=workspace.id, urls=[row.public_url])
    assert sent == [(PROBE_MEDIA, [row.id])]  # seen stored already: not queued again


def test_the_sweep_queues_files_never_probed_and_probes_lost_long_ago(
    workspace, monkeypatch, django_capture_on_commit_callbacks
):
    sent: list[str] = []
    monkeypatch.setattr(probing, "enqueue_each", lambda name, ids: sent.extend(ids))
    never = MediaFileFactory(workspace=workspace, uploaded=True, keep_until=timezone.now() + dt.timedelta(days=1))
    lost = MediaFileFactory(
        workspace=workspace,
        uploaded=True,
        probe_status="queued",
        probe_queued_at=timezone.now() - dt.timedelta(hours=1),
    )
    recent = MediaFileFactory(workspace=workspace, uploaded=True, probe_status="queued", probe_queued_at=timezone.now())
    done = MediaFileFactory(workspace=workspace, uploaded=True, probe_status="ready", probe={"type": "image"})
    not_stored = MediaFileFactory(workspace=workspace)
    with django_capture_on_commit_callbacks(execute=True):
        sweep = collect_garbage()
    assert sweep.probes_queued == 2
    assert sorted(sent) == sorted([never.id, lost.id])
    assert MediaFile.objects.get(id=never.id).probe_status == "queued"
    assert {recent.id, done.id, not_stored.id}.isdisjoint(sent)


@pytest.mark.django_db(transaction=True)
def test_a_local_upload_queues_its_probe(api, live_media, monkeypatch):
    sent: list[str] = []
    monkeypatch.setattr(probing, "enqueue_each", lambda name, ids: sent.extend(ids))
    response = api.post(
        "/api/v1/upload-urls", {"files": [{"fileName": "a.png", "mimeType": "image/png"}]}, format="json"
    )
    (item,) = response.json()["urls"]
    put = requests.put(
        item["uploadUrl"], data=corpus.image((30, 20), "PNG"), headers={"Content-Type": "image/png"}, timeout=10
    )
    assert put.status_code == 200
    row = MediaFile.objects.get(key=item["key"])
    assert (row.probe_status, sent) == ("queued", [row.id])
    assert probe_media(row.id) == "ready"
    body = api.get("/api/v1/media-files", {"url": item["publicUrl"]}).json()
    assert body["probeStatus"] == "ready"
    assert (body["probe"]["width"], body["probe"]["height"]) == (30, 20)


# GET /media-files


def body_of(row: MediaFile, **changes: object) -> dict[str, object]:
    return {
        "url": row.public_url,
        "fileName": row.file_name,
        "mimeType": row.mime_type,
        "kind": row.kind,
        "size": row.size,
        "uploadedAt": format_instant(row.uploaded_at) if row.uploaded_at else None,
        "probeStatus": "pending",
        "probe": None,
        "probeError": None,
        **changes,
    }


def test_get_shows_a_ready_probe_with_every_field(api, workspace, tmp_path):
    row = stored(
        workspace,
        corpus.video(tmp_path / "v.mov", container="mov", rotation=90),
        name="v.mov",
        mime="video/quicktime",
        kind="video",
    )
    probe_media(row.id)
    row.refresh_from_db()
    response = api.get("/api/v1/media-files", {"url": row.public_url})
    assert response.status_code == 200
    probe = {
        "type": "video",
        "width": 160,
        "height": 90,
        "displayWidth": 90,
        "displayHeight": 160,
        "frameCount": 25,
        "durationSeconds": row.probe["durationSeconds"],
        "format": None,
        "orientation": None,
        "colorMode": None,
        "animated": None,
        "container": "quicktime",
        "videoCodec": "h264",
        "audioCodec": None,
        "hasAudio": False,
        "frameRate": 25.0,
        "bitRate": row.probe["bitRate"],
        "rotation": 90,
    }
    assert response.json() == body_of(row, probeStatus="ready", probe=probe)


def test_get_shows_pending_unusable_and_not_applicable(api, workspace):
    queued = MediaFileFactory(workspace=workspace, probe_status="queued")
    assert api.get("/api/v1/media-files", {"url": queued.public_url}).json() == body_of(queued)
    broken = MediaFileFactory(
        workspace=workspace, uploaded=True, probe_status="unusable", probe_error="not a readable MP4 or QuickTime file"
    )
    assert api.get("/api/v1/media-files", {"url": broken.public_url}).json() == body_of(
        broken, probeStatus="unusable", probeError="not a readable MP4 or QuickTime file"
    )
    document = MediaFileFactory(workspace=workspace, uploaded=True, kind="document", probe_status="n/a")
    assert api.get("/api/v1/media-files", {"url": document.public_url}).json() == body_of(document, probeStatus="n/a")


def test_get_errors(api, anon, client_for, workspace, other_workspace):
    foreign = MediaFileFactory(workspace=other_workspace, uploaded=True)
    response = api.get("/api/v1/media-files", {"url": foreign.public_url})
    assert (response.status_code, response.json()["code"]) == (404, "media_not_found")
    assert api.get("/api/v1/media-files", {"url": "nul\x00"}).status_code in (400, 404)
    missing = api.get("/api/v1/media-files")
    assert (missing.status_code, missing.json().get("code")) == (400, "validation_error")
    own = MediaFileFactory(workspace=workspace)
    assert anon.get("/api/v1/media-files", {"url": own.public_url}).status_code == 401
    viewer = client_for("viewer").get("/api/v1/media-files", {"url": own.public_url})
    assert (viewer.status_code, viewer.json()["requiredPermission"]) == (403, "media.upload")
