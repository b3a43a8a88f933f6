"""Request ids and the guards every API request passes before any view runs."""

from __future__ import annotations

import contextvars
import logging
import os
import re
from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.conf import settings
from django.core.signals import request_finished
from django.http import HttpRequest, HttpResponse

from core import errors
from core.exception_handler import outage_error
from core.responses import json_error

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
# Echoed verbatim: any printable ASCII (spaces included) up to 200 characters. Anything else
# (control characters, non-ASCII, longer) could corrupt a header or a log line: a new id instead.
_REQUEST_ID = re.compile(r"^[\x20-\x7e]{1,200}$")

API_PREFIX = "/api/"


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        return True


class RequestIdMiddleware:
    """Echo the client's ``X-Request-Id`` verbatim (when printable) or make a new one."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # From the WSGI environ: ``request.headers`` would build a dictionary of every header for
        # this one (it is built later only if something else asks for it).
        supplied = request.META.get("HTTP_X_REQUEST_ID", "")
        request_id = supplied if _REQUEST_ID.match(supplied) else new_request_id()
        request.request_id = request_id  # type: ignore[attr-defined]
        # Kept until the response is closed, not reset on the way out of this middleware: Django
        # logs a 5xx ("Internal Server Error: ...") after the whole middleware chain returns.
        request_id_var.set(request_id)
        response = self.get_response(request)
        response["X-Request-Id"] = request_id
        return response


def new_request_id() -> str:
    """A random UUID (version 4) as 32 hex digits, as ``uuid.uuid4().hex`` gives, at a third of
    its cost: the same 16 random bytes with the version and variant bits set, without building a
    ``UUID`` object on every request."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    return raw.hex()


def _forget_request_id(**kwargs: object) -> None:
    request_id_var.set("-")


request_finished.connect(_forget_request_id, dispatch_uid="core.forget_request_id")


def _query_string_is_clean(raw: str) -> bool:
    decoded = unquote_to_bytes(raw.replace("+", " "))
    if b"\x00" in decoded:
        return False
    try:
        decoded.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class RequestGuardMiddleware:
    """On API paths: oversized bodies are 413, a path carrying NUL bytes is 404 (like any path
    naming nothing), and a query string carrying NUL bytes or invalid UTF-8 is 400, before
    anything tries to decode them."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith(API_PREFIX):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > settings.API_MAX_BODY_BYTES:
                return json_error(errors.PayloadTooLarge(f"Request body exceeds {settings.API_MAX_BODY_BYTES} bytes"))
            if "\x00" in request.path:  # no object is named so; PostgreSQL could not even compare it
                return json_error(errors.NotFound())
            if not _query_string_is_clean(request.META.get("QUERY_STRING", "")):
                return json_error(
                    errors.BadRequest("Query string contains NUL bytes or invalid UTF-8", code="malformed_query")
                )
        return self.get_response(request)


class OutageMiddleware:
    """Views outside DRF (the simulators, the connect pages) answer an unreachable Redis or
    broker as DRF views do: the 503 error body, never a 500."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        error = outage_error(exception)
        return json_error(error) if error is not None else None
