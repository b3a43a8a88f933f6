from __future__ import annotations

import datetime as dt
import re
from urllib.parse import quote, urlencode

import pytest
import time_machine

from media.files import sanitize_file_name
from media.models import MediaFile
from media.storage import local_upload_signature

pytestmark = pytest.mark.django_db

NOW = dt.datetime(2026, 3, 1, 12, 0, 0, tzinfo=dt.UTC)
EXPIRES = NOW + dt.timedelta(hours=1)


def _expected_item(file_name: str, mime_type: str, key: str, base: str) -> dict[str, str]:
    expires = int(EXPIRES.timestamp())
    query = urlencode(
        {
            "expires": expires,
            "contentType": mime_type,
            "signature": local_upload_signature(key=key, expires=expires, content_type=mime_type),
        }
    )
    return {
        "fileName": file_name,
        "uploadUrl": f"{base}/uploads/{quote(key)}?{query}",
        "publicUrl": f"{base}/media/{quote(key)}",
        "key": key,
        "expiresAt": "2026-03-01T13:00:00.000Z",
    }


def test_mints_one_url_per_file_in_request_order(api, workspace, settings):
    settings.PUBLIC_BASE_URL = "https://media.example.test"
    files = [
        {"fileName": "Summer Photo.JPG", "mimeType": "image/jpeg"},
        {"fileName": "clip.mov", "mimeType": "video/quicktime"},
        {
            "fileName": "deck.pptx",
            "mimeType": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        },
    ]
    with time_machine.travel(NOW, tick=False):
        response = api.post("/api/v1/upload-urls", {"files": files}, format="json")
    assert response.status_code == 201, response.json()
    keys = [item["key"] for item in response.json()["urls"]]
    for key, name in zip(keys, ["Summer-Photo.jpg", "clip.mov", "deck.pptx"], strict=True):
        assert re.fullmatch(rf"{workspace.id}/[0-9a-f]{{32}}/{re.escape(name)}", key)
    assert len(set(keys)) == 3
    assert response.json() == {
        "urls": [
            _expected_item(f["fileName"], f["mimeType"], key, "https://media.example.test")
            for f, key in zip(files, keys, strict=True)
        ]
    }
    rows = {row.key: row for row in MediaFile.objects.filter(workspace=workspace)}
    assert {k: (rows[k].kind, rows[k].mime_type, rows[k].uploaded_at) for k in keys} == {
        keys[0]: ("image", "image/jpeg", None),
        keys[1]: ("video", "video/quicktime", None),
        keys[2]: ("document", files[2]["mimeType"], None),
    }


def test_contributor_may_upload(client_for):
    response = client_for("contributor").post(
        "/api/v1/upload-urls", {"files": [{"fileName": "a.pdf", "mimeType": "application/pdf"}]}, format="json"
    )
    assert response.status_code == 201


@pytest.mark.parametrize(
    ("body", "messages"),
    [
        ({"files": []}, ["files: This list may not be empty."]),
        ({}, ["files: This field is required."]),
        ({"files": "a.jpg"}, ['files: Expected a list of items but got type "str".']),
        (
            {"files": [{"fileName": "a.jpg", "mimeType": "image/jpeg"}] * 21},
            ["files: Ensure this field has no more than 20 elements."],
        ),
        (
            {"files": [{"fileName": "a.gif", "mimeType": "image/gif"}]},
            ['files[0].mimeType: "image/gif" is not a valid choice.'],
        ),
        (
            {"files": [{"fileName": "", "mimeType": "image/png"}, {"mimeType": "image/png"}]},
            ["files[0].fileName: This field may not be blank.", "files[1].fileName: This field is required."],
        ),
        (
            {"files": [{"fileName": "x" * 256, "mimeType": "image/png"}]},
            ["files[0].fileName: Ensure this field has no more than 255 characters."],
        ),
    ],
)
def test_validation_errors_name_the_field(api, body, messages):
    response = api.post("/api/v1/upload-urls", body, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "statusCode": 400,
        "error": "Bad Request",
        "message": messages,
        "code": "validation_error",
    }
    assert MediaFile.objects.count() == 0


def test_anonymous_is_401(anon):
    response = anon.post("/api/v1/upload-urls", {"files": []}, format="json")
    assert response.status_code == 401
    assert response.json()["message"] == "API key is invalid or missing"


def test_viewer_is_403_with_required_permission(client_for):
    response = client_for("viewer").post(
        "/api/v1/upload-urls", {"files": [{"fileName": "a.pdf", "mimeType": "application/pdf"}]}, format="json"
    )
    assert response.status_code == 403
    assert response.json() == {
        "statusCode": 403,
        "error": "Forbidden",
        "message": "This operation requires the media.upload permission",
        "code": "permission_denied",
        "requiredPermission": "media.upload",
        "role": "viewer",
        "tokenType": "api_token",
    }


def test_idempotency_key_replays_the_first_response(api):
    body = {"files": [{"fileName": "a.png", "mimeType": "image/png"}]}
    first = api.post("/api/v1/upload-urls", body, format="json", HTTP_IDEMPOTENCY_KEY="upload-1")
    second = api.post("/api/v1/upload-urls", body, format="json", HTTP_IDEMPOTENCY_KEY="upload-1")
    assert first.status_code == second.status_code == 201
    assert second.json() == first.json()
    assert second["Idempotent-Replayed"] == "true"
    assert MediaFile.objects.count() == 1


@pytest.mark.parametrize(
    ("name", "mime", "expected"),
    [
        ("photo.JPG", "image/jpeg", "photo.jpg"),
        ("../../etc/passwd", "application/pdf", "passwd.pdf"),
        ("C:\\Users\\me\\résumé final.docx", "application/msword", "resume-final.docx"),
        ("no extension", "image/png", "no-extension.png"),
        (".hidden", "image/webp", "hidden.webp"),
        ("weird?name#.mp4", "video/mp4", "weird-name.mp4"),
        ("日本.png", "image/png", "file.png"),
        ("a." + "b" * 30, "image/png", "a.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.png"),
    ],
)
def test_file_names_are_sanitized_keeping_their_extension(name, mime, expected):
    assert sanitize_file_name(name, mime) == expected
