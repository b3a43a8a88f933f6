"""HTTP plumbing shared by the LinkedIn, Pinterest, YouTube and Google Business clients:
classifying transport failures, reading rate-limit headers, fetching media to upload, and
placing a platform's second host (its OAuth pages) under the simulator base in sandbox mode."""

from __future__ import annotations

import datetime as dt
from email.utils import parsedate_to_datetime
from typing import Any

import requests
from urllib3.exceptions import NameResolutionError, NewConnectionError

from platforms.base import ErrorCode, Permanent, Transient, UnknownOutcome

# A media file larger than this is refused before downloading it into memory.
MAX_MEDIA_BYTES = 512 * 1024 * 1024


def _never_sent(exc: BaseException) -> bool:
    """True when the connection failed before any byte of the request left (nothing to doubt)."""
    seen: set[int] = set()
    stack: list[Any] = [exc]
    while stack:
        item = stack.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, NewConnectionError | NameResolutionError | requests.exceptions.ConnectTimeout):
            return True
        if isinstance(item, BaseException):
            stack.extend([item.__cause__, item.__context__, getattr(item, "reason", None), *item.args])
    return False


def send(
    session: requests.Session, method: str, url: str, *, timeout: float, creating: bool = False, **kwargs: Any
) -> requests.Response:
    """One HTTP call. A failure before sending is ``Transient``; a timeout or dropped connection
    after sending a call that creates something is ``UnknownOutcome`` (never re-send blindly)."""
    try:
        return session.request(method, url, timeout=timeout, **kwargs)
    except requests.exceptions.ConnectTimeout as exc:
        raise Transient(f"could not connect to the platform: {type(exc).__name__}")
    except requests.exceptions.ReadTimeout:
        if creating:
            raise UnknownOutcome("the platform did not answer in time after the request was sent")
        raise Transient("the platform did not answer in time")
    except requests.exceptions.ConnectionError as exc:
        if creating and not _never_sent(exc):
            raise UnknownOutcome("the connection dropped after the request was sent")
        raise Transient(f"could not reach the platform: {type(exc).__name__}")


def retry_at_from(headers: Any, *, now: dt.datetime | None = None) -> dt.datetime | None:
    """When to try again, from ``Retry-After`` (seconds or an HTTP date) or an
    ``X-RateLimit-Reset`` style header (epoch seconds, or seconds from now when small)."""
    now = now or dt.datetime.now(dt.UTC)
    retry_after = (headers.get("Retry-After") or "").strip()
    if retry_after:
        if retry_after.isdigit():
            return now + dt.timedelta(seconds=int(retry_after))
        try:
            return parsedate_to_datetime(retry_after).astimezone(dt.UTC)
        except (TypeError, ValueError):
            pass
    for name in ("X-RateLimit-Reset", "X-Rate-Limit-Reset"):
        value = (headers.get(name) or "").strip()
        try:
            number = float(value)
        except ValueError:
            continue
        if number > 1_000_000_000:
            return dt.datetime.fromtimestamp(number, dt.UTC)
        return now + dt.timedelta(seconds=number)
    return None


def fetch_media(session: requests.Session, url: str, *, timeout: float) -> tuple[bytes, str]:
    """Download a public media URL for a platform that takes uploaded bytes: (bytes, mime type)."""
    try:
        response = session.get(url, timeout=timeout, stream=True)
    except requests.RequestException as exc:
        raise Transient(f"could not download media {url}: {type(exc).__name__}")
    with response:
        if response.status_code >= 500:
            raise Transient(f"media host answered {response.status_code} for {url}")
        if response.status_code >= 400:
            raise Permanent(
                f"media {url} could not be downloaded ({response.status_code})", error_code=ErrorCode.MEDIA_REJECTED
            )
        declared = int(response.headers.get("Content-Length") or 0)
        if declared > MAX_MEDIA_BYTES:
            raise Permanent(f"media {url} is too large ({declared} bytes)", error_code=ErrorCode.MEDIA_REJECTED)
        data = response.content
    mime = (response.headers.get("Content-Type") or "application/octet-stream").split(";")[0].strip()
    return data, mime


def host_url(base_url: str, live_base_url: str, live_url: str, sandbox_path: str) -> str:
    """A platform endpoint on another host than the API (OAuth pages, a second API host): the
    real URL in live mode, ``<base><sandbox_path>`` when the client points at a simulator."""
    if base_url.rstrip("/") == live_base_url.rstrip("/"):
        return live_url
    return base_url.rstrip("/") + sandbox_path


def parse_time(value: Any) -> dt.datetime | None:
    """An ISO 8601 string (``Z`` or offset) or epoch milliseconds, as an aware UTC datetime."""
    if value in (None, ""):
        return None
    if isinstance(value, int | float):
        return dt.datetime.fromtimestamp(value / 1000, dt.UTC)
    try:
        parsed = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def as_int(value: Any) -> int | None:
    """A count the platform may send as a number or a string; None when absent."""
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def json_or_empty(response: requests.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
