"""The SDK's HTTP behaviour against a scripted server (httpx's MockTransport stands for the
network): idempotency keys, retries, rate-limit waits, error bodies, pagination, uploads."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from crosspost import AsyncClient, BadRequest, Client, NotFound, PermissionDenied, ServerError, TransportError

BASE = "https://api.example.test/api/v1"
Handler = Callable[[httpx.Request], httpx.Response]


def scripted(*answers: httpx.Response | Exception) -> tuple[list[httpx.Request], Handler]:
    """A handler answering with ``answers`` in turn, recording every request."""
    seen: list[httpx.Request] = []
    queue = list(answers)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return seen, handle


def client_for(handler: Handler, **options: Any) -> Client:
    options.setdefault("backoff", 0)
    return Client("key_abc_def", base_url=BASE, http=httpx.Client(transport=httpx.MockTransport(handler)), **options)


def test_headers_and_camel_case_body() -> None:
    seen, handler = scripted(httpx.Response(201, json={"postId": "p1"}))
    client = Client(
        "key_abc_def", base_url=BASE, workspace_id="ws1", http=httpx.Client(transport=httpx.MockTransport(handler))
    )
    assert client.create_post(platforms=["BLUESKY"], media_urls=["https://x/a.jpg"], content_type="IMAGE") == {
        "postId": "p1"
    }
    request = seen[0]
    assert (request.method, str(request.url)) == ("POST", f"{BASE}/social-posts")
    assert request.headers["Authorization"] == "Bearer key_abc_def"
    assert request.headers["X-Workspace-Id"] == "ws1"
    assert len(request.headers["Idempotency-Key"]) == 36
    assert json.loads(request.content) == {
        "platforms": ["BLUESKY"],
        "mediaUrls": ["https://x/a.jpg"],
        "contentType": "IMAGE",
    }


def test_edit_post_sends_a_published_posts_media_edit_as_one_patch() -> None:
    seen, handler = scripted(
        httpx.Response(200, json={"id": "p1", "editReport": {"requestId": "req_1", "entries": []}})
    )
    client = client_for(handler)
    client.edit_post(
        "p1", content_type="VIDEO", media_urls=["https://x/clip.mp4"], media_alt_texts=["A clip"], text="Now a video"
    )
    request = seen[0]
    assert (request.method, str(request.url)) == ("PATCH", f"{BASE}/social-posts/p1")
    assert json.loads(request.content) == {
        "contentType": "VIDEO",
        "mediaUrls": ["https://x/clip.mp4"],
        "mediaAltTexts": ["A clip"],
        "text": "Now a video",
    }


def test_query_lists_as_repeated_keys_and_reserved_names() -> None:
    seen, handler = scripted(httpx.Response(200, json={"posts": [], "total": 0, "hasMore": False}))
    client_for(handler).list_posts(statuses=["DRAFT", "FAILED"], limit=5, start_date="2026-01-01")
    assert seen[0].url.params.multi_items() == [
        ("statuses", "DRAFT"),
        ("statuses", "FAILED"),
        ("limit", "5"),
        ("startDate", "2026-01-01"),
    ]
    seen, handler = scripted(httpx.Response(200, json={}))
    client_for(handler).get_analytics_overview(from_="2026-01-01", to="2026-02-01")
    assert seen[0].url.params.multi_items() == [("from", "2026-01-01"), ("to", "2026-02-01")]


def test_5xx_and_network_errors_are_retried_with_the_same_idempotency_key() -> None:
    seen, handler = scripted(
        httpx.Response(503, json={"statusCode": 503}),
        httpx.ConnectError("refused"),
        httpx.Response(201, json={"postId": "p1"}),
    )
    assert client_for(handler).create_post(text="hi") == {"postId": "p1"}
    assert len(seen) == 3
    assert len({r.headers["Idempotency-Key"] for r in seen}) == 1


def test_explicit_idempotency_key_is_sent() -> None:
    seen, handler = scripted(httpx.Response(201, json={}))
    client_for(handler).create_post(text="hi", idempotency_key="order-42")
    assert seen[0].headers["Idempotency-Key"] == "order-42"
    assert json.loads(seen[0].content) == {"text": "hi"}


def test_429_waits_retry_after_then_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr("crosspost.client.time.sleep", waits.append)
    seen, handler = scripted(
        httpx.Response(429, headers={"Retry-After": "7", "RateLimit-Reset": "7"}, json={"code": "rate_limited"}),
        httpx.Response(200, json={"accounts": []}),
    )
    assert client_for(handler).list_accounts() == {"accounts": []}
    assert len(seen) == 2 and 7.0 in waits


def test_last_request_of_a_window_holds_the_next_one(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr("crosspost.client.time.sleep", waits.append)
    limits = {"RateLimit-Limit": "2", "RateLimit-Remaining": "0", "RateLimit-Reset": "30"}
    _, handler = scripted(httpx.Response(200, headers=limits, json={}), httpx.Response(200, json={}))
    client = client_for(handler)
    client.get_me()
    client.get_me()
    assert waits[0] == 0 and 25 < waits[1] <= 30


def test_in_progress_duplicate_is_retried_but_other_conflicts_are_not() -> None:
    seen, handler = scripted(
        httpx.Response(409, json={"statusCode": 409, "code": "idempotency_in_progress"}),
        httpx.Response(201, json={"postId": "p1"}),
    )
    assert client_for(handler).retry_post("p1") == {"postId": "p1"}
    assert len(seen) == 2
    seen, handler = scripted(httpx.Response(409, json={"statusCode": 409, "code": "conflict"}))
    with pytest.raises(Exception, match="409"):
        client_for(handler).delete_post("p1")
    assert len(seen) == 1


def test_errors_carry_the_service_body_and_request_id() -> None:
    body = {
        "statusCode": 403,
        "error": "Forbidden",
        "message": "Your role cannot do this",
        "code": "permission_denied",
        "requiredPermission": "posts.publish",
        "role": "viewer",
        "tokenType": "api_token",
    }
    _, handler = scripted(httpx.Response(403, json=body, headers={"X-Request-Id": "req-1"}))
    with pytest.raises(PermissionDenied) as caught:
        client_for(handler).publish_post("p1")
    error = caught.value
    assert (error.status_code, error.code, error.required_permission, error.request_id) == (
        403,
        "permission_denied",
        "posts.publish",
        "req-1",
    )
    assert error.body == body
    assert "posts.publish" in str(error) and "req-1" in str(error)


def test_validation_errors_are_not_retried() -> None:
    seen, handler = scripted(httpx.Response(400, json={"statusCode": 400, "message": ["text: too long"]}))
    with pytest.raises(BadRequest) as caught:
        client_for(handler).validate_post(text="x")
    assert caught.value.messages == ["text: too long"] and len(seen) == 1


def test_retries_run_out() -> None:
    seen, handler = scripted(*[httpx.Response(502, text="bad gateway")] * 3)
    with pytest.raises(ServerError):
        client_for(handler, max_retries=2).get_me()
    assert len(seen) == 3
    _, handler = scripted(*[httpx.ReadTimeout("slow")] * 2)
    with pytest.raises(TransportError):
        client_for(handler, max_retries=1).get_me()


def test_path_values_are_quoted() -> None:
    seen, handler = scripted(httpx.Response(404, json={"statusCode": 404, "code": "not_found"}))
    with pytest.raises(NotFound):
        client_for(handler).get_post("a/b c")
    assert seen[0].url.raw_path == b"/api/v1/social-posts/a%2Fb%20c"


def test_iterators_follow_offset_and_page_pagination() -> None:
    _, handler = scripted(
        httpx.Response(200, json={"posts": [{"id": 1}, {"id": 2}], "total": 3, "hasMore": True}),
        httpx.Response(200, json={"posts": [{"id": 3}], "total": 3, "hasMore": False}),
    )
    seen_requests: list[httpx.Request] = []

    def recording(request: httpx.Request) -> httpx.Response:
        seen_requests.append(request)
        return handler(request)

    assert [p["id"] for p in client_for(recording).iter_posts(limit=2)] == [1, 2, 3]
    assert [r.url.params.get("offset") for r in seen_requests] == [None, "2"]

    seen, handler = scripted(
        httpx.Response(200, json={"posts": [{"id": "a"}], "page": 1, "hasMore": True}),
        httpx.Response(200, json={"posts": [{"id": "b"}], "page": 2, "hasMore": False}),
    )
    assert [p["id"] for p in client_for(handler).iter_analytics_posts(limit=1)] == ["a", "b"]
    assert [r.url.params.get("page") for r in seen] == [None, "2"]


def test_upload_puts_the_file_with_its_type_and_without_our_key(tmp_path: Path) -> None:
    file = tmp_path / "photo.png"
    file.write_bytes(b"\x89PNG" + b"0" * 100_000)
    seen: list[httpx.Request] = []
    uploaded: list[httpx.Request] = []
    answer = {"urls": [{"uploadUrl": "https://store.test/put/1", "publicUrl": "https://cdn.test/1.png"}]}

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(201, json=answer)

    def store(request: httpx.Request) -> httpx.Response:
        request.read()
        uploaded.append(request)
        return httpx.Response(200)

    progress: list[int] = []
    client = client_for(handler, upload_http=httpx.Client(transport=httpx.MockTransport(store)))
    assert client.upload(file, progress=lambda sent, total: progress.append(sent)) == "https://cdn.test/1.png"
    assert json.loads(seen[0].content) == {"files": [{"fileName": "photo.png", "mimeType": "image/png"}]}
    put = uploaded[0]
    assert put.method == "PUT" and put.headers["Content-Type"] == "image/png"
    assert put.headers["Content-Length"] == str(file.stat().st_size) and "Authorization" not in put.headers
    assert put.content == file.read_bytes() and progress[-1] == file.stat().st_size


def test_async_client_retries_and_paginates() -> None:
    seen, handler = scripted(
        httpx.Response(500, json={}),
        httpx.Response(200, json={"deliveries": [{"id": "d1"}], "hasMore": True}),
        httpx.Response(200, json={"deliveries": [{"id": "d2"}], "hasMore": False}),
    )

    async def run() -> list[str]:
        transport = httpx.MockTransport(handler)
        async with AsyncClient("k", base_url=BASE, backoff=0, http=httpx.AsyncClient(transport=transport)) as client:
            return [d["id"] async for d in client.iter_webhook_deliveries("w1")]

    assert asyncio.run(run()) == ["d1", "d2"]
    assert [r.url.path for r in seen] == ["/api/v1/webhooks/w1/deliveries"] * 3
