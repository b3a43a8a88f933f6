"""Helpers for driving a real platform client against its simulator: connecting accounts,
reading a simulator's request log, building media items, running a publish flow to the end,
and loading recorded platform bodies."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.conf import settings

from platforms.base import ConnectedIdentity, Credentials, MediaItem, Platform, PublishRequest, PublishResult
from platforms.registry import get_client

REDIRECT_URI = "http://127.0.0.1:9/connect/callback"
RECORDED = Path(__file__).parent / "recorded"
_MEDIA_TYPES = {
    "jpg": ("image", "image/jpeg"),
    "jpeg": ("image", "image/jpeg"),
    "png": ("image", "image/png"),
    "mp4": ("video", "video/mp4"),
    "pdf": ("document", "application/pdf"),
}


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


@pytest.fixture
def connect_one(connect: Callable[[Any], list[ConnectedIdentity]]) -> Callable[[Any], ConnectedIdentity]:
    """Connect a new simulated account that yields exactly one identity."""

    def one(platform: Any) -> ConnectedIdentity:
        identities = connect(platform)
        assert len(identities) == 1, identities
        return identities[0]

    return one


def sandbox_page(slug: str, path: str) -> str:
    """Where a link the service hands out opens in sandbox mode: the ``slug`` simulator's page at
    ``path``, at the service's public address (the real site has no such post)."""
    return f"{settings.PUBLIC_BASE_URL}/sandbox/{slug}{path}"


def load_recorded(platform: str, name: str) -> Any:
    """A body recorded from the real platform: ``tests/platforms/recorded/<platform>/<name>``."""
    return json.loads((RECORDED / platform / name).read_text())


def sim_requests(sandbox: str, slug: str, path_part: str = "") -> list[dict[str, Any]]:
    """The calls the ``slug`` simulator received (whose path contains ``path_part``), oldest first."""
    log = requests.get(f"{sandbox}/_control/{slug}/requests", timeout=10).json()["requests"]
    return [entry for entry in log if path_part in entry["path"]]


def publish_calls(sandbox: str, slug: str) -> list[dict[str, Any]]:
    """The received calls that published something (the simulators mark them in the log)."""
    return [entry for entry in sim_requests(sandbox, slug) if entry.get("publish")]


def media_item(url: str, *, alt: str = "") -> MediaItem:
    """A MediaItem for ``url`` whose kind and mime type follow the file's extension."""
    kind, mime = _MEDIA_TYPES[url.rsplit(".", 1)[-1].lower()]
    return MediaItem(url=url, kind=kind, mime_type=mime, alt_text=alt)


def drive(
    client: Any, creds: Credentials, request: PublishRequest, state: dict[str, Any] | None = None
) -> list[PublishResult]:
    """Call publish until done, feeding back the state each time (as the worker does)."""
    results = [client.publish(creds, request, state or {})]
    while not results[-1].done:
        assert len(results) < 10, results
        results.append(client.publish(creds, request, results[-1].state))
    return results


# --- one harness for suites that run every platform alike ----------------------------------


@dataclass(frozen=True)
class Case:
    platform: Platform
    content_type: str = "TEXT"
    media: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    create_path: str = ""  # the call that creates the post
    quota: bool = False  # the platform answers a used-up quota apart from its rate limits
    # how far ahead the platform's rate-limit answer says to come back (None: it does not say)
    retry_within: dt.timedelta | None = dt.timedelta(minutes=1, seconds=1)


META_REGAIN = dt.timedelta(minutes=5, seconds=1)  # X-Business-Use-Case-Usage estimated_time_to_regain_access
CASES = [
    Case(Platform.FACEBOOK, create_path="/feed", retry_within=META_REGAIN),
    Case(
        Platform.INSTAGRAM, "IMAGE", ("sample.jpg",), create_path="/media_publish", quota=True, retry_within=META_REGAIN
    ),
    Case(Platform.THREADS, create_path="/threads_publish", quota=True, retry_within=META_REGAIN),
    Case(Platform.TIKTOK, "VIDEO", ("sample.mp4",), {"privacyLevel": "SELF_ONLY"}, "/video/init/", quota=True),
    Case(Platform.TWITTER, create_path="/2/tweets", quota=True),
    Case(
        Platform.BLUESKY, create_path="com.atproto.repo.createRecord", quota=True, retry_within=dt.timedelta(minutes=5)
    ),
    # LinkedIn's throttles are daily and reset at midnight UTC
    Case(Platform.LINKEDIN, create_path="/rest/posts", retry_within=dt.timedelta(days=1)),
    Case(Platform.PINTEREST, "IMAGE", ("sample.jpg",), create_path="/pins"),
    # YouTube documents no retry time for rateLimitExceeded: the worker backs off.
    Case(
        Platform.YOUTUBE,
        "VIDEO",
        ("sample.mp4",),
        create_path="/upload/youtube/v3/videos",
        quota=True,
        retry_within=None,
    ),
    Case(Platform.MASTODON, create_path="/api/v1/statuses", retry_within=dt.timedelta(minutes=5, seconds=1)),
    Case(Platform.TELEGRAM, create_path="/sendMessage"),
    Case(Platform.GOOGLE_BUSINESS, create_path="/localPosts"),
]
IDS = [case.platform.value for case in CASES]


@dataclass
class Harness:
    case: Case
    sandbox: str
    media_server: str
    creds: Credentials

    @property
    def slug(self) -> str:
        return self.case.platform.slug

    @property
    def client(self) -> Any:
        return get_client(self.case.platform)

    def arm(self, kind: str, *, path: str = "", method: str = "", times: int = 1, seconds: float = 0.0) -> None:
        response = requests.post(
            f"{self.sandbox}/_control/{self.slug}/faults",
            json={"kind": kind, "path": path, "method": method, "times": times, "seconds": seconds},
            timeout=10,
        )
        assert response.status_code == 201, response.text

    def request(self, text: str, target_id: str = "tgt_err") -> PublishRequest:
        options = dict(self.case.options)
        if self.case.platform == Platform.PINTEREST:
            options["boardId"] = self.client.list_boards(self.creds)[0].id
        return PublishRequest(
            target_id=target_id,
            content_type=self.case.content_type,
            text=text,
            media=tuple(media_item(f"{self.media_server}/{name}") for name in self.case.media),
            options=options,
        )

    def created(self) -> list[dict[str, Any]]:
        """The publishing calls the simulator received and carried out."""
        return [entry for entry in publish_calls(self.sandbox, self.slug) if entry["status"] < 300]

    def publish(self, text: str, target_id: str = "tgt_err") -> Any:
        return drive(self.client, self.creds, self.request(text, target_id))[-1]


@pytest.fixture(params=CASES, ids=IDS)
def harness(request: Any, sandbox: str, media_server: str) -> Harness:
    case: Case = request.param
    identity = connect_sandbox_account(case.platform)[0]
    return Harness(case, sandbox, media_server, identity.credentials)
