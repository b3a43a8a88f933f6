"""JSON error responses for code paths outside DRF views (middleware, Django handlers)."""

from __future__ import annotations

from django.http import JsonResponse

from core import errors


def json_error(error: errors.ApplicationError) -> JsonResponse:
    response = JsonResponse(error.body(), status=error.status_code)
    for name, value in error.headers.items():
        response[name] = value
    return response
