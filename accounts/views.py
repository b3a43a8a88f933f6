"""The hosted connect pages: plain server-rendered HTML, no JavaScript, usable on a phone.

``/connect/<token>`` lists the platforms; ``/connect/<token>/<PLATFORM>`` starts that platform's
connection; ``/connect/callback/<PLATFORM>`` receives the OAuth redirect. Every failure is an
error page with a 4xx/5xx status, never a stack trace.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.http import require_http_methods, require_safe

from accounts.connect import (
    ConnectOutcome,
    ConnectPageError,
    ConnectStep,
    connect_begin,
    connect_complete_oauth,
    connect_submit_credentials,
    live_link,
    parse_platform,
)
from platforms.base import Platform

logger = logging.getLogger(__name__)

PLATFORM_LABELS: dict[Platform, str] = {
    Platform.FACEBOOK: "Facebook Page",
    Platform.INSTAGRAM: "Instagram",
    Platform.THREADS: "Threads",
    Platform.TIKTOK: "TikTok",
    Platform.TWITTER: "X (Twitter)",
    Platform.BLUESKY: "Bluesky",
    Platform.LINKEDIN: "LinkedIn",
    Platform.PINTEREST: "Pinterest",
    Platform.YOUTUBE: "YouTube",
    Platform.MASTODON: "Mastodon",
    Platform.TELEGRAM: "Telegram",
    Platform.GOOGLE_BUSINESS: "Google Business Profile",
}
SECRET_HINTS = ("password", "token", "secret")


def _page(request: HttpRequest, template: str, context: dict[str, Any], status: int = 200) -> HttpResponse:
    response = render(request, f"accounts/connect/{template}", context, status=status)
    response["Cache-Control"] = "no-store"
    response["Referrer-Policy"] = "no-referrer"
    return response


def _error_page(request: HttpRequest, status: int, title: str, message: str) -> HttpResponse:
    return _page(request, "error.html", {"title": title, "message": message}, status=status)


def page_errors(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Turn every failure of a connect page into an error page."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except ConnectPageError as exc:
            return _error_page(request, exc.status, exc.title, exc.message)
        except Exception:
            logger.exception("connect page %s failed", request.path.split("/")[1:2])
            return _error_page(
                request, 500, "Something went wrong", "We could not finish connecting. Please try again later."
            )

    return wrapper


def _field(request: HttpRequest, name: str) -> dict[str, str]:
    label = name.replace("_", " ").strip().capitalize()
    secret = any(hint in name.lower() for hint in SECRET_HINTS)
    value = "" if secret else str(request.POST.get(name, ""))  # typed secrets are never echoed back
    return {"name": name, "label": label, "type": "password" if secret else "text", "value": value}


def _success(request: HttpRequest, outcome: ConnectOutcome) -> HttpResponse:
    context = {
        "platform_label": PLATFORM_LABELS[outcome.platform],
        "accounts": outcome.accounts,
        "again_url": f"/connect/{outcome.token}" if outcome.token else "",
    }
    return _page(request, "success.html", context)


def _render_step(request: HttpRequest, token: str, platform: Platform, step: ConnectStep) -> HttpResponse:
    if step.outcome is not None:
        return _success(request, step.outcome)
    if step.redirect_to:
        return HttpResponseRedirect(step.redirect_to)
    context = {
        "platform_label": PLATFORM_LABELS[platform],
        "fields": [_field(request, name) for name in step.form_fields],
        "errors": step.errors,
        "back_url": f"/connect/{token}",
    }
    return _page(request, "credentials.html", context, status=400 if step.errors else 200)


@require_safe
@page_errors
def connect_home(request: HttpRequest, token: str) -> HttpResponse:
    live_link(token)
    platforms = [
        {"label": PLATFORM_LABELS[p], "url": f"/connect/{token}/{p.value}", "value": p.value} for p in Platform
    ]
    return _page(request, "choose.html", {"platforms": platforms})


@require_http_methods(["GET", "POST"])
@csrf_protect
@page_errors
def connect_platform(request: HttpRequest, token: str, platform: str) -> HttpResponse:
    chosen = parse_platform(platform)
    if request.method == "POST":
        fields = {k: str(v) for k, v in request.POST.items() if k != "csrfmiddlewaretoken"}
        step = connect_submit_credentials(token=token, platform_name=platform, fields=fields)
    else:
        step = connect_begin(token=token, platform_name=platform, manual=request.GET.get("manual") == "1")
    return _render_step(request, token, chosen, step)


@require_safe
@page_errors
def connect_callback(request: HttpRequest, platform: str) -> HttpResponse:
    outcome = connect_complete_oauth(
        platform_name=platform,
        code=request.GET.get("code", ""),
        state=request.GET.get("state", ""),
        error=request.GET.get("error", ""),
        error_description=request.GET.get("error_description", ""),
    )
    return _success(request, outcome)
