"""Pieces shared by the MASTODON, BLUESKY, TELEGRAM and TWITTER clients and their simulators:
classifying transport failures, reading rate-limit headers, fetching media to upload, and the
small request-parsing helpers the simulators have in common."""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import mimetypes
import time
from typing import Any

import requests
from django.http import HttpRequest, JsonResponse

from platforms.base import (
    AuthError,
    ErrorCode,
    Permanent,
    PlatformError,
    RateLimited,
    Transient,
    UnknownOutcome,
)

MEDIA_FETCH_TIMEOUT = 10.0
MAX_MEDIA_BYTES = 512 * 1024 * 1024


# --- client side -------------------------------------------------------------------------


def send(
    session: requests.Session, method: str, url: str, *, timeout: float, creates: bool = False, **kwargs: Any
) -> requests.Response:
    """One HTTP call. A failure before the request left (DNS, refused, connect timeout) is
    Transient; a read timeout or a dropped connection after sending is UnknownOutcome when the
    call ``creates`` something (it may have happened), Transient for anything else."""
    try:
        return session.request(method, url, timeout=timeout, **kwargs)
    except requests.ConnectTimeout as exc:
        raise Transient(f"connection timed out: {exc}")
    except requests.ReadTimeout as exc:
        if creates:
            raise UnknownOutcome(f"no answer within {timeout:g}s after sending; the post may exist: {exc}")
        raise Transient(f"read timed out: {exc}")
    except requests.ConnectionError as exc:
        if creates and not _failed_before_sending(exc):
            raise UnknownOutcome(f"connection dropped after sending; the post may exist: {exc}")
        raise Transient(f"connection failed: {exc}")
    except requests.RequestException as exc:
        raise Transient(f"request failed: {exc}")


def _failed_before_sending(exc: requests.ConnectionError) -> bool:
    from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError

    reason: BaseException | None = exc
    seen = 0
    while reason is not None and seen < 6:
        if isinstance(reason, NewConnectionError | NameResolutionError | ConnectTimeoutError):
            return True
        reason = getattr(reason, "reason", None) or reason.__context__ or (reason.args[0] if reason.args else None)
        if not isinstance(reason, BaseException):
            return False
        seen += 1
    return False


def parse_instant(value: Any) -> dt.datetime | None:
    """An ISO 8601 string (``Z`` or offset, optional fraction) as an aware UTC datetime."""
    if not value or not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC)


def retry_at_from(headers: Any, *names: str) -> dt.datetime | None:
    """When to retry, from the first header present among ``names`` (default ``Retry-After``).
    Accepts delta seconds, a Unix epoch, an ISO 8601 instant or an HTTP date."""
    now = dt.datetime.now(dt.UTC)
    for name in names or ("Retry-After",):
        raw = headers.get(name) if headers is not None else None
        if raw is None or str(raw).strip() == "":
            continue
        text = str(raw).strip()
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
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
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


def json_or_empty(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return {}


def download_media(session: requests.Session, url: str, *, timeout: float) -> tuple[bytes, str]:
    """The bytes and mime type of a media URL we must upload ourselves (platforms that do not
    pull URLs). A missing file is the media's fault (Permanent media_rejected)."""
    try:
        response = session.get(url, timeout=timeout, stream=True)
    except requests.RequestException as exc:
        raise Transient(f"could not fetch media {url}: {exc}")
    with response:
        if response.status_code >= 500:
            raise Transient(f"media host answered {response.status_code} for {url}", http_status=response.status_code)
        if response.status_code != 200:
            raise Permanent(
                f"media URL {url} answered {response.status_code}",
                error_code=ErrorCode.MEDIA_REJECTED,
                http_status=response.status_code,
            )
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


# --- simulator side ------------------------------------------------------------------------


def request_params(request: HttpRequest) -> dict[str, Any]:
    """Parameters of a simulator request from wherever the client put them: the query string,
    a form or multipart body, or a JSON object body (later sources win)."""
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
    elif request.method == "POST":
        for key, values in request.POST.lists():
            params[key] = values if key.endswith("[]") else values[-1]
    return params


def bearer_token(request: HttpRequest) -> str:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def fetch_public_media(url: str) -> tuple[bytes, str] | None:
    """What a platform that pulls media by URL would get; None when it cannot be fetched."""
    try:
        response = requests.get(url, timeout=MEDIA_FETCH_TIMEOUT)
    except requests.RequestException:
        return None
    if response.status_code != 200 or not response.content:
        return None
    mime = (response.headers.get("Content-Type") or "").split(";")[0].strip()
    return response.content, mime or (mimetypes.guess_type(url)[0] or "application/octet-stream")


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
    return "application/octet-stream"


def growing(published_ts: float, per_minute: float, *, offset: int = 0) -> int:
    """A metric that grows with the minutes since publication, so refreshes see new numbers."""
    return offset + int(max(time.time() - published_ts, 0) / 60 * per_minute)


def iso_utc(ts: float) -> str:
    stamp = dt.datetime.fromtimestamp(ts, dt.UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> JsonResponse:
    response = JsonResponse(data, status=status, safe=False)
    for key, value in (headers or {}).items():
        response[key] = value
    return response
