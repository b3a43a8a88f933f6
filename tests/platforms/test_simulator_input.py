"""No simulator answers 500 to malformed input: every route, with a working token, gets garbage
query values and JSON/form bodies whose fields have the wrong types, and must answer in the
platform's own way (a 4xx, or 501 for an XRPC method it does not have), never crash."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import requests
from django.urls import URLPattern, URLResolver

from platforms.base import Credentials, Platform
from platforms.sandbox import urls as sandbox_urls
from tests.platforms.conftest import connect_sandbox_account

GARBAGE_QUERY = {
    "limit": "abc",
    "cursor": "-x",
    "max_results": "1e400",
    "page_size": "99999999999999999999",
    "pageSize": "x",
    "start": "x",
    "count": "x",
    "max_id": "x",
    "since": "1e400",
    "fields": "id,{{",
    "upload_phase": "bogus",
    "uploadType": "resumable",
    "part": "snippet",
}
# Each of these once crashed a simulator: nested fields of the wrong type.
WRONG_TYPES: list[dict[str, Any]] = [
    {"media": {"media_ids": 7}, "text": "x"},
    {"media": "x", "text": "x", "media_ids": 7, "status": "x"},
    {"repo": {"x": 1}, "collection": "app.bsky.feed.post", "record": {"text": "x"}},
    {"localPostNames": ["x"], "basicRequest": {"metricRequests": "x", "timeRange": {"startTime": "x"}}},
    {"localPostNames": "x", "basicRequest": [1]},
    {"snippet": "x", "status": [1]},
    {"snippet": {"playlistId": "x", "resourceId": "x"}},
    {"snippet": [1], "status": {"privacyStatus": 1}},
]
BODIES: list[tuple[str, bytes]] = [
    ("application/json", b"{not json"),
    ("application/json", b"[1, 2, 3]"),
    *[("application/json", json.dumps(body).encode()) for body in WRONG_TYPES],
    ("application/x-www-form-urlencoded", b"message=%ff%fe&attached_media[0]={bad&media_ids[]=x&chat_id=&media=[{"),
]
NSIDS = (
    "com.atproto.server.createSession",
    "com.atproto.server.refreshSession",
    "com.atproto.repo.uploadBlob",
    "com.atproto.repo.createRecord",
    "com.atproto.repo.getRecord",
    "app.bsky.actor.getProfile",
    "app.bsky.feed.getAuthorFeed",
    "app.bsky.feed.getPosts",
    "app.bsky.feed.getPostThread",
    "com.atproto.repo.putRecord",
    "app.bsky.video.uploadVideo",
    "app.bsky.video.getJobStatus",
)
TELEGRAM_METHODS = ("getMe", "getChat", "getChatMemberCount", "sendMessage", "sendPhoto", "sendVideo", "sendMediaGroup")


def _routes(patterns: list[URLPattern | URLResolver], prefix: str = "") -> Iterator[str]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern)


def _concrete(route: str, creds: Credentials) -> list[str]:
    """Paths that reach ``route``, its parameters filled with the account's own id."""
    if "<str:nsid>" in route:
        return [route.replace("<str:nsid>", nsid) for nsid in NSIDS]
    if "bot<str:token>" in route:
        return [
            route.replace("<str:token>", creds.access_token).replace("<str:method>", method)
            for method in TELEGRAM_METHODS
        ]
    own = creds.external_id.rsplit("/", 1)[-1]
    path = route.replace("^", "").replace("$", "").replace("/?", "/")
    path = path.replace("(?:feed|published_posts)", "feed").replace(
        "(?P<edge>video_reels|video_stories)", "video_reels"
    )
    path = re.sub(r"\(\?P<version>[^)]*\)", "v21.0", path)
    path = re.sub(r"\(\?P<\w+>[^)]*\)", own if own.isdigit() else "1", path)
    return [re.sub(r"<(?:str|int|path):\w+>", own, path)]


def test_no_simulator_route_answers_500_to_malformed_input(sandbox: str) -> None:
    root = sandbox.rsplit("/sandbox", 1)[0]
    accounts = {p.slug: connect_sandbox_account(p)[0].credentials for p in Platform}
    crashes: list[tuple[str, str, str]] = []
    checked = 0
    for route in _routes(sandbox_urls.urlpatterns):
        slug = route.split("/")[1]
        if slug == "_control":
            continue
        creds = accounts[slug]
        headers = {"Authorization": f"Bearer {creds.access_token}"}
        params = {**GARBAGE_QUERY, "access_token": creds.access_token}
        for path in _concrete(route, creds):
            url = f"{root}/{path}"
            answers = [
                ("GET", "", requests.get(url, params=params, headers=headers, timeout=20, allow_redirects=False))
            ]
            for content_type, body in BODIES:
                answer = requests.post(
                    url,
                    params={"access_token": creds.access_token, "uploadType": "resumable", "part": "snippet"},
                    data=body,
                    headers={**headers, "Content-Type": content_type},
                    timeout=20,
                    allow_redirects=False,
                )
                answers.append(("POST", body[:60].decode(errors="replace"), answer))
            for method, sent, answer in answers:
                checked += 1
                if answer.status_code >= 500 and answer.status_code not in (501, 503):
                    crashes.append((method, path, sent))
    assert checked > 500
    assert crashes == []
