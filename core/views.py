"""Health endpoints and the JSON 404/500 for anything outside a DRF view."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from core import errors, health
from core.responses import json_error


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    """Each dependency named with its state. 503 only when this process cannot serve (PostgreSQL
    or Redis down); a stale beat or a late publish backlog is reported as ``degraded`` with 200,
    so a load balancer keeps sending API traffic to web processes that can still answer it."""
    checks = health.readiness()
    if any(not check.ok and check.critical for check in checks):
        status, code = "unavailable", 503
    elif any(not check.ok for check in checks):
        status, code = "degraded", 200
    else:
        status, code = "ok", 200
    return JsonResponse({"status": status, "checks": {check.name: check.text for check in checks}}, status=code)


# Unknown API routes answer the JSON 404 for every method; without the exemption Django's CSRF
# check (which DRF views skip) answered a POST/PATCH/DELETE there with an HTML 403 first.
@csrf_exempt
def api_not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    return json_error(errors.NotFound(f"Cannot {request.method} {request.path}", code="route_not_found"))


def server_error(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    return json_error(errors.ServerError())


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return api_not_found(request)
