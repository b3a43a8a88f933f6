"""Pieces the Meta simulators (Facebook, Instagram, Threads) share: the Graph error envelope,
token extraction, the auto-approving OAuth dialog and token endpoints, cursor paging, media
fetching, scenario switches and metrics that grow with the age of a post."""

from __future__ import annotations

import base64
import secrets
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import requests
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse

from platforms.sandbox.scenarios import marker
from platforms.sandbox.store import SandboxStore

LONG_LIVED_SECONDS = 60 * 24 * 3600
SHORT_LIVED_SECONDS = 2 * 3600


def graph_error(
    message: str,
    *,
    code: int,
    status: int = 400,
    error_type: str = "OAuthException",
    subcode: int | None = None,
    is_transient: bool | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JsonResponse:
    error: dict[str, Any] = {"message": message, "type": error_type, "code": code, **extra}
    if subcode is not None:
        error["error_subcode"] = subcode
    if is_transient is not None:
        error["is_transient"] = is_transient
    error["fbtrace_id"] = secrets.token_urlsafe(8)
    response = JsonResponse({"error": error}, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def invalid_token() -> JsonResponse:
    return graph_error("Invalid OAuth access token - Cannot parse access token", code=190)


def session_invalidated() -> JsonResponse:
    return graph_error(
        "Error validating access token: The session has been invalidated because the user changed their "
        "password or Facebook has changed the session for security reasons.",
        code=190,
        subcode=460,
    )


def param(request: HttpRequest, name: str, default: str = "") -> str:
    return str(request.POST.get(name) or request.GET.get(name) or default)


def token_of(request: HttpRequest) -> str:
    header = request.headers.get("Authorization", "")
    for scheme in ("Bearer ", "OAuth "):
        if header.startswith(scheme):
            return header[len(scheme) :].strip()
    return param(request, "access_token")


def authenticate(store: SandboxStore, request: HttpRequest) -> tuple[dict[str, Any] | None, JsonResponse | None]:
    """(token payload, None) or (None, the Graph error to answer with)."""
    raw = token_of(request)
    if not raw:
        return None, graph_error("An access token is required to request this resource.", code=104)
    payload = store.token(raw)
    if payload is None or payload.get("kind") == "code":
        return None, invalid_token()
    owners = [str(payload["account_id"]), str(payload.get("user_id", "")), *map(str, payload.get("owns", []))]
    if any(store.is_revoked(owner) for owner in owners if owner):
        return None, session_invalidated()
    return payload, None


def scenario_error(store: SandboxStore, text: str, key: str) -> JsonResponse | None:
    """The error a ``#sandbox-*`` marker in the sent text asks for (None: carry on)."""
    scenario = marker(text)
    if scenario == "unauthorized":
        return invalid_token()
    if scenario == "fail":
        return graph_error(
            "The action attempted has been deemed abusive or is otherwise disallowed", code=368, subcode=1390008
        )
    if scenario == "flaky" and store.first_time(f"flaky:{key}:{text}"):
        return graph_error(
            "An unexpected error has occurred. Please retry your request later.",
            code=2,
            status=500,
            is_transient=True,
        )
    return None


def grown_metrics(published_at: float) -> dict[str, int]:
    """Figures that grow with the seconds since publication."""
    age = max(0, int(time.time() - published_at))
    views = 5 + age * 2
    return {"views": views, "likes": views // 5, "comments": views // 20, "shares": views // 40, "reach": views // 2}


def fetch_media(url: str, *, kinds: tuple[str, ...]) -> str | None:
    """None when ``url`` answers with media of one of ``kinds`` ("image"/"video"); else why not."""
    if not url.startswith(("http://", "https://")):
        return f"The media URL {url!r} is not a valid http(s) URL"
    try:
        response = requests.get(url, timeout=10)
    except requests.RequestException as exc:
        return f"Media could not be fetched from {url}: {exc.__class__.__name__}"
    if response.status_code != 200:
        return f"Media could not be fetched from {url}: HTTP {response.status_code}"
    content_type = response.headers.get("Content-Type", "").split(";")[0].strip()
    if content_type.split("/")[0] not in kinds or not response.content:
        return f"Unsupported media type {content_type or 'unknown'} at {url}"
    return None


def paged(request: HttpRequest, items: list[dict[str, Any]], *, default_limit: int = 25) -> dict[str, Any]:
    """A Graph cursor page of ``items`` (already in order) honouring ``limit`` and ``after``."""
    try:
        limit = max(1, min(100, int(request.GET.get("limit") or default_limit)))
    except ValueError:
        limit = default_limit
    after = request.GET.get("after", "")
    try:
        start = int(base64.urlsafe_b64decode(after.encode()).decode()) if after else 0
    except ValueError:
        start = 0
    chunk = items[start : start + limit]
    body: dict[str, Any] = {"data": chunk}
    cursors = {
        "before": base64.urlsafe_b64encode(str(start).encode()).decode(),
        "after": base64.urlsafe_b64encode(str(start + len(chunk)).encode()).decode(),
    }
    paging: dict[str, Any] = {"cursors": cursors}
    if start + limit < len(items):
        query = {k: v for k, v in request.GET.items() if k not in {"after", "access_token"}}
        query["after"] = cursors["after"]
        paging["next"] = request.build_absolute_uri(request.path) + "?" + urlencode(query)
    body["paging"] = paging
    return body


def since_until(request: HttpRequest) -> tuple[float, float]:
    def number(name: str, default: float) -> float:
        try:
            return float(request.GET.get(name) or default)
        except ValueError:
            return default

    return number("since", 0.0), number("until", float("inf"))


def iso(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(timestamp))


# --- OAuth: the consent dialog auto-approves; the token endpoint exchanges codes ----------


def dialog_view(store: SandboxStore, create_user: Callable[[], str]) -> Callable[[HttpRequest], HttpResponse]:
    """GET ``dialog/oauth``: a new simulated user consents at once; 302 to ``redirect_uri``."""

    def view(request: HttpRequest, **_: Any) -> HttpResponse:
        redirect_uri = request.GET.get("redirect_uri", "")
        if not request.GET.get("client_id") or not redirect_uri.startswith(("http://", "https://")):
            return graph_error("Invalid redirect_uri or client_id", code=191)
        user_id = create_user()
        code = store.issue_token(user_id, kind="code", ttl=600, redirect_uri=redirect_uri)
        query = urlencode({"code": code, "state": request.GET.get("state", "")})
        separator = "&" if "?" in redirect_uri else "?"
        return HttpResponseRedirect(f"{redirect_uri}{separator}{query}")

    return view


def exchange_code(store: SandboxStore, request: HttpRequest) -> tuple[str | None, JsonResponse | None]:
    """The user id behind a single-use authorization code sent with the app's credentials."""
    if not param(request, "client_id") or not param(request, "client_secret"):
        return None, graph_error("Missing client_id or client_secret", code=101)
    code = param(request, "code")
    payload = store.token(code) if code else None
    if payload is None or payload.get("kind") != "code":
        return None, graph_error("Invalid verification code format.", code=100, subcode=36007)
    if payload.get("redirect_uri") != param(request, "redirect_uri"):
        return None, graph_error(
            "Error validating verification code. Please make sure your redirect_uri is "
            "identical to the one you used in the OAuth dialog request",
            code=100,
        )
    store.revoke_token(code)
    return str(payload["account_id"]), None


def token_body(token: str, expires_in: int) -> dict[str, Any]:
    return {"access_token": token, "token_type": "bearer", "expires_in": expires_in}


def new_numeric_id(store: SandboxStore, prefix: str = "") -> str:
    """A unique all-digit id, as Graph ids are."""
    return f"{prefix}{store.new_id()}"


def bad_method() -> JsonResponse:
    return graph_error("Unsupported request - method type not allowed", code=100, status=400)


def facebook_login_token(store: SandboxStore, request: HttpRequest) -> JsonResponse:
    """GET ``oauth/access_token``: a code for a short-lived user token, or
    ``grant_type=fb_exchange_token`` for a long-lived one (Facebook Login, so Instagram too)."""
    if param(request, "grant_type") == "fb_exchange_token":
        payload = store.token(param(request, "fb_exchange_token"))
        if payload is None or payload.get("kind") != "user" or not param(request, "client_secret"):
            return invalid_token()
        if store.is_revoked(str(payload["account_id"])) or any(store.is_revoked(a) for a in payload.get("owns", [])):
            return session_invalidated()
        token = store.issue_token(
            payload["account_id"], kind="user", ttl=LONG_LIVED_SECONDS, long_lived=True, owns=payload.get("owns", [])
        )
        return JsonResponse(token_body(token, LONG_LIVED_SECONDS))
    user_id, error = exchange_code(store, request)
    if error or user_id is None:
        return error or invalid_token()
    user = store.get("user", user_id) or {}
    token = store.issue_token(user_id, kind="user", ttl=SHORT_LIVED_SECONDS, owns=user.get("owns", []))
    return JsonResponse(token_body(token, SHORT_LIVED_SECONDS))


def log_publish(
    request: HttpRequest, *, remote_id: str, text: str = "", marker: str | None = None, **extra: Any
) -> None:
    """Mark this call in the request log as one that published (tests count duplicates by it)."""
    entry = {"publish": True, "marker": marker, "remoteId": remote_id, "text": text[:80], **extra}
    request.sandbox_log = entry  # type: ignore[attr-defined]
