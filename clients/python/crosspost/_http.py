"""What the sync and async clients share: settings, request building, and the retry policy
(network errors, 5xx and 429 retried; waits from ``Retry-After`` / ``RateLimit-*``)."""

from __future__ import annotations

import datetime as dt
import os
import random
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from crosspost import __version__
from crosspost.errors import APIError, ConfigurationError, error_for

DEFAULT_BASE_URL = "http://127.0.0.1:8000/api/v1"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# A duplicate of a POST whose first attempt is still running answers 409 with this code: the
# service asks to retry shortly (core/idempotency.py).
RETRY_CODES = frozenset({"idempotency_in_progress"})


@dataclass
class Settings:
    api_key: str
    base_url: str = DEFAULT_BASE_URL
    workspace_id: str | None = None
    timeout: float = 30.0
    max_retries: int = 3
    backoff: float = 0.5
    max_wait: float = 60.0
    user_agent: str = f"crosspost-python/{__version__}"
    # Set from RateLimit-Remaining: 0; the next request waits until then instead of taking a 429.
    not_before: float = field(default=0.0, repr=False)

    @classmethod
    def resolve(
        cls,
        api_key: str | None = None,
        base_url: str | None = None,
        workspace_id: str | None = None,
        **options: Any,
    ) -> Settings:
        """Explicit arguments first, then ``CROSSPOST_API_KEY`` / ``CROSSPOST_BASE_URL`` /
        ``CROSSPOST_WORKSPACE_ID``."""
        key = api_key or os.environ.get("CROSSPOST_API_KEY")
        if not key:
            raise ConfigurationError("no API key: pass api_key= or set CROSSPOST_API_KEY")
        base = (base_url or os.environ.get("CROSSPOST_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        workspace = workspace_id or os.environ.get("CROSSPOST_WORKSPACE_ID") or None
        return cls(api_key=key, base_url=base, workspace_id=workspace, **options)

    def headers(self) -> dict[str, str]:
        headers = {
            "Authorization": f"Bearer {self.api_key}",
            "Accept": "application/json",
            "User-Agent": self.user_agent,
        }
        if self.workspace_id:
            headers["X-Workspace-Id"] = self.workspace_id
        return headers


@dataclass(frozen=True)
class PreparedRequest:
    method: str
    url: str
    params: list[tuple[str, str | int | float | bool | None]]
    json: Any
    headers: dict[str, str]


def camel(name: str) -> str:
    """``media_urls`` → ``mediaUrls``; ``from_`` → ``from``; camelCase passes through."""
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def to_wire(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def query_pairs(params: Mapping[str, Any] | None) -> list[tuple[str, str | int | float | bool | None]]:
    """Query parameters with camelCase names; lists as repeated keys; ``None`` left out."""
    pairs: list[tuple[str, str | int | float | bool | None]] = []
    for name, value in (params or {}).items():
        if value is None:
            continue
        values = value if isinstance(value, list | tuple) else [value]
        pairs.extend((camel(name), str(to_wire(v))) for v in values)
    return pairs


def body_of(body: Mapping[str, Any] | None, fields: Mapping[str, Any]) -> dict[str, Any] | None:
    """``body`` as given, updated with the keyword fields (top-level names made camelCase)."""
    if body is None and not fields:
        return None
    merged = dict(body or {})
    merged.update({camel(k): to_wire(v) for k, v in fields.items() if v is not None})
    return merged


def prepare(
    settings: Settings,
    method: str,
    path: str,
    *,
    params: Mapping[str, Any] | None = None,
    json: Any = None,
    idempotency_key: str | None = None,
) -> PreparedRequest:
    headers = settings.headers()
    if method == "POST":
        # One key per logical call, reused by every retry: the service acts once.
        headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        if json is None:
            json = {}
    return PreparedRequest(method, settings.base_url + path, query_pairs(params), json, headers)


def retry_delay(settings: Settings, attempt: int, response: httpx.Response | None) -> float | None:
    """Seconds to wait before attempt ``attempt + 1``, or ``None`` when this outcome is final."""
    if attempt >= settings.max_retries:
        return None
    if response is not None:
        if not _retryable(response):
            return None
        for header in ("Retry-After", "RateLimit-Reset"):
            waited = _seconds(response.headers.get(header))
            if waited is not None and (header == "Retry-After" or response.status_code == 429):
                return min(waited, settings.max_wait)
    backoff: float = settings.backoff * (2**attempt)
    return min(backoff * (0.5 + random.random()), settings.max_wait)


def _retryable(response: httpx.Response) -> bool:
    if response.status_code in RETRY_STATUSES:
        return True
    if response.status_code == 409:
        return _json(response).get("code") in RETRY_CODES
    return False


def note_rate_limit(settings: Settings, response: httpx.Response) -> None:
    """After the last request of a window, hold the next one until the window rolls over."""
    remaining, reset = response.headers.get("RateLimit-Remaining"), _seconds(response.headers.get("RateLimit-Reset"))
    if remaining is not None and remaining.strip() == "0" and reset is not None:
        settings.not_before = time.monotonic() + min(reset, settings.max_wait)


def pause_before_request(settings: Settings) -> float:
    return max(0.0, settings.not_before - time.monotonic())


def result_of(response: httpx.Response) -> Any:
    """The JSON body of a success; raises the matching :class:`APIError` otherwise."""
    if response.is_success:
        if not response.content:
            return None
        return response.json()
    raise error_for(response.status_code, _json(response) or response.text, response.headers)


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _seconds(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        return None


__all__ = ["APIError", "PreparedRequest", "Settings", "prepare", "result_of", "retry_delay"]
