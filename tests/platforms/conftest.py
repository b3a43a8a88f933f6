"""Helpers for driving a real platform client against its simulator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from platforms.base import ConnectedIdentity, Platform
from platforms.registry import get_client

REDIRECT_URI = "http://127.0.0.1:9/connect/callback"


def connect_sandbox_account(platform: Platform | str) -> list[ConnectedIdentity]:
    """Connect a new simulated account the way a user would: OAuth platforms go through the
    simulator's authorize endpoint (which auto-approves and redirects with a code) and the
    client's code exchange; credential platforms use the simulator's sandbox credentials."""
    client = get_client(platform)
    if client.connect_method == "credentials":
        return client.connect_with_credentials(client.sandbox_credentials())
    url = client.authorize_url(redirect_uri=REDIRECT_URI, state="test-state", code_challenge="")
    response = requests.get(url, allow_redirects=False, timeout=10)
    assert response.status_code in (301, 302, 303), (response.status_code, response.text[:300])
    location = response.headers["Location"]
    query = parse_qs(urlsplit(location).query)
    assert query.get("state") == ["test-state"], location
    return client.exchange_code(code=query["code"][0], redirect_uri=REDIRECT_URI)


@pytest.fixture
def connect(sandbox: str) -> Callable[[Any], list[ConnectedIdentity]]:
    return connect_sandbox_account
