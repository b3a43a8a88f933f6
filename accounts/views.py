"""The hosted connect pages: plain server-rendered HTML, no JavaScript, usable on a phone, in the
workspace's branding (``accounts.branding``).

``/connect/<token>`` lists the platforms; ``/connect/<token>/<PLATFORM>`` starts that platform's
connection; ``/connect/callback/<PLATFORM>`` receives the OAuth redirect. Every failure is an
error page with a 4xx/5xx status, never a stack trace. A link with a ``redirectUrl`` sends the
browser there instead (303) when the flow ends: ``outcome=connected&platform=…&accountId=…&
accountIds=…`` (every account it connected, comma-separated), or ``outcome=error&error=<code>&
platform=…`` for a failure that happens once the link is known.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.http import require_http_methods, require_safe

from accounts.branding import Branding, branding_get
from accounts.connect import (
    ConnectOutcome,
    ConnectPageError,
    ConnectStep,
    connect_begin,
    connect_complete_oauth,
    connect_submit_credentials,
    link_platforms,
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


def _brand(workspace_id: str | None) -> dict[str, Any]:
    branding = branding_get(workspace_id=workspace_id) if workspace_id else Branding()
    return {
        "name": branding.display_name,
        "logo_url": branding.logo_url,
        "accent": branding.accent_color,
        "accent_text": branding.accent_text_color,
        "support_url": branding.support_url,
    }


def _page(
    request: HttpRequest, template: str, context: dict[str, Any], status: int = 200, workspace_id: str | None = None
) -> HttpResponse:
    response = render(
        request, f"accounts/connect/{template}", {**context, "brand": _brand(workspace_id)}, status=status
    )
    response["Cache-Control"] = "no-store"
    response["Referrer-Policy"] = "no-referrer"
    return response


def _error_page(
    request: HttpRequest, status: int, title: str, message: str, workspace_id: str | None = None
) -> HttpResponse:
    return _page(request, "error.html", {"title": title, "message": message}, status=status, workspace_id=workspace_id)


def outcome_url(base: str, params: dict[str, str]) -> str:
    """``base`` (a link's redirectUrl) with ``params`` in its query: its own parameters are kept,
    but for those of the same names, which ours replace."""
    parts = urlsplit(base)
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in params]
    return urlunsplit(parts._replace(query=urlencode([*kept, *params.items()])))


def _redirect(url: str) -> HttpResponse:
    response = HttpResponseRedirect(url)
    response.status_code = 303
    response["Cache-Control"] = "no-store"
    response["Referrer-Policy"] = "no-referrer"
    return response


def page_errors(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Turn every failure of a connect page into an error page."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except ConnectPageError as exc:
            if exc.redirect_url:
                params = {"outcome": "error", "error": exc.code}
                if exc.platform:
                    params["platform"] = exc.platform
                return _redirect(outcome_url(exc.redirect_url, params))
            return _error_page(request, exc.status, exc.title, exc.message, workspace_id=exc.workspace_id)
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
    if outcome.redirect_url:
        ids = [account.id for account in outcome.accounts]
        params = {"outcome": "connected", "platform": outcome.platform.value, "accountId": ids[0]}
        params["accountIds"] = ",".join(ids)
        return _redirect(outcome_url(outcome.redirect_url, params))
    workspace_id = outcome.accounts[0].workspace_id if outcome.accounts else None
    context = {
        "platform_label": PLATFORM_LABELS[outcome.platform],
        "accounts": outcome.accounts,
        "again_url": f"/connect/{outcome.token}" if outcome.token else "",
    }
    return _page(request, "success.html", context, workspace_id=workspace_id)


def _render_step(
    request: HttpRequest, token: str, platform: Platform, step: ConnectStep, workspace_id: str
) -> HttpResponse:
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
    return _page(request, "credentials.html", context, status=400 if step.errors else 200, workspace_id=workspace_id)


@require_safe
@page_errors
def connect_home(request: HttpRequest, token: str) -> HttpResponse:
    link = live_link(token)
    platforms = [
        {"label": PLATFORM_LABELS[p], "url": f"/connect/{token}/{p.value}", "value": p.value}
        for p in link_platforms(link)
    ]
    return _page(request, "choose.html", {"platforms": platforms}, workspace_id=link.workspace_id)


@require_http_methods(["GET", "POST"])
@csrf_protect
@page_errors
def connect_platform(request: HttpRequest, token: str, platform: str) -> HttpResponse:
    chosen = parse_platform(platform)
    workspace_id = live_link(token).workspace_id
    if request.method == "POST":
        fields = {k: str(v) for k, v in request.POST.items() if k != "csrfmiddlewaretoken"}
        step = connect_submit_credentials(token=token, platform_name=platform, fields=fields)
    else:
        step = connect_begin(token=token, platform_name=platform, manual=request.GET.get("manual") == "1")
    return _render_step(request, token, chosen, step, workspace_id)


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
