"""The web front: an event loop that reads each request whole before a thread runs Django.

A thread of the WSGI pool is taken only by a request whose body has fully arrived, so clients
that send their headers and then stall (or trickle) their body hold an idle coroutine, never a
thread: ``/healthz`` and every other client go on being served. gunicorn still supervises the
processes (``FrontWorker``, a uvicorn worker: an asyncio loop on httptools); the Django
application runs unchanged behind a2wsgi's thread pool.

What the front guarantees, whatever the client sends:

- A body is read up to the limit of its path (``body_limit``): an upload URL takes the media
  upload limit, everything else the API's JSON cap. A declared length over it, or a chunked body
  that grows over it, is 413 and nothing reaches Django. A body within it reaches Django whole,
  with a ``Content-Length`` of what was received, however it was framed (so a chunked upload is
  stored byte for byte). Bodies larger than ``SPOOL_BYTES`` wait in a temporary file, not memory.
- A body that stops arriving for ``FRONT_BODY_TIMEOUT`` seconds is dropped: 408, connection closed.
- A request line or header block the HTTP parser refuses, or a header block over
  ``MAX_HEAD_BYTES``, is answered with the service's JSON error body, not the server's text.
- One access-log line per request (``core.logs.log_access``): JSON like every other line of the
  process, with the request id, the workspace and key prefix of the key that authenticated it,
  capability URLs redacted.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import tempfile
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from a2wsgi import WSGIMiddleware
from django.conf import settings
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn_worker import UvicornWorker

from core import errors
from core.logs import access_context_var, log_access

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[..., Awaitable[None]]

UPLOAD_PREFIX = "/uploads/"
SPOOL_BYTES = 1024 * 1024
REPLAY_CHUNK = 256 * 1024
MAX_HEAD_BYTES = 32 * 1024

access_logger = logging.getLogger("gunicorn.access")


def body_limit(path: str) -> int:
    """The most bytes a request to ``path`` may carry. Uploads (and the simulators, which receive
    the files workers send them) take the media limit; every other path the API's JSON cap."""
    if path.startswith(UPLOAD_PREFIX) or (settings.SANDBOX and path.startswith("/sandbox/")):
        return int(settings.MEDIA_MAX_UPLOAD_BYTES)
    return int(settings.API_MAX_BODY_BYTES)


def body_timeout() -> float:
    return float(os.environ.get("FRONT_BODY_TIMEOUT", "30"))


def error_bytes(error: errors.ApplicationError) -> bytes:
    return json.dumps(error.body()).encode()


async def send_error(send: Send, error: errors.ApplicationError) -> None:
    """The error body, and the connection closed after it: what is left of the body is unread."""
    body = error_bytes(error)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": error.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


def _declared_length(scope: Scope) -> int | None:
    raw = _header(scope, b"content-length")
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        return None  # the parser refuses a malformed length before the app is called


class BufferedBody:
    """A request body read whole, then handed on as ``http.request`` messages."""

    def __init__(self) -> None:
        self.file = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 (closed by the front)
        self.size = 0

    async def read(self, receive: Receive, *, limit: int, timeout: float) -> errors.ApplicationError | None:
        """Read until the last message; an error when the body is too large or stalls, or when
        the client went away (then there is no one to answer: ``ClientGone``)."""
        while True:
            try:
                message = await asyncio.wait_for(receive(), timeout)
            except TimeoutError:
                return errors.RequestTimeout(f"The request body stopped arriving for {timeout:g} s")
            if message["type"] == "http.disconnect":
                raise ClientGone
            chunk = message.get("body", b"")
            self.size += len(chunk)
            if self.size > limit:
                return errors.PayloadTooLarge(f"Request body exceeds {limit} bytes")
            self.file.write(chunk)
            if not message.get("more_body", False):
                self.file.seek(0)
                return None

    def replay(self, receive: Receive) -> Receive:
        done = False

        async def replayed() -> Message:
            nonlocal done
            if done:
                return await receive()
            chunk = self.file.read(REPLAY_CHUNK)
            more = self.file.tell() < self.size
            done = not more
            return {"type": "http.request", "body": chunk, "more_body": more}

        return replayed


class HeadTooLarge(Exception):
    """The request line and headers grew past ``MAX_HEAD_BYTES``."""


class ClientGone(Exception):
    """The client closed the connection before its body arrived."""


def _framed(scope: Scope, size: int) -> Scope:
    """The scope with the body's framing replaced by the length received."""
    headers = [(k, v) for k, v in scope["headers"] if k not in (b"content-length", b"transfer-encoding")]
    headers.append((b"content-length", str(size).encode()))
    return {**scope, "headers": headers}


