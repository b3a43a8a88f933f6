"""Shared pieces of the simulators and the control endpoints tests use to look inside them."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from functools import partial, wraps
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse, RawPostDataException
from django.views.decorators.csrf import csrf_exempt

from platforms.base import Platform
from platforms.sandbox import faults
from platforms.sandbox.scenarios import simulate_latency
from platforms.sandbox.store import SandboxStore

logger = logging.getLogger("platforms.sandbox")


def simulator_view(
    slug: str, *, log: bool = True
) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Decorator for every simulator endpoint: CSRF off, ``SANDBOX_LATENCY_MS`` applied, an armed
    fault (:mod:`platforms.sandbox.faults`) answered instead of the view, and the call recorded
    in the platform's request log (method, path, and the view's ``log_summary``). An error the
    simulator answers (armed, or a scenario's) is the platform's answer, not an error of ours: one
    INFO line says so, and Django does not log it again as a server error."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @csrf_exempt
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            simulate_latency()
            fault = faults.take(slug, request.method or "GET", request.path, partial(_body_text, request))
            if fault is None or fault["kind"] == faults.TIMEOUT:
                response = view(request, *args, **kwargs)
            else:
                response = faults.renderers(slug)[fault["kind"]](request)
            if log:
                summary = {**getattr(request, "sandbox_log", {}), **({"fault": fault["kind"]} if fault else {})}
                SandboxStore(slug).log_request(
                    request.method or "GET", request.path, {"status": response.status_code, **summary}
                )
            if fault is not None or response.status_code >= 400:
                _log_simulated(slug, request, response, fault)
            if fault is not None and fault["kind"] == faults.TIMEOUT:
                time.sleep(float(fault["seconds"]))  # carried out (and logged), but answered too late
            return response

        return wrapper

    return decorate


def _log_simulated(slug: str, request: HttpRequest, response: HttpResponse, fault: dict[str, Any] | None) -> None:
    kind = fault["kind"] if fault is not None else ""
    logger.info(
        "sandbox %s answered %s %s with %s%s",
        slug,
        request.method,
        request.path,
        response.status_code,
        f" (armed fault: {kind})" if kind else "",
        extra={"simulator": slug, "status": response.status_code, "fault": kind or None},
    )
    # Django's own "Server Error"/"Bad Request" line (django.request) is skipped for a response
    # marked as logged: the simulator meant this answer.
    response._has_been_logged = True  # type: ignore[attr-defined]


def _body_text(request: HttpRequest) -> str:
    """The request body as text, for a fault that filters on it ("" when it cannot be read in
    memory: a large upload never matches such a fault)."""
    try:
        return request.body.decode("utf-8", "replace")
    except (RequestDataTooBig, RawPostDataException):
        return ""


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


@csrf_exempt
def control_faults(request: HttpRequest, slug: str) -> JsonResponse:
    """GET: the armed faults; DELETE: disarm them all; POST ``{"kind", "path", "method", "times",
    "seconds", "body"}``: the next ``times`` calls (default 1) whose path contains ``path`` (and
    whose body contains ``body``, when given) fail as ``kind`` (one of the platform's ``supported``
    kinds)."""
    if slug not in {p.slug for p in Platform}:
        return JsonResponse({"error": "unknown platform"}, status=404)
    if request.method == "DELETE":
        faults.clear(slug)
        return JsonResponse({"cleared": True})
    if request.method != "POST":
        return JsonResponse({"faults": faults.armed(slug), "supported": list(faults.supported(slug))})
    body = json_body(request)
    kind = str(body.get("kind") or "")
    if kind not in faults.supported(slug):
        return JsonResponse(
            {"error": f"{slug} has no fault {kind!r}", "supported": list(faults.supported(slug))}, status=400
        )
    try:
        times = int(body.get("times", 1))
        seconds = float(body.get("seconds", 0))
    except (TypeError, ValueError, OverflowError):
        return JsonResponse({"error": "times and seconds must be numbers"}, status=400)
    if times < 1 or not 0 <= seconds <= 60:
        return JsonResponse({"error": "times must be at least 1 and seconds within 0..60"}, status=400)
    fault = faults.arm(
        slug,
        kind,
        path=str(body.get("path") or ""),
        method=str(body.get("method") or ""),
        times=times,
        seconds=seconds,
        body=str(body.get("body") or ""),
    )
    return JsonResponse(fault, status=201)
