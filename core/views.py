"""Health endpoints and the JSON 404/500 for anything outside a DRF view."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from core import errors
from core.redis import get_redis
from core.responses import json_error


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    checks: dict[str, str] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:  # any driver error means not ready
        checks["database"] = f"error: {exc.__class__.__name__}"
    try:
        get_redis().ping()
        checks["redis"] = "ok"
    except Exception as exc:
        checks["redis"] = f"error: {exc.__class__.__name__}"
    ready = all(v == "ok" for v in checks.values())
    return JsonResponse({"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503)


# Unknown API routes answer the JSON 404 for every method; without the exemption Django's CSRF
# check (which DRF views skip) answered a POST/PATCH/DELETE there with an HTML 403 first.
@csrf_exempt
def api_not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    return json_error(errors.NotFound(f"Cannot {request.method} {request.path}", code="route_not_found"))


def server_error(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    return json_error(errors.ServerError())


def not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return api_not_found(request)
