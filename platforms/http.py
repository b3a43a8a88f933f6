"""The transport every platform client uses: one HTTP call that tells a request that never left
(``Transient``) from one that may have been acted on (``UnknownOutcome``), when to retry from the
usual rate-limit headers, media downloads with a size cap, instants, JSON-or-empty bodies, and
where a platform's second host (OAuth pages) lives when the client points at a simulator.

Platform-specific error envelopes stay in the platform's module (or its family's: Meta Graph in
``_meta_common``, Google in ``_google_common``); :func:`classify_http` is only the fallback
reading of a bare HTTP status."""

from __future__ import annotations

import datetime as dt
import email.utils
import mimetypes
from typing import Any
from urllib.parse import urlencode, urlsplit

import requests
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError

from platforms.base import (
    AuthError,
    Credentials,
    ErrorCode,
    Permanent,
    PlatformError,
    RateLimited,
    Transient,
    UnknownOutcome,
)

# A media file larger than this is refused before (or while) downloading it into memory.
MAX_MEDIA_BYTES = 512 * 1024 * 1024
# Where platforms say when to come back, in the order they are trusted.
RETRY_HEADERS = ("Retry-After", "X-RateLimit-Reset", "X-Rate-Limit-Reset")
_NEVER_SENT = (NewConnectionError, NameResolutionError, ConnectTimeoutError, requests.ConnectTimeout)
_NEVER_SENT_TEXT = ("Failed to establish a new connection", "Name or service not known")


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# --- sending -----------------------------------------------------------------------------


def never_sent(exc: BaseException) -> bool:
    """True when the connection failed before any byte of the request left (DNS, refused,
    connect timeout), looking through the chain of causes urllib3 wraps around it."""
    seen: set[int] = set()
    stack: list[Any] = [exc]
    while stack:
        item = stack.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, _NEVER_SENT):
            return True
        if isinstance(item, BaseException):
            stack.extend([item.__cause__, item.__context__, getattr(item, "reason", None), *item.args])
        elif isinstance(item, str) and any(text in item for text in _NEVER_SENT_TEXT):
            return True
    return False


def send(
    session: requests.Session, method: str, url: str, *, timeout: float, creates: bool = False, **kwargs: Any
) -> requests.Response:
    """One HTTP call. Any failure below HTTP is ``Transient``, except for a call that ``creates``
    something and failed after the request left (read timeout, connection dropped after
    sending): that is ``UnknownOutcome``, never to be re-sent blindly. Messages name the host and
    the failure's class only (URLs may carry tokens)."""
    try:
        return session.request(method, url, timeout=timeout, **kwargs)
    except requests.RequestException as exc:
        host = urlsplit(url).netloc
        kind = type(exc).__name__
        may_have_arrived = isinstance(exc, requests.ReadTimeout) or (
            isinstance(exc, requests.ConnectionError) and not never_sent(exc)
        )
        if creates and may_have_arrived:
            raise UnknownOutcome(f"no answer from {host} after sending {method}; it may have been done: {kind}")
        raise Transient(f"could not reach {host}: {kind}") from exc


# --- reading answers ---------------------------------------------------------------------


