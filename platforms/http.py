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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlencode, urlsplit

import requests
from django.conf import settings
from urllib3.exceptions import (
    ClosedPoolError,
    ConnectTimeoutError,
    EmptyPoolError,
    HTTPError,
    LocationValueError,
    NewConnectionError,
)

from platforms.base import (
    AuthError,
    Credentials,
    EditRequest,
    ErrorCode,
    Permanent,
    PlatformError,
    RateLimited,
    Transient,
    UnknownOutcome,
)
from platforms.transport import Wire, watching

# A media file larger than this is refused before (or while) downloading it into memory.
MAX_MEDIA_BYTES = 512 * 1024 * 1024
# Where platforms say when to come back, in the order they are trusted.
RETRY_HEADERS = ("Retry-After", "X-RateLimit-Reset", "X-Rate-Limit-Reset")
# Failures that happen before a request is written, by type: no connection (refused, DNS, connect
# timeout), no connection from the pool, a request that could not even be built.
_NEVER_SENT = (
    NewConnectionError,
    ConnectTimeoutError,
    EmptyPoolError,
    ClosedPoolError,
    LocationValueError,
    requests.ConnectTimeout,
    requests.exceptions.InvalidURL,
    requests.exceptions.MissingSchema,
    requests.exceptions.InvalidSchema,
    requests.exceptions.InvalidHeader,
    requests.exceptions.InvalidJSONError,
)
# Failures that may come after the request was written: no answer, or an answer cut short.
_MAYBE_SENT = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
)
_before_create: ContextVar[Callable[[], None] | None] = ContextVar("before_create", default=None)


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# --- sending -----------------------------------------------------------------------------


def never_sent(exc: BaseException, wire: Wire | None = None) -> bool:
    """True when the request provably never left. What the wire saw decides where the call went
    through a platform session (:mod:`platforms.transport`): nothing written means nothing sent,
    whatever the exception (refused, DNS, connect or TLS handshake failure or timeout, no
    connection from the pool). Elsewhere (another session, a test double) only the exception's
    type can tell, looking through the chain of causes urllib3 wraps around it."""
    if wire is not None and wire.written:
        return False
    if wire is not None and wire.reached_pool:
        return True
    seen: set[int] = set()
    stack: list[Any] = [exc]
    while stack:
        item = stack.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, _NEVER_SENT):
            return True
        stack.extend([item.__cause__, item.__context__, getattr(item, "reason", None), *item.args])
    return False


def may_have_arrived(exc: BaseException, wire: Wire | None = None) -> bool:
    """True when the request may have reached the platform although no answer came back (read
    timeout, connection reset or closed after sending, an answer cut short)."""
    if never_sent(exc, wire):
        return False
    return (wire is not None and wire.written) or isinstance(exc, _MAYBE_SENT)


@contextmanager
def before_creates(hook: Callable[[], None]) -> Iterator[None]:
    """Run ``hook`` right before each call that ``creates`` something leaves, inside the block (on
    this thread): the pipeline records there that the attempt started sending. If ``hook`` raises,
    nothing is sent and its exception propagates."""
    token = _before_create.set(hook)
    try:
        yield
    finally:
        _before_create.reset(token)


def send(
    session: requests.Session, method: str, url: str, *, timeout: float, creates: bool = False, **kwargs: Any
) -> requests.Response:
    """One HTTP call. Any failure below HTTP is ``Transient``, except for a call that ``creates``
    something and failed after the request may have left (read timeout, connection dropped after
    sending, an answer cut short): that is ``UnknownOutcome``, never to be re-sent blindly. A
    request that provably never left (:func:`never_sent`) is always ``Transient``: safe to retry.
    Messages name the host and the failure's class only (URLs may carry tokens)."""
    hook = _before_create.get() if creates else None
    if hook is not None:
        hook()
    with watching() as wire:
        try:
            return session.request(method, url, timeout=timeout, **kwargs)
        except (requests.RequestException, HTTPError) as exc:
            host = urlsplit(url).netloc
            kind = type(exc).__name__
            if creates and may_have_arrived(exc, wire):
                raise UnknownOutcome(f"no answer from {host} after sending {method}; it may have been done: {kind}")
            if never_sent(exc, wire):
                raise Transient(f"could not reach {host}, nothing was sent: {kind}") from exc
            raise Transient(f"could not reach {host}: {kind}") from exc


def refuse_edit_fields(platform: str, request: EditRequest, editable: frozenset[str]) -> None:
    """Raise Permanent (invalid_request) when ``request`` changes a field ``platform`` cannot
    change after publishing (its capabilities' ``edit_fields``), before anything is sent."""
    asked = {"text": request.text, "title": request.title, "media": request.media}
    refused = sorted(name for name, value in asked.items() if value is not None and name not in editable)
    if refused:
        can = ", ".join(sorted(editable)) or "nothing"
        raise Permanent(
            f"{platform} cannot change the {' or '.join(refused)} of a published post (it changes {can})",
            error_code=ErrorCode.INVALID_REQUEST,
        )


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


def web_url(base_url: str, live_base_url: str, live_url: str, sandbox_path: str) -> str:
    """A page of the platform's website a person opens (a post, a profile): for a client of a
    simulator (its base under SANDBOX_BASE_URL) the simulator's page at ``sandbox_path``, at the
    service's public address, since the simulated post exists nowhere else; the real URL
    otherwise (live mode, a proxy, a test double)."""
    sandbox = settings.SANDBOX_BASE_URL.rstrip("/")
    if base_url.rstrip("/") == live_base_url.rstrip("/") or not base_url.startswith(f"{sandbox}/"):
        return live_url
    return f"{settings.PUBLIC_BASE_URL}/sandbox{base_url.rstrip('/')[len(sandbox) :]}{sandbox_path}"


def dialog_url(*, api_base_url: str, live_host: str, dialog_host: str, path: str, query: dict[str, str]) -> str:
    """An OAuth consent page at ``path`` on the platform's web host in live mode, under the
    client's base otherwise."""
    path = "/" + path.lstrip("/")
    return f"{host_url(api_base_url, live_host, dialog_host + path, path)}?{urlencode(query)}"
