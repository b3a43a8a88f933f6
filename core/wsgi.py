"""The WSGI edge: what must hold before Django builds a request.

A body sent with ``Transfer-Encoding: chunked`` arrives with no ``Content-Length``; Django then
reads it as empty, so the body-size limit (which reads ``Content-Length``) never saw it. Here
such a body is read up to one byte past ``API_MAX_BODY_BYTES`` and handed on with the length
actually received, so the request guard measures the bytes received whatever the framing: over
the limit is its 413, within it the body reaches the view as if it had been sent with a length.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
_CHUNK = 64 * 1024


def _has_unframed_body(environ: dict[str, Any]) -> bool:
    if environ.get("CONTENT_LENGTH"):
        return False
    encodings = environ.get("HTTP_TRANSFER_ENCODING", "").lower()
    return "chunked" in encodings


def _read_at_most(stream: Any, limit: int) -> bytes:
    received = bytearray()
    while len(received) < limit:
        chunk = stream.read(min(_CHUNK, limit - len(received)))
        if not chunk:
            break
        received += chunk
    return bytes(received)


class MeasuredBody:
    """Wraps the Django WSGI application; see the module docstring."""

    def __init__(self, app: WSGIApp) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if _has_unframed_body(environ):
            body = _read_at_most(environ["wsgi.input"], settings.API_MAX_BODY_BYTES + 1)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return self.app(environ, start_response)
