"""DESIGN.md §8: the platforms' own well-known SDKs, pointed at the simulators, work unchanged."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

FIXTURES = Path(__file__).parent.parent / "fixtures"
REDIRECT = "https://client.example/callback"
pytestmark = pytest.mark.django_db


def test_mastodon_py_registers_logs_in_uploads_and_posts(sandbox: str) -> None:
    from mastodon import Mastodon

    base = f"{sandbox}/mastodon"
    client_id, client_secret = Mastodon.create_app(
        "Crosspost SDK check", scopes=["read", "write"], redirect_uris=REDIRECT, api_base_url=base
    )
    api = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=base, version_check_mode="created")
    assert api.retrieve_mastodon_version() == "4.3.0"
    authorize = api.auth_request_url(redirect_uris=REDIRECT, scopes=["read", "write"], state="xyz")
    redirect = requests.get(authorize, allow_redirects=False, timeout=10)
    assert redirect.status_code == 302
    query = parse_qs(urlsplit(redirect.headers["Location"]).query)
    assert query["state"] == ["xyz"]
    token = api.log_in(code=query["code"][0], redirect_uri=REDIRECT, scopes=["read", "write"])
    assert token
    me = api.account_verify_credentials()
    assert me.username.startswith("sandbox_user")

    picture = api.media_post(str(FIXTURES / "sample.jpg"), mime_type="image/jpeg", description="test card")
    assert picture.url and picture.type == "image"
    clip = api.media_post(str(FIXTURES / "sample.mp4"), mime_type="video/mp4")
    assert clip.url is None  # v2: still processing
    for _ in range(40):
        clip = api.media(clip)
        if clip.url:
            break
        time.sleep(0.1)
    assert clip.url

    status = api.status_post("Hello from Mastodon.py", media_ids=[picture], idempotency_key="sdk-key-1")
    again = api.status_post("Hello from Mastodon.py", media_ids=[picture], idempotency_key="sdk-key-1")
    assert again.id == status.id
    assert status.media_attachments[0].id == picture.id
    assert "Hello from Mastodon.py" in status.content
    video_status = api.status_post("a clip", media_ids=[clip])
    timeline = api.account_statuses(me)
    assert [s.id for s in timeline] == [video_status.id, status.id]
