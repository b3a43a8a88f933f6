"""The hosted connect pages answer hostile input with a 4xx HTML error page, never a 500."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "path",
    [
        "/connect/%00",
        "/connect/%ff%fe",
        "/connect/%00/MASTODON",
        "/connect/tok/%00",
        "/connect/" + "a" * 5000,
        "/connect/callback/%00",
        "/connect/callback/MASTODON?state=%00&code=x",
        "/connect/callback/MASTODON?state=x&code=%00",
        "/connect/callback/MASTODON?state=%ff%fe&code=%ff",
        "/connect/callback/MASTODON?error=%00&state=x",
        "/connect/callback/MASTODON?state=" + "a" * 10000,
    ],
)
def test_hostile_connect_requests_get_an_error_page(path: str) -> None:
    response = Client().get(path)
    assert 400 <= response.status_code < 500, (path, response.status_code)
    assert response["Content-Type"].startswith("text/html")


def test_a_credentials_post_with_nul_bytes_is_refused() -> None:
    client = Client(enforce_csrf_checks=False)
    response = client.post("/connect/%00/TELEGRAM", {"botToken": "\x00", "chatId": "\x00"})
    assert 400 <= response.status_code < 500


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "/api/v1/social-accounts/%00/check"),
        ("get", "/api/v1/social-accounts/%00/instagram-audio?audioType=music"),
        ("get", "/api/v1/social-accounts/%00/pinterest-boards"),
        ("delete", "/api/v1/connect-links/%00"),
        ("get", "/api/v1/ai/images/%00"),
        ("post", "/api/v1/social-accounts/%ff%fe/check"),
        ("delete", "/api/v1/connect-links/" + "a" * 3000),
        # The guard is global (core.middleware): every other object path too.
        ("get", "/api/v1/social-posts/%00"),
        ("get", "/api/v1/webhooks/%00"),
        ("get", "/api/v1/recurring-posts/%00"),
    ],
)
def test_hostile_path_parameters_are_404(api: Any, method: str, path: str) -> None:
    response = getattr(api, method)(path)
    assert response.status_code == 404, (path, response.status_code)
    assert response.json()["statusCode"] == 404
