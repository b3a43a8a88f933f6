"""The S3 path against moto in server mode (a real S3-compatible HTTP endpoint)."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from botocore.exceptions import ClientError
from django.utils import timezone
from PIL import Image

from core.errors import ValidationFailed
from media.lifecycle import collect_garbage
from media.models import MediaFile
from media.previews import preview_make
from media.selectors import media_previews
from media.services import MediaInfo, media_resolve

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def mint(client, name: str, mime: str) -> dict[str, str]:
    response = client.post("/api/v1/upload-urls", {"files": [{"fileName": name, "mimeType": mime}]}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["urls"][0]


def test_presigned_put_is_signed_for_the_content_type_and_one_hour(api, workspace, s3):
    item = mint(api, "sample.png", "image/png")
    url = urlsplit(item["uploadUrl"])
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert f"{url.scheme}://{url.netloc}" == s3.endpoint
    assert url.path == f"/{s3.bucket}/{item['key']}"
    assert 3598 <= int(query["X-Amz-Expires"]) <= 3600
    assert query["X-Amz-SignedHeaders"].split(";") == ["content-type", "host"]
    assert item["publicUrl"] == f"{s3.endpoint}/{s3.bucket}/{item['key']}"
    assert item["key"].startswith(f"{workspace.id}/") and item["key"].endswith("/sample.png")


def test_put_resolve_and_fetch(api, workspace, other_workspace, s3):
    item = mint(api, "sample.png", "image/png")
    data = (FIXTURES / "sample.png").read_bytes()
    with pytest.raises(ValidationFailed) as before:
        media_resolve(workspace_id=workspace.id, urls=[item["publicUrl"]])
    assert before.value.code == "media_not_found"

    put = requests.put(item["uploadUrl"], data=data, headers={"Content-Type": "image/png"}, timeout=10)

    assert put.status_code == 200, put.text
    head = s3.client.head_object(Bucket=s3.bucket, Key=item["key"])
    assert head["ContentType"] == "image/png"
    assert media_resolve(workspace_id=workspace.id, urls=[item["publicUrl"]]) == [
        MediaInfo(url=item["publicUrl"], kind="image", mime_type="image/png", size=len(data))
    ]
    row = MediaFile.objects.get(key=item["key"])
    assert (row.size, row.uploaded_at is not None) == (len(data), True)
    fetched = requests.get(item["publicUrl"], timeout=10)
    assert (fetched.status_code, fetched.headers["Content-Type"], fetched.content) == (200, "image/png", data)
    with pytest.raises(ValidationFailed) as foreign:
        media_resolve(workspace_id=other_workspace.id, urls=[item["publicUrl"]])
    assert foreign.value.code == "media_not_found"


def test_an_oversize_object_is_refused_when_a_post_references_it(api, workspace, s3, settings):
    item = mint(api, "clip.mp4", "video/mp4")
    requests.put(item["uploadUrl"], data=b"x" * 64, headers={"Content-Type": "video/mp4"}, timeout=10)
    settings.MEDIA_MAX_UPLOAD_BYTES = 63
    with pytest.raises(ValidationFailed) as too_large:
        media_resolve(workspace_id=workspace.id, urls=[item["publicUrl"]])
    assert too_large.value.code == "media_too_large"
    assert too_large.value.message == [f"mediaUrls: {item['publicUrl']} is larger than the limit of 63 bytes"]


def test_preview_and_collection_on_s3(api, workspace, s3):
    item = mint(api, "sample.jpg", "image/jpeg")
    requests.put(item["uploadUrl"], data=(FIXTURES / "sample.jpg").read_bytes(), headers={"Content-Type": "image/jpeg"})
    media_resolve(workspace_id=workspace.id, urls=[item["publicUrl"]])
    row = MediaFile.objects.get(key=item["key"])
    assert preview_make(media_file_id=row.id) == "ready"
    preview_url = media_previews(urls=[item["publicUrl"]])[item["publicUrl"]]
    fetched = requests.get(preview_url, timeout=10)
    assert fetched.headers["Content-Type"] == "image/webp"
    assert max(Image.open(io.BytesIO(fetched.content)).size) <= 720

    later = timezone.now() + dt.timedelta(days=8)
    assert collect_garbage(now=later).deleted == 1
    assert collect_garbage(now=later).deleted == 0
    for key in (item["key"], f"{item['key']}.preview.webp"):
        with pytest.raises(ClientError):
            s3.client.head_object(Bucket=s3.bucket, Key=key)
    assert not MediaFile.objects.filter(id=row.id).exists()


def test_public_base_url_is_used_when_configured(api, s3, settings):
    settings.S3_PUBLIC_BASE_URL = "https://cdn.example.test/media/"
    item = mint(api, "a.pdf", "application/pdf")
    assert item["publicUrl"] == f"https://cdn.example.test/media/{item['key']}"


def _s3_would_accept(upload_url: str, *, content_type: str, at: dt.datetime) -> bool:
    """S3's own check of a presigned PUT (moto's server does not verify query-string
    signatures): the expiry, then the SigV4 signature recomputed over the request as sent."""
    import time_machine
    from botocore.auth import S3SigV4QueryAuth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    parts = urlsplit(upload_url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    signed_at = dt.datetime.strptime(query["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.UTC)
    expires = int(query["X-Amz-Expires"])
    if at > signed_at + dt.timedelta(seconds=expires):
        return False
    request = AWSRequest(
        method="PUT", url=f"{parts.scheme}://{parts.netloc}{parts.path}", headers={"Content-Type": content_type}
    )
    with time_machine.travel(signed_at, tick=False):
        S3SigV4QueryAuth(Credentials("testing", "testing"), "s3", "us-east-1", expires=expires).add_auth(request)
    resigned = {k: v[0] for k, v in parse_qs(urlsplit(request.url).query).items()}
    return resigned["X-Amz-Signature"] == query["X-Amz-Signature"]


def test_the_presigned_put_is_refused_for_another_content_type_or_after_an_hour(api, s3):
    item = mint(api, "photo.jpg", "image/jpeg")
    now = timezone.now()
    assert _s3_would_accept(item["uploadUrl"], content_type="image/jpeg", at=now)
    assert not _s3_would_accept(item["uploadUrl"], content_type="image/png", at=now)
    assert not _s3_would_accept(item["uploadUrl"], content_type="application/octet-stream", at=now)
    assert _s3_would_accept(item["uploadUrl"], content_type="image/jpeg", at=now + dt.timedelta(minutes=59))
    assert not _s3_would_accept(item["uploadUrl"], content_type="image/jpeg", at=now + dt.timedelta(hours=1, seconds=2))
    # The presigned URL needs no Authorization header: moto stores what is PUT to it.
    put = requests.put(item["uploadUrl"], data=b"\xff\xd8\xff", headers={"Content-Type": "image/jpeg"}, timeout=10)
    assert put.status_code == 200
    assert s3.client.head_object(Bucket=s3.bucket, Key=item["key"])["ContentType"] == "image/jpeg"
