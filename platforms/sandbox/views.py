"""Shared pieces of the simulators and the control endpoints tests use to look inside them."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from platforms.base import Platform
from platforms.sandbox.scenarios import simulate_latency
from platforms.sandbox.store import SandboxStore


def simulator_view(
    slug: str, *, log: bool = True
) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Decorator for every simulator endpoint: CSRF off, ``SANDBOX_LATENCY_MS`` applied, and the
    call recorded in the platform's request log (method, path, and the view's ``log_summary``)."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @csrf_exempt
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            simulate_latency()
            response = view(request, *args, **kwargs)
            if log:
                summary = getattr(request, "sandbox_log", {})
                SandboxStore(slug).log_request(
                    request.method or "GET", request.path, {"status": response.status_code, **summary}
                )
            return response

        return wrapper

    return decorate


def json_body(request: HttpRequest) -> dict[str, Any]:
    if not request.body:
        return {}
    try:
        data = json.loads(request.body)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


@csrf_exempt
def control_requests(request: HttpRequest, slug: str) -> JsonResponse:
    """GET: every call the simulator received; DELETE: forget them."""
    if slug not in {p.slug for p in Platform}:
        return JsonResponse({"error": "unknown platform"}, status=404)
    store = SandboxStore(slug)
    if request.method == "DELETE":
        store.clear_requests()
        return JsonResponse({"cleared": True})
    return JsonResponse({"requests": store.requests()})


@csrf_exempt
def control_revoke(request: HttpRequest, slug: str, account_id: str) -> JsonResponse:
    """POST ``{"revoked": true|false}``: flip the per-account revoked flag (token checks fail)."""
    if slug not in {p.slug for p in Platform} or request.method != "POST":
        return JsonResponse({"error": "not found"}, status=404)
    revoked = bool(json_body(request).get("revoked", True))
    SandboxStore(slug).set_revoked(account_id, revoked)
    return JsonResponse({"accountId": account_id, "revoked": revoked})
