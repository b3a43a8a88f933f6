"""Helpers every simulator may use: reading requests (parameters, bearer and basic credentials),
answering (JSON responses, OAuth redirects), pulling media by URL and telling what the bytes
really are, and the simulated figures and timestamps posts carry.

Platform envelopes stay in the simulators (Meta Graph in ``_meta_common``, Google in
``_google_common``); the request-log and control endpoints are in :mod:`platforms.sandbox.views`."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import math
import mimetypes
import time
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import requests
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse, QueryDict

MEDIA_FETCH_TIMEOUT = 10.0
_KINDS = {"image/jpeg": "image", "image/png": "image", "image/gif": "image", "video/mp4": "video"}


# --- reading requests --------------------------------------------------------------------


def request_params(request: HttpRequest) -> dict[str, Any]:
    """Parameters of a request from wherever the client put them: the query string, a form or
    multipart body, or a JSON object body (later sources win; ``name[]`` keys keep every value)."""
    params: dict[str, Any] = {}
    for key, values in request.GET.lists():
        params[key] = values if key.endswith("[]") else values[-1]
    content_type = (request.content_type or "").lower()
    if content_type.startswith("application/json"):
        try:
            body = json.loads(request.body or b"{}")
        except ValueError:
            body = None
        if isinstance(body, dict):
            params.update(body)
    elif request.method == "POST" or content_type.startswith("application/x-www-form-urlencoded"):
        # Django parses a form only for POST; a PUT or PATCH form (SDKs send edits so) is read here.
        form = request.POST if request.method == "POST" else QueryDict(request.body)
        for key, values in form.lists():
            params[key] = values if key.endswith("[]") else values[-1]
    return params


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one: a field of the wrong type reads as
    absent, so the simulator answers it with the platform's validation error, never a crash."""
    return value if isinstance(value, dict) else {}


def bearer_token(request: HttpRequest) -> str:
    """The token of an ``Authorization: Bearer <token>`` header ("" without one)."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def basic_auth(request: HttpRequest) -> tuple[str, str] | None:
    """(client id, secret) of an ``Authorization: Basic`` header; None without a readable one."""
    header = request.headers.get("Authorization", "")
    if not header.lower().startswith("basic "):
        return None
    try:
        decoded = base64.b64decode(header[6:].strip()).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    client_id, _, secret = decoded.partition(":")
    return client_id, secret


# --- answering ---------------------------------------------------------------------------


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> JsonResponse:
    response = JsonResponse(data, status=status, safe=False)
    for key, value in (headers or {}).items():
        response[key] = value
    return response


def redirect_with(redirect_uri: str, **params: str) -> HttpResponse:
    """The auto-approved consent: back to the app's redirect URI with ``params`` added."""
    parts = urlsplit(redirect_uri)
    query = f"{parts.query}&{urlencode(params)}" if parts.query else urlencode(params)
    return HttpResponseRedirect(urlunsplit((parts.scheme, parts.netloc, parts.path, query, "")))


# --- media the platform pulls by URL -----------------------------------------------------


def pull_media(url: str, *, max_bytes: int | None = None) -> tuple[bytes, str] | str:
    """What a platform that pulls ``url`` gets: (bytes, declared mime type), or why it got
    nothing (not an http(s) URL, unreachable, not 200, empty, larger than ``max_bytes``)."""
    if not url.startswith(("http://", "https://")):
        return f"The media URL {url!r} is not a valid http(s) URL"
    try:
        response = requests.get(url, timeout=MEDIA_FETCH_TIMEOUT)
    except (requests.RequestException, ValueError) as exc:
        return f"Media could not be fetched from {url}: {exc.__class__.__name__}"
    if response.status_code != 200:
        return f"Media could not be fetched from {url}: HTTP {response.status_code}"
    if not response.content:
        return f"Media at {url} is empty"
    if max_bytes is not None and len(response.content) > max_bytes:
        return f"Media at {url} is larger than {max_bytes} bytes"
    mime = (response.headers.get("Content-Type") or "").split(";")[0].strip()
    return response.content, mime or (mimetypes.guess_type(url)[0] or "")


def fetch_media(url: str, *, max_bytes: int | None = None) -> tuple[bytes, str] | None:
    """:func:`pull_media` for simulators that only need to know whether it worked."""
    pulled = pull_media(url, max_bytes=max_bytes)
    return None if isinstance(pulled, str) else pulled


def sniff_mime(data: bytes) -> str:
    """The media type the bytes really are (the simulators check, as the platforms do)."""
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[4:8] == b"ftyp":
        return "video/mp4"
    if data[:5] == b"%PDF-":
        return "application/pdf"
    return "application/octet-stream"


def sniff_kind(data: bytes) -> str:
    """image (JPEG, PNG, GIF) | video (MP4) | document (PDF) | unknown, from the first bytes."""
    mime = sniff_mime(data)
    return "document" if mime == "application/pdf" else _KINDS.get(mime, "unknown")


# --- what posts carry --------------------------------------------------------------------


def grown(since: float, per_minute: float, *, base: int = 0) -> int:
    """A figure that grows with the minutes since ``since`` (simulated engagement), so every
    refresh sees new numbers."""
    return base + int(max(0.0, time.time() - since) * per_minute / 60)


def settling(since: float, per_minute: float) -> int:
    """A figure that grows like a real post's: ``per_minute`` at first, ever slower as the post
    ages (logarithmically), so every refresh still sees new numbers but a months-old post has a
    few times a day-old one's, never hundreds of times."""
    return int(per_minute * math.log1p(max(0.0, time.time() - since) / 60))


def iso(ts: float, *, millis: bool = False) -> str:
    """A Unix time as ISO 8601 UTC with ``Z`` (to the second, or the millisecond)."""
    stamp = dt.datetime.fromtimestamp(ts, dt.UTC)
    if millis:
        return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"
    return stamp.isoformat(timespec="seconds").replace("+00:00", "Z")


def digest(*parts: Any) -> str:
    """A short stable id derived from ``parts``."""
    return hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()[:24]
