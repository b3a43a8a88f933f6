"""The buffering front (core.front) as an ASGI application, driven in-process: what reaches the
application behind it, and what the client is answered, for each way a body can arrive."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from core.front import BufferingFront, body_limit

API_CAP = 64
MEDIA_CAP = 1000


@pytest.fixture(autouse=True)
def _small_limits(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    settings.API_MAX_BODY_BYTES = API_CAP
    settings.MEDIA_MAX_UPLOAD_BYTES = MEDIA_CAP
    monkeypatch.setenv("FRONT_BODY_TIMEOUT", "0.2")


class Inner:
    """The application behind the front: records its scope and the body it read, answers 200."""

    def __init__(self) -> None:
        self.scope: dict[str, Any] | None = None
        self.body = b""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.scope = scope
        while True:
            message = await receive()
            self.body += message.get("body", b"")
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": [(b"x-request-id", b"r1")]})
        await send({"type": "http.response.body", "body": b"ok", "more_body": False})


def _scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "PUT",
        "path": path,
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 5000),
    }


def _serve(scope: dict[str, Any], chunks: list[bytes], *, then: str = "end") -> tuple[Inner, list[dict[str, Any]]]:
    """Run the front on ``scope`` with the body arriving as ``chunks``, and then: ``end`` (the
    last chunk was the last), ``stall`` (nothing more ever arrives) or ``leave`` (the client
    disconnects)."""
    inner, sent = Inner(), []
    pending = list(chunks)

    async def receive() -> dict[str, Any]:
        if pending:
            chunk = pending.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(pending) or then != "end"}
        if then == "stall":
            await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(BufferingFront(inner)(scope, receive, send))
    return inner, sent


def _status_and_body(sent: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], json.loads(body)


def test_a_chunked_upload_within_the_media_limit_reaches_the_application_whole_with_its_length():
    chunks = [bytes([i]) * 300 for i in range(3)]  # 900 bytes: over the API cap, within the media one
    inner, sent = _serve(_scope("/uploads/k/a.mp4", [(b"transfer-encoding", b"chunked")]), chunks)

    assert sent[0]["status"] == 200
    assert inner.body == b"".join(chunks)
    assert inner.scope is not None
    assert (b"content-length", b"900") in inner.scope["headers"]
    assert all(name != b"transfer-encoding" for name, _ in inner.scope["headers"])


def test_a_chunked_upload_over_the_media_limit_is_413_and_never_reaches_the_application():
    inner, sent = _serve(_scope("/uploads/k/a.mp4", [(b"transfer-encoding", b"chunked")]), [b"x" * 600, b"x" * 600])

    assert inner.scope is None
    status, body = _status_and_body(sent)
    assert (status, body["code"]) == (413, "payload_too_large")
    assert (b"connection", b"close") in sent[0]["headers"]


def test_a_declared_length_over_the_limit_is_413_before_any_body_is_read():
    scope = _scope("/uploads/k/a.mp4", [(b"content-length", str(MEDIA_CAP + 1).encode())])
    inner, sent = _serve(scope, [])

    assert inner.scope is None
    assert _status_and_body(sent)[0] == 413


def test_an_api_body_takes_the_api_cap_whatever_its_framing():
    for headers in ([(b"transfer-encoding", b"chunked")], [(b"content-length", b"100")]):
        inner, sent = _serve(_scope("/api/v1/social-posts", headers), [b"{" + b" " * 98 + b"}"])
        assert inner.scope is None
        assert _status_and_body(sent)[0] == 413

    inner, sent = _serve(_scope("/api/v1/social-posts", [(b"transfer-encoding", b"chunked")]), [b"{}"])
    assert (sent[0]["status"], inner.body) == (200, b"{}")


def test_a_body_that_stalls_is_dropped_after_the_read_timeout_with_408():
    inner, sent = _serve(_scope("/uploads/k/a.mp4", [(b"content-length", b"500")]), [b"x"], then="stall")

    assert inner.scope is None
    status, body = _status_and_body(sent)
    assert (status, body["code"]) == (408, "request_body_timeout")
    assert (b"connection", b"close") in sent[0]["headers"]


def test_a_client_that_leaves_mid_body_is_not_answered_and_the_application_never_runs():
    inner, sent = _serve(_scope("/uploads/k/a.mp4", [(b"content-length", b"500")]), [b"x" * 10], then="leave")

    assert inner.scope is None
    assert sent == []


def test_a_request_without_a_body_passes_straight_through():
    scope = {**_scope("/healthz", []), "method": "GET"}
    inner, sent = _serve(scope, [])

    assert inner.scope is scope
    assert sent[0]["status"] == 200


def test_body_limits_by_path(settings):
    settings.SANDBOX = True
    assert body_limit("/uploads/abc/file.mp4") == MEDIA_CAP
    assert body_limit("/sandbox/youtube/upload") == MEDIA_CAP
    assert body_limit("/api/v1/upload-urls") == API_CAP
    assert body_limit("/admin/login/") == API_CAP
    settings.SANDBOX = False
    assert body_limit("/sandbox/youtube/upload") == API_CAP