def json_or_empty(response: requests.Response) -> dict[str, Any]:
    """The body as a JSON object; ``{}`` when it is empty, not JSON or not an object."""
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def as_int(value: Any) -> int | None:
    """A count the platform may send as a number or a string; None when absent or unreadable."""
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def parse_instant(value: Any, *, millis: bool = False) -> dt.datetime | None:
    """An aware UTC datetime from an ISO 8601 string (``Z``, ``+00:00`` or ``+0000``, optional
    fraction) or a Unix epoch number (seconds, or milliseconds with ``millis``); None otherwise."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return dt.datetime.fromtimestamp(value / 1000 if millis else value, dt.UTC)
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC)


def retry_at_from(headers: Any, *names: str, now: dt.datetime | None = None) -> dt.datetime | None:
    """When to retry, from the first readable header among ``names`` (default
    :data:`RETRY_HEADERS`): delta seconds, a Unix epoch, an ISO 8601 instant or an HTTP date."""
    now = now or utcnow()
    for name in names or RETRY_HEADERS:
        raw = headers.get(name) if headers is not None else None
        text = str(raw).strip() if raw is not None else ""
        if not text:
            continue
        try:
            number = float(text)
        except ValueError:
            number = None
        if number is not None:
            if number > 1_000_000_000:
                return dt.datetime.fromtimestamp(number, dt.UTC)
            return now + dt.timedelta(seconds=max(number, 0))
        instant = parse_instant(text)
        if instant is not None:
            return instant
        try:
            parsed = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            continue
        return parsed.astimezone(dt.UTC) if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    return None


def classify_http(status: int, message: str, headers: Any, *, reset_headers: tuple[str, ...] = ()) -> PlatformError:
    """The default reading of an HTTP status when the platform's body says nothing more precise."""
    if status == 401:
        return AuthError(message, http_status=status)
    if status == 429:
        return RateLimited(message, http_status=status, retry_at=retry_at_from(headers, "Retry-After", *reset_headers))
    if status >= 500:
        return Transient(message, http_status=status)
    if status == 403:
        return Permanent(message, error_code=ErrorCode.PERMISSION_MISSING, http_status=status)
    if status == 413 or status == 415:
        return Permanent(message, error_code=ErrorCode.MEDIA_REJECTED, http_status=status)
    return Permanent(message, error_code=ErrorCode.INVALID_REQUEST, http_status=status)


def token_credentials(
    token: dict[str, Any], *, external_id: str, previous_refresh: str = "", extra: dict[str, str] | None = None
) -> Credentials:
    """Credentials from an OAuth 2 token answer (``access_token``, optional ``refresh_token`` —
    else the one we had — and ``expires_in`` seconds)."""
    expires_in = as_int(token.get("expires_in"))
    return Credentials(
        access_token=str(token["access_token"]),
        refresh_token=str(token.get("refresh_token") or previous_refresh),
        external_id=external_id,
        expires_at=utcnow() + dt.timedelta(seconds=expires_in) if expires_in else None,
        extra=dict(extra or {}),
    )


# --- media we upload ourselves -----------------------------------------------------------


def download_media(session: requests.Session, url: str, *, timeout: float) -> tuple[bytes, str]:
    """The bytes and mime type of a media URL, for platforms that take uploaded bytes. A host
    failure is Transient; a missing or oversized file is the media's fault (media_rejected)."""
    try:
        response = session.get(url, timeout=timeout, stream=True)
    except requests.RequestException as exc:
        raise Transient(f"could not download media {url}: {type(exc).__name__}")
    with response:
        status = response.status_code
        if status >= 500:
            raise Transient(f"media host answered {status} for {url}", http_status=status)
        if status != 200:
            raise Permanent(
                f"media {url} could not be downloaded ({status})",
                error_code=ErrorCode.MEDIA_REJECTED,
                http_status=status,
            )
        declared = as_int(response.headers.get("Content-Length")) or 0
        if declared > MAX_MEDIA_BYTES:
            raise Permanent(f"media {url} is too large ({declared} bytes)", error_code=ErrorCode.MEDIA_REJECTED)
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_content(1024 * 1024):
            size += len(chunk)
            if size > MAX_MEDIA_BYTES:
                raise Permanent(
                    f"media {url} is larger than {MAX_MEDIA_BYTES} bytes", error_code=ErrorCode.MEDIA_REJECTED
                )
            chunks.append(chunk)
        mime = (response.headers.get("Content-Type") or "").split(";")[0].strip()
    if not mime or mime == "application/octet-stream":
        mime = mimetypes.guess_type(url)[0] or "application/octet-stream"
    return b"".join(chunks), mime


# --- a platform's second host ------------------------------------------------------------


def host_url(base_url: str, live_base_url: str, live_url: str, sandbox_path: str) -> str:
    """A platform endpoint on another host than the API (OAuth pages, a second API host): the
    real URL in live mode, ``<base><sandbox_path>`` when the client points at anything else (a
    simulator or a test double)."""
    if base_url.rstrip("/") == live_base_url.rstrip("/"):
        return live_url
    return base_url.rstrip("/") + sandbox_path


def dialog_url(*, api_base_url: str, live_host: str, dialog_host: str, path: str, query: dict[str, str]) -> str:
    """An OAuth consent page at ``path`` on the platform's web host in live mode, under the
    client's base otherwise."""
    path = "/" + path.lstrip("/")
    return f"{host_url(api_base_url, live_host, dialog_host + path, path)}?{urlencode(query)}"
