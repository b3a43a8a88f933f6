"""Google OAuth 2.0 and the Google API error envelope, as the YouTube and Google Business
simulators both need them (each mounts its own copy of the endpoints under its base)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import URLPattern, path

from platforms.sandbox.common import bearer_token, redirect_with
from platforms.sandbox.store import SandboxStore

ACCESS_TTL = 3599
REFRESH_TTL = 180 * 86400
STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ALREADY_EXISTS",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def google_error(status: int, reason: str, message: str, *, domain: str = "global") -> JsonResponse:
    return JsonResponse(
        {
            "error": {
                "code": status,
                "message": message,
                "errors": [{"message": message, "domain": domain, "reason": reason}],
                "status": STATUS_NAMES.get(status, "UNKNOWN"),
            }
        },
        status=status,
    )


def unauthenticated() -> JsonResponse:
    return google_error(
        401,
        "authError",
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other "
        "valid authentication credential.",
    )


def account_of(store: SandboxStore, request: HttpRequest) -> str | None:
    """The simulated Google user behind the bearer token, unless the token is unknown or revoked."""
    token = store.token(bearer_token(request))
    if not token or token.get("kind") != "access" or store.is_revoked(token["account_id"]):
        return None
    return str(token["account_id"])


def page_window(
    request: HttpRequest, items: list[Any], *, size_param: str, default: int, maximum: int
) -> tuple[list[Any], str | None] | None:
    """(this page, nextPageToken) with an opaque offset token; None for bad paging input."""
    try:
        size = int(request.GET.get(size_param) or default)
        token = request.GET.get("pageToken", "")
        start = int(base64.urlsafe_b64decode(token.encode()).decode()) if token else 0
    except ValueError:
        return None
    if not 0 <= size <= maximum or start < 0:
        return None
    more = start + size < len(items)
    return items[start : start + size], base64.urlsafe_b64encode(str(start + size).encode()).decode() if more else None


def oauth_urlpatterns(
    store: SandboxStore,
    view: Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]],
    new_user: Callable[[], str],
) -> list[URLPattern]:
    """``o/oauth2/v2/auth`` (auto-approves: a new simulated user each time) and ``token``."""

    def oauth_error(status: int, error: str, description: str) -> JsonResponse:
        return JsonResponse({"error": error, "error_description": description}, status=status)

    @view
    def authorize(request: HttpRequest) -> HttpResponse:
        redirect_uri = request.GET.get("redirect_uri", "")
        if not request.GET.get("client_id") or not redirect_uri or request.GET.get("response_type") != "code":
            return oauth_error(400, "invalid_request", "client_id, redirect_uri and response_type=code are required")
        scopes = request.GET.get("scope", "")
        offline = request.GET.get("access_type") == "offline"
        code = store.issue_token(
            new_user(), kind="code", ttl=600, redirect_uri=redirect_uri, scope=scopes, offline=offline
        )
        return redirect_with(redirect_uri, code=code, state=request.GET.get("state", ""), scope=scopes)

    @view
    def token(request: HttpRequest) -> HttpResponse:
        if request.method != "POST":
            return oauth_error(405, "invalid_request", "POST required")
        if not request.POST.get("client_id") or not request.POST.get("client_secret"):
            return oauth_error(401, "invalid_client", "The OAuth client was not found.")
        grant = request.POST.get("grant_type")
        body: dict[str, Any] = {"expires_in": ACCESS_TTL, "token_type": "Bearer"}
        if grant == "authorization_code":
            code = store.token(request.POST.get("code", ""))
            if not code or code.get("kind") != "code" or code.get("redirect_uri") != request.POST.get("redirect_uri"):
                return oauth_error(400, "invalid_grant", "Malformed auth code.")
            store.revoke_token(request.POST["code"])
            account_id = code["account_id"]
            body["scope"] = code.get("scope", "")
            if code.get("offline"):
                body["refresh_token"] = store.issue_token(
                    account_id, kind="refresh", ttl=REFRESH_TTL, scope=body["scope"]
                )
        elif grant == "refresh_token":
            refresh = store.token(request.POST.get("refresh_token", ""))
            if not refresh or refresh.get("kind") != "refresh" or store.is_revoked(refresh["account_id"]):
                return oauth_error(400, "invalid_grant", "Token has been expired or revoked.")
            account_id = refresh["account_id"]
            body["scope"] = refresh.get("scope", "")
        else:
            return oauth_error(400, "unsupported_grant_type", "Invalid grant_type.")
        body["access_token"] = store.issue_token(account_id, ttl=ACCESS_TTL)
        return JsonResponse(body)

    @view
    def revoke(request: HttpRequest) -> HttpResponse:
        """``POST /revoke`` with ``token`` (access or refresh): the grant ends, every token of it
        fails from now on; a token already revoked or unknown: 400 ``invalid_token``."""
        request.sandbox_log = {"revoke": True}  # type: ignore[attr-defined]
        if request.method != "POST":
            return oauth_error(405, "invalid_request", "POST required")
        raw = request.POST.get("token") or request.GET.get("token") or ""
        payload = store.token(raw)
        if not payload or payload.get("kind") not in ("access", "refresh") or store.is_revoked(payload["account_id"]):
            return oauth_error(400, "invalid_token", "Token expired or revoked")
        store.revoke_token(raw)
        store.set_revoked(str(payload["account_id"]), True)
        return JsonResponse({})

    return [path("o/oauth2/v2/auth", authorize), path("token", token), path("revoke", revoke)]
