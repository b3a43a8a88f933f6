"""Pieces shared by the LinkedIn, Pinterest, YouTube and Google Business simulators."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import time
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import requests
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

MEDIA_FETCH_TIMEOUT = 10.0


def bearer(request: HttpRequest) -> str:
    header = request.headers.get("Authorization", "")
    return header[7:].strip() if header.lower().startswith("bearer ") else ""


def basic_auth(request: HttpRequest) -> tuple[str, str] | None:
    header = request.headers.get("Authorization", "")
    if not header.lower().startswith("basic "):
        return None
    try:
        decoded = base64.b64decode(header[6:].strip()).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    client_id, _, secret = decoded.partition(":")
    return client_id, secret


def redirect_with(redirect_uri: str, **params: str) -> HttpResponse:
    """The auto-approved consent: back to the app's redirect URI with ``params`` added."""
    parts = urlsplit(redirect_uri)
    query = f"{parts.query}&{urlencode(params)}" if parts.query else urlencode(params)
    return HttpResponseRedirect(urlunsplit((parts.scheme, parts.netloc, parts.path, query, "")))


def fetch(url: str, *, max_bytes: int) -> tuple[bytes, str] | None:
    """What the platform does with a media URL it pulls: (bytes, mime type), or None when the
    URL cannot be fetched or is too large."""
    try:
        response = requests.get(url, timeout=MEDIA_FETCH_TIMEOUT)
    except (requests.RequestException, ValueError):
        return None
    if response.status_code != 200 or len(response.content) > max_bytes or not response.content:
        return None
    return response.content, (response.headers.get("Content-Type") or "").split(";")[0].strip()


def sniff_kind(data: bytes) -> str:
    """image | video | document | unknown, from the first bytes (what a platform checks)."""
    if data[:3] == b"\xff\xd8\xff" or data[:8] == b"\x89PNG\r\n\x1a\n" or data[:4] == b"GIF8":
        return "image"
    if data[4:8] == b"ftyp":
        return "video"
    if data[:5] == b"%PDF-":
        return "document"
    return "unknown"


def grown(created_at: float, per_minute: float, *, base: int = 0) -> int:
    """A figure that grows with the seconds since ``created_at`` (simulated engagement)."""
    return base + int(max(0.0, time.time() - created_at) * per_minute / 60)


def iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def digest(*parts: Any) -> str:
    return hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()[:24]
