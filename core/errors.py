"""The one error hierarchy. Every error the service answers with is an ApplicationError (or is
translated into one by ``core.exception_handler``), rendered as
``{statusCode, error, message, code?, ...extra}``."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any


class ApplicationError(Exception):
    status_code: int = 400
    code: str | None = None
    default_message: str = "Bad request"

    def __init__(
        self,
        message: str | list[str] | None = None,
        *,
        code: str | None = None,
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.message: str | list[str] = message if message is not None else self.default_message
        if code is not None:
            self.code = code
        self.extra = extra or {}
        self.headers = headers or {}
        super().__init__(self.message if isinstance(self.message, str) else "; ".join(self.message))

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "statusCode": self.status_code,
            "error": HTTPStatus(self.status_code).phrase,
            "message": self.message,
        }
        if self.code:
            body["code"] = self.code
        body.update(self.extra)
        return body


class ValidationFailed(ApplicationError):
    """400 with a list of human-readable messages, each naming its field."""

    status_code = 400
    code = "validation_error"
    default_message = "Validation failed"

    def __init__(self, messages: str | list[str], *, code: str | None = None, **kwargs: Any) -> None:
        super().__init__(messages if isinstance(messages, list) else [messages], code=code, **kwargs)


class BadRequest(ApplicationError):
    status_code = 400


class Unauthorized(ApplicationError):
    status_code = 401
    code = "unauthorized"
    default_message = "API key is invalid or missing"


class PermissionDenied(ApplicationError):
    status_code = 403
    code = "permission_denied"
    default_message = "Your key lacks the permission this operation needs"


class WorkspaceAccessDenied(ApplicationError):
    status_code = 403
    code = "workspace_access_denied"
    default_message = "You do not have access to this workspace"


class WorkspaceRequired(ApplicationError):
    """An organization key called an operation that acts in a workspace without naming one."""

    status_code = 400
    code = "workspace_required"
    default_message = (
        "An organization key acts in a workspace only when X-Workspace-Id names one of its organization's workspaces"
    )


class WorkspaceInactive(ApplicationError):
    """The workspace's deletion was requested: nothing acts in it until it is restored."""

    status_code = 403
    code = "workspace_inactive"
    default_message = (
        "This workspace was deleted; its organization can restore it until the grace period ends "
        "(POST /workspaces/{id}/restore)"
    )


class SubscriptionRequired(ApplicationError):
    """The organization's plan does not allow this: a limit of the plan is reached. The body names
    the limit (``limit``), the plan (``plan``), the limit's value (``max``) and the count (``used``)."""

    status_code = 403
    code = "subscription_required"
    default_message = "Your organization's plan does not include this operation"


class NotFound(ApplicationError):
    status_code = 404
    code = "not_found"
    default_message = "Not found"


class MethodNotAllowed(ApplicationError):
    status_code = 405
    code = "method_not_allowed"
    default_message = "Method not allowed"


class Conflict(ApplicationError):
    status_code = 409
    code = "conflict"
    default_message = "Conflict"


class PayloadTooLarge(ApplicationError):
    status_code = 413
    code = "payload_too_large"
    default_message = "Request body is too large"


class RequestTimeout(ApplicationError):
    status_code = 408
    code = "request_body_timeout"
    default_message = "The request body stopped arriving"


class HeadersTooLarge(ApplicationError):
    status_code = 431
    code = "request_header_too_large"
    default_message = "Request line and headers are too large"


class UnsupportedMediaType(ApplicationError):
    status_code = 415
    code = "unsupported_media_type"
    default_message = "Content-Type must be application/json"


class Unprocessable(ApplicationError):
    status_code = 422
    code = "unprocessable"
    default_message = "Unprocessable request"


class RateLimited(ApplicationError):
    status_code = 429
    code = "rate_limited"
    default_message = "Rate limit exceeded"


class ServiceUnavailable(ApplicationError):
    """A server the request needs (Redis: cooldowns, the broker) cannot be reached just now."""

    status_code = 503
    code = "service_unavailable"
    default_message = "A service this request needs is unavailable; retry shortly"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message, headers={"Retry-After": "5"})


class ServerError(ApplicationError):
    status_code = 500
    code = "internal_error"
    default_message = "Internal server error"
