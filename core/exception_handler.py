"""Renders every exception raised in a DRF view as the error body of CONTRACT.md §3."""

from __future__ import annotations

import logging
from typing import Any

import redis
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.db import DataError
from django.http import Http404
from kombu.exceptions import OperationalError as BrokerUnreachable
from rest_framework import exceptions as drf
from rest_framework.response import Response

from core import errors

logger = logging.getLogger(__name__)


def flatten_validation_detail(detail: Any, prefix: str = "") -> list[str]:
    """Turn DRF's nested error detail into flat messages that each name their field."""
    if isinstance(detail, dict):
        messages: list[str] = []
        for key, value in detail.items():
            if isinstance(key, int):  # list items (ListField children) read as name[index]
                path = f"{prefix}[{key}]"
            else:
                name = str(key) if key != "non_field_errors" else ""
                path = f"{prefix}.{name}" if prefix and name else (prefix or name)
            messages.extend(flatten_validation_detail(value, path))
        return messages
    if isinstance(detail, list):
        messages = []
        for index, item in enumerate(detail):
            if isinstance(item, dict | list) and not _is_leaf_list(item):
                messages.extend(flatten_validation_detail(item, f"{prefix}[{index}]" if prefix else str(index)))
            else:
                messages.extend(flatten_validation_detail(item, prefix))
        return messages
    text = str(detail)
    if prefix and not text.startswith(prefix):
        return [f"{prefix}: {text}"]
    return [text]


def _is_leaf_list(item: Any) -> bool:
    return isinstance(item, list) and all(not isinstance(x, dict | list) for x in item)


# Redis (cooldowns, the simulators' state) or the broker out of reach: the request may be
# retried in a moment, so a 503 with Retry-After, never a 500. (Redis answering with an error is
# a bug of ours, not an outage, and stays a 500.)
OUTAGES = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, BrokerUnreachable)


def outage_error(exc: Exception) -> errors.ServiceUnavailable | None:
    if not isinstance(exc, OUTAGES):
        return None
    logger.warning("a dependency is unreachable: %s", exc.__class__.__name__)
    return errors.ServiceUnavailable()


def to_application_error(exc: Exception) -> errors.ApplicationError | None:
    if isinstance(exc, errors.ApplicationError):
        return exc
    outage = outage_error(exc)
    if outage is not None:
        return outage
    if isinstance(exc, drf.ValidationError):
        return errors.ValidationFailed(flatten_validation_detail(exc.detail) or ["Invalid request"])
    if isinstance(exc, drf.NotAuthenticated | drf.AuthenticationFailed):
        return errors.Unauthorized()
    if isinstance(exc, drf.PermissionDenied | DjangoPermissionDenied):
        return errors.PermissionDenied()
    if isinstance(exc, drf.NotFound | Http404):
        return errors.NotFound()
    if isinstance(exc, drf.MethodNotAllowed):
        return errors.MethodNotAllowed(str(exc.detail))
    if isinstance(exc, drf.UnsupportedMediaType):
        return errors.UnsupportedMediaType()
    if isinstance(exc, drf.ParseError):
        return errors.BadRequest(f"Malformed request body: {exc.detail}", code="malformed_body")
    if isinstance(exc, drf.NotAcceptable):
        return errors.ApplicationError("Only application/json responses are available", code="not_acceptable")
    if isinstance(exc, drf.Throttled):
        return errors.RateLimited()
    if isinstance(exc, DataError):
        # A value PostgreSQL refuses (out of range, NUL in text, ...) that validation let through:
        # still the client's input, so a 400, never a 500. Logged so the gap gets closed.
        logger.warning("database refused a request value (%s)", exc.__class__.__name__)
        return errors.BadRequest("A value in the request is invalid or out of range", code="invalid_value")
    return None


def error_response(error: errors.ApplicationError) -> Response:
    response = Response(error.body(), status=error.status_code)
    for name, value in error.headers.items():
        response[name] = value
    return response


def handle_exception(exc: Exception, context: dict[str, Any]) -> Response:
    error = to_application_error(exc)
    if error is None:
        logger.exception("Unhandled error in %s", context.get("view").__class__.__name__)
        error = errors.ServerError()
    response = error_response(error)
    auth_header = getattr(exc, "auth_header", None)
    if auth_header:
        response["WWW-Authenticate"] = auth_header
    return response
