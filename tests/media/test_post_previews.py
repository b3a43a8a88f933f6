"""A post made through the API with uploaded files: ``previewUrls`` holds each image's WebP
preview, or a still frame of each video (left out where none is made), and the lifecycle sweep
keeps what the post needs."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest
import requests
from django.utils import timezone
from PIL import Image

from media.lifecycle import collect_garbage
from media.models import MediaFile
from media.tasks import make_preview
from tests.factories.posts import account

pytestmark = pytest.mark.django_db(transaction=True)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def upload(api, name: str, mime: str, data: bytes) -> str:
    response = api.post("/api/v1/upload-urls", {"files": [{"fileName": name, "mimeType": mime}]}, format="json")
    assert response.status_code == 201, response.json()
    (item,) = response.json()["urls"]
    put = requests.put(item["uploadUrl"], data=data, headers={"Content-Type": mime}, timeout=10)
    assert put.status_code == 200, put.text
    return str(item["publicUrl"])


def test_preview_urls_on_a_post_and_the_files_kept_while_it_is_scheduled(api, workspace, live_media, local_media):
    masto = account(workspace, "MASTODON")
    photo = upload(api, "photo.jpg", "image/jpeg", (FIXTURES / "sample.jpg").read_bytes())
    broken = upload(api, "broken.png", "image/png", b"not really a png")
    when = (timezone.now() + dt.timedelta(days=2)).isoformat()

    created = api.post(
        "/api/v1/social-posts",
        {
            "contentType": "IMAGE",
            "text": "Two pictures",
            "timezone": "UTC",
            "platforms": ["MASTODON"],
            "mastodonConnectionIds": [masto.id],
            "mediaUrls": [photo, broken],
            "scheduledAt": when,
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    post_id = created.json()["postId"]
    rows = {row.public_url: row for row in MediaFile.objects.filter(workspace=workspace)}
    assert {url: row.first_referenced_at is not None for url, row in rows.items()} == {photo: True, broken: True}

    # Before the background job ran: no preview yet, so none listed (never a null).
    assert api.get(f"/api/v1/social-posts/{post_id}").json()["previewUrls"] == []

    assert make_preview(rows[photo].id) == "ready"
    assert make_preview(rows[broken].id) == "failed"
    preview_urls = api.get(f"/api/v1/social-posts/{post_id}").json()["previewUrls"]
    assert preview_urls == [f"{photo}.preview.webp"]  # the broken file has none
    fetched = requests.get(preview_urls[0], timeout=10)  # public: no Authorization header
    assert (fetched.status_code, fetched.headers["Content-Type"]) == (200, "image/webp")
    with Image.open(io.BytesIO(fetched.content)) as preview:
        assert preview.format == "WEBP" and max(preview.size) <= 720

    # The scheduled post keeps both files however long the sweep waits.
    assert collect_garbage(now=timezone.now() + dt.timedelta(days=30)).deleted == 0
    assert MediaFile.objects.filter(workspace=workspace).count() == 2
    assert requests.get(photo, timeout=10).status_code == 200


def test_a_video_post_previews_a_still_frame_of_the_video(api, workspace, live_media, local_media):
    masto = account(workspace, "MASTODON")
    clip = upload(api, "clip.mp4", "video/mp4", (FIXTURES / "sample.mp4").read_bytes())
    created = api.post(
        "/api/v1/social-posts",
        {
            "contentType": "VIDEO",
            "timezone": "UTC",
            "platforms": ["MASTODON"],
            "mastodonConnectionIds": [masto.id],
            "mediaUrls": [clip],
            "scheduledAt": (timezone.now() + dt.timedelta(days=2)).isoformat(),
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    record = api.get(f"/api/v1/social-posts/{created.json()['postId']}").json()
    assert record["previewUrls"] == [] and record["platforms"][0]["previewUrls"] == []

    row = MediaFile.objects.get(public_url=clip)
    assert row.preview_status == "queued"  # referencing the video queued its preview
    assert make_preview(row.id) == "ready"
    assert make_preview(row.id) == "ready"  # a second run changes nothing
    record = api.get(f"/api/v1/social-posts/{created.json()['postId']}").json()
    assert record["previewUrls"] == [f"{clip}.preview.webp"]
    assert record["platforms"][0]["mediaUrls"] == [clip]
    assert record["platforms"][0]["previewUrls"] == [f"{clip}.preview.webp"]
    fetched = requests.get(record["previewUrls"][0], timeout=10)
    assert (fetched.status_code, fetched.headers["Content-Type"]) == (200, "image/webp")
    with Image.open(io.BytesIO(fetched.content)) as frame:
        # The sample is 360x640 (9:16) made from ffmpeg's colour test source: a frame of it, not a blank.
        assert frame.format == "WEBP" and frame.size == (360, 640)
        assert len(frame.convert("RGB").getcolors(maxcolors=1 << 20) or []) > 8
