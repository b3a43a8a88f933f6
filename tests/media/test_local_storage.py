"""The local storage path against the web process over real HTTP: mint, PUT, fetch."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
import time_machine
from PIL import Image

from core.errors import ValidationFailed
from media.models import MediaFile
from media.selectors import media_previews
from media.services import MediaInfo, media_resolve
from media.tasks import make_preview

pytestmark = pytest.mark.django_db(transaction=True)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def mint(client, *files: tuple[str, str]) -> list[dict[str, str]]:
    response = client.post(
        "/api/v1/upload-urls",
        {"files": [{"fileName": name, "mimeType": mime} for name, mime in files]},
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()["urls"]


def test_put_then_fetch_the_public_url(api, workspace, live_media, local_media):
    (item,) = mint(api, ("sample.png", "image/png"))
    assert item["uploadUrl"].startswith(f"{live_media}/uploads/{workspace.id}/")
    data = (FIXTURES / "sample.png").read_bytes()

    put = requests.put(item["uploadUrl"], data=data, headers={"Content-Type": "image/png"}, timeout=10)

    assert put.status_code == 200, put.text
    assert (local_media / item["key"]).read_bytes() == data
    row = MediaFile.objects.get(key=item["key"])
    assert (row.size, row.uploaded_at is not None) == (len(data), True)
    fetched = requests.get(item["publicUrl"], timeout=10)
    assert fetched.status_code == 200
    assert fetched.headers["Content-Type"] == "image/png"
    assert fetched.content == data
    assert "Authorization" not in fetched.request.headers


def test_a_second_put_is_refused(api, live_media):
    (item,) = mint(api, ("doc.pdf", "application/pdf"))
    first = requests.put(item["uploadUrl"], data=b"%PDF-1.4 one", headers={"Content-Type": "application/pdf"})
    second = requests.put(item["uploadUrl"], data=b"%PDF-1.4 two", headers={"Content-Type": "application/pdf"})
    assert first.status_code == 200
    assert second.status_code == 409
    assert second.json()["code"] == "upload_already_used"
    assert requests.get(item["publicUrl"], timeout=10).content == b"%PDF-1.4 one"


def test_wrong_content_type_is_refused_and_the_url_stays_usable(api, live_media, local_media):
    (item,) = mint(api, ("photo.jpg", "image/jpeg"))
    wrong = requests.put(item["uploadUrl"], data=b"\xff\xd8\xff", headers={"Content-Type": "image/png"}, timeout=10)
    assert wrong.status_code == 400
    assert wrong.json() == {
        "statusCode": 400,
        "error": "Bad Request",
        "message": "Content-Type must be image/jpeg, the type this upload URL was issued for",
        "code": "content_type_mismatch",
    }
    assert not (local_media / item["key"]).exists()
    assert requests.get(item["publicUrl"], timeout=10).status_code == 404
    right = requests.put(item["uploadUrl"], data=b"\xff\xd8\xff", headers={"Content-Type": "image/jpeg"}, timeout=10)
    assert right.status_code == 200


def test_the_signature_covers_key_type_and_expiry(api, live_media):
    (item,) = mint(api, ("photo.jpg", "image/jpeg"))
    url = urlsplit(item["uploadUrl"])
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    base = f"{url.scheme}://{url.netloc}{url.path}"
    tampered = [
        {**query, "contentType": "image/png"},
        {**query, "expires": str(int(query["expires"]) + 3600)},
        {**query, "signature": "0" * 64},
        {k: v for k, v in query.items() if k != "signature"},
        {**query, "signature": "é" * 64},  # non-ASCII: refused, never a 500
        {**query, "expires": "١٢٣"},  # Arabic-Indic digits int() would accept
    ]
    for params in tampered:
        response = requests.put(
            base, params=params, data=b"x", headers={"Content-Type": params.get("contentType", "image/jpeg")}
        )
        assert response.status_code == 403, params
        assert response.json()["code"] == "invalid_upload_signature"
    other_key = base.replace(item["key"].split("/")[1], "0" * 32)
    response = requests.put(other_key, params=query, data=b"x", headers={"Content-Type": "image/jpeg"})
    assert response.status_code == 403


def test_an_expired_url_is_refused(api, live_media):
    (item,) = mint(api, ("photo.jpg", "image/jpeg"))
    later = dt.datetime.now(tz=dt.UTC) + dt.timedelta(hours=1, minutes=1)
    with time_machine.travel(later):
        response = requests.put(item["uploadUrl"], data=b"x", headers={"Content-Type": "image/jpeg"}, timeout=10)
    assert response.status_code == 403
    assert response.json() == {
        "statusCode": 403,
        "error": "Forbidden",
        "message": "Upload URL has expired; request a new one",
        "code": "upload_url_expired",
    }
    assert MediaFile.objects.get(key=item["key"]).uploaded_at is None


def test_an_oversize_file_is_refused(api, live_media, settings, local_media):
    settings.MEDIA_MAX_UPLOAD_BYTES = 10
    (item,) = mint(api, ("clip.mp4", "video/mp4"))
    too_big = requests.put(item["uploadUrl"], data=b"x" * 11, headers={"Content-Type": "video/mp4"}, timeout=10)
    assert too_big.status_code == 413
    assert too_big.json()["code"] == "file_too_large"
    assert not (local_media / item["key"]).exists()
    just_fits = requests.put(item["uploadUrl"], data=b"x" * 10, headers={"Content-Type": "video/mp4"}, timeout=10)
    assert just_fits.status_code == 200


def test_an_empty_body_is_refused(api, live_media):
    (item,) = mint(api, ("photo.jpg", "image/jpeg"))
    response = requests.put(item["uploadUrl"], data=b"", headers={"Content-Type": "image/jpeg"}, timeout=10)
    assert response.status_code == 400
    assert response.json()["code"] == "empty_upload"


def test_existence_check_for_posts(api, workspace, other_workspace, live_media):
    image, document = mint(api, ("sample.png", "image/png"), ("deck.pdf", "application/pdf"))
    with pytest.raises(ValidationFailed) as missing:
        media_resolve(workspace_id=workspace.id, urls=[image["publicUrl"]])
    assert missing.value.code == "media_not_found"
    assert missing.value.message == [
        f"mediaUrls: {image['publicUrl']} was not found in this workspace's uploads (PUT the file first)"
    ]
    png = (FIXTURES / "sample.png").read_bytes()
    requests.put(image["uploadUrl"], data=png, headers={"Content-Type": "image/png"}, timeout=10)
    requests.put(document["uploadUrl"], data=b"%PDF-1.4", headers={"Content-Type": "application/pdf"}, timeout=10)

    infos = media_resolve(workspace_id=workspace.id, urls=[document["publicUrl"], image["publicUrl"]])

    assert infos == [
        MediaInfo(url=document["publicUrl"], kind="document", mime_type="application/pdf", size=8),
        MediaInfo(url=image["publicUrl"], kind="image", mime_type="image/png", size=len(png)),
    ]
    with pytest.raises(ValidationFailed) as foreign:
        media_resolve(workspace_id=other_workspace.id, urls=[image["publicUrl"]])
    assert foreign.value.code == "media_not_found"


def test_unknown_or_not_yet_uploaded_files_are_404(api, live_media):
    (item,) = mint(api, ("photo.jpg", "image/jpeg"))
    assert requests.get(item["publicUrl"], timeout=10).status_code == 404
    assert requests.get(f"{live_media}/media/nope/nothing.jpg", timeout=10).status_code == 404
    assert requests.get(f"{live_media}/media/../../etc/passwd", timeout=10).status_code == 404


def test_the_preview_is_made_and_served(api, workspace, live_media):
    (item,) = mint(api, ("sample.jpg", "image/jpeg"))
    original = (FIXTURES / "sample.jpg").read_bytes()
    requests.put(item["uploadUrl"], data=original, headers={"Content-Type": "image/jpeg"}, timeout=10)
    assert media_previews(urls=[item["publicUrl"]]) == {item["publicUrl"]: None}  # none made yet
    media_resolve(workspace_id=workspace.id, urls=[item["publicUrl"]])
    media_file = MediaFile.objects.get(key=item["key"])
    assert media_file.preview_status == "queued"

    assert make_preview(media_file.id) == "ready"
    assert make_preview(media_file.id) == "ready"

    preview_url = media_previews(urls=[item["publicUrl"]])[item["publicUrl"]]
    assert preview_url == f"{item['publicUrl']}.preview.webp"
    fetched = requests.get(preview_url, timeout=10)
    assert fetched.headers["Content-Type"] == "image/webp"
    with Image.open(io.BytesIO(fetched.content)) as preview, Image.open(io.BytesIO(original)) as source:
        assert preview.format == "WEBP"
        assert max(preview.size) <= 720
        assert abs(preview.size[0] / preview.size[1] - source.size[0] / source.size[1]) < 0.02
