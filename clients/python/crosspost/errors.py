"""Exceptions of the SDK. An :class:`APIError` carries the service's error body whole."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class CrosspostError(Exception):
    """Base of every error this package raises."""


class ConfigurationError(CrosspostError):
    """No API key or base URL could be found."""


class TransportError(CrosspostError):
    """The service could not be reached (after the retries)."""


class WaitTimeout(CrosspostError):
    """``wait_for`` gave up before the post reached a final status."""

    def __init__(self, message: str, last: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.last: dict[str, Any] = dict(last or {})


class InvalidSignature(CrosspostError):
    """A webhook delivery whose signature (or timestamp) does not verify."""


class APIError(CrosspostError):
    """An error answer of the service: ``{statusCode, error, message, code?, requiredPermission?}``."""

    def __init__(self, status_code: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        self.status_code = status_code
        self.body: dict[str, Any] = body if isinstance(body, dict) else {"message": body}
        self.headers = dict(headers or {})
        self.code: str | None = self.body.get("code")
        self.error: str | None = self.body.get("error")
        raw = self.body.get("message")
        self.messages: list[str] = [str(m) for m in raw] if isinstance(raw, list) else ([str(raw)] if raw else [])
        self.required_permission: str | None = self.body.get("requiredPermission")
        self.request_id: str | None = _header(self.headers, "x-request-id")
        super().__init__(self._summary())

    @property
    def message(self) -> str:
        return "; ".join(self.messages)

    def _summary(self) -> str:
        parts = [f"{self.status_code} {self.error or ''}".strip()]
        if self.code:
            parts.append(f"[{self.code}]")
        if self.message:
            parts.append(self.message)
        if self.required_permission:
            parts.append(f"(requires {self.required_permission})")
        if self.request_id:
            parts.append(f"request {self.request_id}")
        return " ".join(parts)


class BadRequest(APIError):
    """400 or 422: the request was refused as it is."""


class AuthenticationError(APIError):
    """401: the key or token is missing, unknown, revoked or expired."""


class PermissionDenied(APIError):
    """403: the role lacks ``required_permission``, or the workspace is out of reach."""


class NotFound(APIError):
    """404 (also an object of another workspace)."""


class Conflict(APIError):
    """409."""


class RateLimited(APIError):
    """429 that outlasted the retries."""


class ServerError(APIError):
    """5xx that outlasted the retries."""


_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequest,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    422: BadRequest,
    429: RateLimited,
}


def error_for(status_code: int, body: Any, headers: Mapping[str, str] | None = None) -> APIError:
    cls = _BY_STATUS.get(status_code) or (ServerError if status_code >= 500 else APIError)
    return cls(status_code, body, headers)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None