class BufferingFront:
    """The ASGI application the workers serve: see the module docstring."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: dict[str, Any] = {"code": 0, "bytes": 0, "request_id": "-"}
        # Filled by core.logs.LogContextMiddleware once Django knows the principal.
        principal: dict[str, str] = {}
        access_context_var.set(principal)

        async def logged_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                status["request_id"] = (_header_of(message, b"x-request-id") or b"-").decode("latin-1")
            elif message["type"] == "http.response.body":
                status["bytes"] += len(message.get("body", b""))
            await send(message)

        try:
            await self._serve(scope, receive, logged_send)
        except ClientGone:
            status["code"] = 499  # nginx's name for it: the client closed the request
        finally:
            _log_access(scope, status, principal, time.perf_counter() - started)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        declared = _declared_length(scope)
        has_body = bool(declared) or _header(scope, b"transfer-encoding") is not None
        if not has_body:
            await self.app(scope, receive, send)
            return
        limit = body_limit(scope["path"])
        if declared is not None and declared > limit:
            await send_error(send, errors.PayloadTooLarge(f"Request body exceeds {limit} bytes"))
            return
        body = BufferedBody()
        try:
            refused = await body.read(receive, limit=limit, timeout=body_timeout())
            if refused is not None:
                await send_error(send, refused)
                return
            await self.app(_framed(scope, body.size), body.replay(receive), send)
        finally:
            body.file.close()


def _header_of(message: Message, name: bytes) -> bytes | None:
    for key, value in message.get("headers", []):
        if bytes(key).lower() == name:
            return bytes(value)
    return None


def _log_access(scope: Scope, status: dict[str, Any], principal: dict[str, str], seconds: float) -> None:
    if not access_logger.isEnabledFor(logging.INFO):
        return
    headers = dict(scope["headers"])
    client = scope.get("client")
    atoms = {
        "h": client[0] if client else "-",
        "m": scope["method"],
        "U": scope["path"],
        "q": scope["query_string"].decode("latin-1"),
        "s": str(status["code"]),
        "B": status["bytes"],
        "D": int(seconds * 1_000_000),
        "{x-request-id}o": status["request_id"],
        "a": headers.get(b"user-agent", b"-").decode("latin-1"),
        "f": headers.get(b"referer", b"-").decode("latin-1"),
        "workspace_id": principal.get("workspace_id", "-"),
        "key_prefix": principal.get("key_prefix", "-"),
    }
    log_access(access_logger, atoms)


def wsgi_threads() -> int:
    return int(os.environ.get("WEB_THREADS", "8"))


def build_application(wsgi_app: Any) -> BufferingFront:
    return BufferingFront(WSGIMiddleware(wsgi_app, workers=wsgi_threads()))


# --- the HTTP protocol: the parser's refusals in the service's error body ----------------------


class JSONErrorProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, answering what it cannot parse with the JSON error body, and
    refusing a request line and header block over ``MAX_HEAD_BYTES`` (httptools sets no bound)."""

    _head_bytes = 0
    _head_too_large = False

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_bytes = 0

    def on_url(self, url: bytes) -> None:
        self._count_head(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count_head(len(name) + len(value) + 4)
        super().on_header(name, value)

    def _count_head(self, size: int) -> None:
        self._head_bytes += size
        if self._head_bytes > MAX_HEAD_BYTES:
            # Raised inside a parser callback, it surfaces as the parser's error: send_400_response.
            self._head_too_large = True
            raise HeadTooLarge

    def send_400_response(self, msg: str) -> None:
        if self._head_too_large:
            self._answer(errors.HeadersTooLarge(f"Request line and headers exceed {MAX_HEAD_BYTES} bytes"))
        else:
            self._answer(errors.BadRequest("Malformed HTTP request", code="malformed_request"))

    def _answer(self, error: errors.ApplicationError) -> None:
        body = error_bytes(error)
        status = f"HTTP/1.1 {error.status_code} {error.body()['error']}\r\n".encode()
        head = (
            b"content-type: application/json\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n"
        )
        self.transport.write(status + head + body)
        self.transport.close()


class FrontWorker(UvicornWorker):
    """gunicorn's worker class for the web process (``-k core.front.FrontWorker``)."""

    CONFIG_KWARGS: dict[str, Any] = {
        "loop": "uvloop",
        "http": JSONErrorProtocol,
        "lifespan": "off",
        "access_log": False,
        "server_header": False,
    }
