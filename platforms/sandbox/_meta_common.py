"""Pieces the Meta simulators (Facebook, Instagram, Threads) share: the Graph error envelope,
token extraction, the auto-approving OAuth dialog and token endpoints, cursor paging, media
fetching, scenario switches and metrics that grow with the age of a post."""

from __future__ import annotations

import base64
import json
import secrets
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse

from platforms.sandbox import audience
from platforms.sandbox.common import pull_media
from platforms.sandbox.scenarios import marker
from platforms.sandbox.store import SandboxStore
from platforms.sandbox.views import simulator_view

LONG_LIVED_SECONDS = 60 * 24 * 3600
SHORT_LIVED_SECONDS = 2 * 3600
DAY = 86400


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


# --- armed faults (platforms.sandbox.faults) ------------------------------------------------

REGAIN_ACCESS_MINUTES = 5


def usage_limited(message: str, *, code: int, usage_type: str) -> JsonResponse:
    """A throttled call: the error code Meta documents for it and the
    ``X-Business-Use-Case-Usage`` header saying when access comes back."""
    usage = {
        "sandbox": [
            {
                "type": usage_type,
                "call_count": 100,
                "total_cputime": 30,
                "total_time": 30,
                "estimated_time_to_regain_access": REGAIN_ACCESS_MINUTES,
            }
        ]
    }
    return graph_error(message, code=code, is_transient=True, headers={"X-Business-Use-Case-Usage": json.dumps(usage)})


def publishing_quota_reached(request: HttpRequest) -> JsonResponse:
    """The Instagram/Threads 24-hour publishing limit (code 4, subcode 2207042)."""
    return graph_error(
        "Application request limit reached",
        code=4,
        subcode=2207042,
        is_transient=False,
        error_user_title="Max Number of Posts Reached",
        error_user_msg="You reached maximum number of posts that is allowed to be published by Content Publishing API.",
        status=403,
    )


def unexpected_error(request: HttpRequest) -> JsonResponse:
    return graph_error(
        "An unexpected error has occurred. Please retry your request later.", code=2, status=500, is_transient=True
    )


def invalid_token() -> JsonResponse:
    return graph_error("Invalid OAuth access token - Cannot parse access token", code=190)


def session_invalidated() -> JsonResponse:
    return graph_error(
        "Error validating access token: The session has been invalidated because the user changed their "
        "password or Facebook has changed the session for security reasons.",
        code=190,
        subcode=460,
    )


def not_authorized(app_id: str = "") -> JsonResponse:
    """A token of a user who revoked the app's login (``DELETE /{user-id}/permissions``)."""
    return graph_error(
        f"Error validating access token: The user has not authorized application {app_id}.".replace(" .", "."),
        code=190,
        subcode=458,
    )


def deauthorize(store: SandboxStore, user_id: str) -> None:
    """The user's login of the app is revoked: every token it gave fails from now on."""
    store.redis.sadd(store._key("deauthorized"), user_id)


def _deauthorized(store: SandboxStore, owner: str) -> bool:
    return bool(store.redis.sismember(store._key("deauthorized"), owner))


def missing_object(method: str, object_id: str) -> JsonResponse:
    """Graph's answer for an object that does not exist (any more), for ``method``."""
    return graph_error(
        f"Unsupported {method.lower()} request. Object with ID '{object_id}' does not exist, cannot be loaded due "
        "to missing permissions, or does not support this operation",
        code=100,
        subcode=33,
    )


def revoke_permissions(store: SandboxStore, request: HttpRequest, user_id: str) -> JsonResponse:
    """``DELETE /{user-id}/permissions`` (or ``/me/permissions``): with the user's own token, or
    the app's (``{app-id}|{app-secret}``) naming the user. ``{"success": true}``."""
    request.sandbox_log = {"revoke": True, "remoteId": user_id}  # type: ignore[attr-defined]
    if request.method != "DELETE":
        return bad_method()
    raw = token_of(request)
    app_id, bar, secret = raw.partition("|")
    if bar:
        if not app_id or not secret:
            return invalid_token()
        if store.get("user", user_id) is None:
            return missing_object("DELETE", user_id)
        deauthorize(store, user_id)
        return JsonResponse({"success": True})
    payload, error = authenticate(store, request)
    if error or payload is None:
        return error or invalid_token()
    if payload.get("kind") != "user" or user_id not in ("me", str(payload["account_id"])):
        return graph_error("(#200) Permissions error", code=200)
    deauthorize(store, str(payload["account_id"]))
    return JsonResponse({"success": True})


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
    if any(_deauthorized(store, owner) for owner in owners if owner):
        return None, not_authorized()
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
    pulled = pull_media(url)
    if isinstance(pulled, str):
        return pulled
    content_type = pulled[1]
    if content_type.split("/")[0] not in kinds:
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
        if _deauthorized(store, str(payload["account_id"])):
            return not_authorized()
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


# --- what the Facebook Login simulators (Facebook, Instagram) and the container simulators
# --- (Instagram, Threads) have in common ----------------------------------------------------


def post_comment(
    store: SandboxStore,
    request: HttpRequest,
    *,
    object_id: str,
    exists: bool,
    create: Callable[[str], str] | None = None,
) -> JsonResponse:
    """``POST /{object-id}/comments`` (Facebook posts, Instagram media): a comment under an object
    that exists, its id answered; the call recorded with its body (tests count comments by it).
    ``create`` stores the account's comment (given its text) and answers its id; without it the
    comment is kept apart from the audience's."""
    if request.method != "POST":
        return bad_method()
    message = param(request, "message")
    if not exists:
        return graph_error(
            f"Unsupported post request. Object with ID '{object_id}' does not exist, cannot be loaded due to "
            "missing permissions, or does not support this operation",
            code=100,
            subcode=33,
        )
    if not message.strip():
        return graph_error("(#100) The parameter message is required", code=100)
    if create is not None:
        comment_id = create(message)
    else:
        comment_id = new_numeric_id(store, "17")
        store.put("comment", comment_id, {"id": comment_id, "object_id": object_id, "message": message})
    request.sandbox_log = {  # type: ignore[attr-defined]
        "comment": True,
        "on": object_id,
        "remoteId": comment_id,
        "body": {"message": message},
    }
    return JsonResponse({"id": comment_id})


# --- comments: the audience (platforms.sandbox.audience) under Graph ids ----------------------
#
# An audience comment's neutral id is ``<post id>_<key>`` (keys are lower-case letters and
# digits). Graph ids are digits: each key character becomes two digits (0-9 → 10-19, a-z →
# 20-45), so an id always leads back to its post and key without a lookup table.

_KEY_CHARS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _key_digits(key: str) -> str:
    return "".join(f"{10 + _KEY_CHARS.index(char):02d}" for char in key)


def _key_of(digits: str) -> str | None:
    if not digits or len(digits) % 2 or not digits.isdigit():
        return None
    codes = [int(digits[i : i + 2]) - 10 for i in range(0, len(digits), 2)]
    if any(not 0 <= code < len(_KEY_CHARS) for code in codes):
        return None
    return "".join(_KEY_CHARS[code] for code in codes)


def numeric_comment_id(neutral: str) -> str:
    """The all-digit Graph id (Instagram, Threads) of the audience comment ``neutral``: ``17``, the
    post id's length in two digits, the post id, the key's digits."""
    post_id, key = audience.split_id(neutral)
    return f"17{len(post_id):02d}{post_id}{_key_digits(key)}"


def neutral_of_numeric(comment_id: str) -> str | None:
    """The audience id behind :func:`numeric_comment_id` (None: not a comment id)."""
    if not comment_id.isdigit() or not comment_id.startswith("17") or len(comment_id) < 6:
        return None
    length = int(comment_id[2:4])
    post_id, rest = comment_id[4 : 4 + length], comment_id[4 + length :]
    key = _key_of(rest)
    if len(post_id) != length or key is None or not key[0].isalpha():
        return None
    return audience.comment_id(post_id, key)


def underscored_comment_id(neutral: str) -> str:
    """A Facebook comment id: ``<post id>_<key digits>`` (Graph's ``{object}_{comment}`` form)."""
    post_id, key = audience.split_id(neutral)
    return f"{post_id}_{_key_digits(key)}"


def neutral_of_underscored(comment_id: str) -> str | None:
    post_id, _, digits = comment_id.rpartition("_")
    key = _key_of(digits)
    if not post_id or key is None or not key[0].isalpha():
        return None
    return audience.comment_id(post_id, key)


def new_reply_key(store: SandboxStore) -> str:
    """A key for one of the account's own comments or replies (``a<n>``)."""
    return f"a{store.redis.incr(store._key('reply-seq'))}"


def add_account_comment(
    store: SandboxStore, post_id: str, parent_id: str, text: str, author: audience.Person
) -> dict[str, Any]:
    """The account's comment under ``post_id`` (``parent_id`` "": under the post itself)."""
    reply_id = audience.comment_id(post_id, new_reply_key(store))
    return audience.add_reply(store, post_id, parent_id, text, author=author, reply_id=reply_id)


def hide_flag(request: HttpRequest, name: str) -> bool | None:
    """A ``true``/``false`` parameter (None: absent or neither)."""
    value = param(request, name).lower()
    return {"true": True, "false": False, "1": True, "0": False}.get(value)


def facebook_login_views(
    slug: str, create_user: Callable[[], str]
) -> tuple[Callable[..., HttpResponse], Callable[..., HttpResponse]]:
    """The versioned ``dialog/oauth`` and ``oauth/access_token`` views of a Facebook Login app."""

    @simulator_view(slug, log=False)
    def dialog(request: HttpRequest, version: str) -> HttpResponse:
        return dialog_view(SandboxStore(slug), create_user)(request)

    @simulator_view(slug)
    def access_token(request: HttpRequest, version: str) -> JsonResponse:
        return facebook_login_token(SandboxStore(slug), request)

    return dialog, access_token


def owned_listing(
    request: HttpRequest,
    items: list[dict[str, Any]],
    *,
    owner_key: str,
    owner: str,
    view: Callable[[dict[str, Any]], dict[str, Any]],
) -> JsonResponse:
    """GET on a media edge: the owner's items within ``since``/``until``, newest first, paged."""
    since, until = since_until(request)
    mine = [item for item in items if item[owner_key] == owner and since <= item["created"] <= until]
    mine.sort(key=lambda item: item["created"], reverse=True)
    page = paged(request, mine)  # rendered after paging: a view may read the store
    return JsonResponse({**page, "data": [view(item) for item in page["data"]]})


def quota_used(items: list[dict[str, Any]], *, owner_key: str, owner: str) -> int:
    """Posts ``owner`` published in the last 24 hours (the content publishing limit's window)."""
    cutoff = time.time() - DAY
    return sum(1 for item in items if item[owner_key] == owner and item["created"] > cutoff)


def publishing_limit_body(used: int, total: int) -> dict[str, Any]:
    return {"data": [{"quota_usage": used, "config": {"quota_total": total, "quota_duration": DAY}}]}


def advance_container(store: SandboxStore, container: dict[str, Any], *, status_key: str) -> str:
    """A container's status as of this read: IN_PROGRESS for ``polls_left`` reads, then
    FINISHED; a FINISHED container left unpublished for 24 hours is EXPIRED."""
    status = str(container[status_key])
    if status == "IN_PROGRESS":
        if container["polls_left"] > 0:
            store.update("container", container["id"], polls_left=container["polls_left"] - 1)
        else:
            status = "FINISHED"
            store.update("container", container["id"], **{status_key: status})
    elif status == "FINISHED" and time.time() - container["created"] > DAY:
        status = "EXPIRED"
    return status


def publish_container(
    request: HttpRequest,
    store: SandboxStore,
    *,
    owner_key: str,
    owner: str,
    collection: str,
    text_key: str,
    status_key: str,
    quota_total: int,
    invalid_id: Callable[[], JsonResponse],
    refusal: Callable[[dict[str, Any]], JsonResponse | None],
    quota_reached: Callable[[], JsonResponse],
    published: Callable[[dict[str, Any]], dict[str, Any]],
    new_media_id: Callable[[dict[str, Any]], str] | None = None,
) -> JsonResponse:
    """``*_publish`` with ``creation_id``: a container published once (a repeat answers the same
    id), refused while ``refusal`` says so or when the 24-hour quota is used up; ``published``
    gives the new post's fields from the container, ``new_media_id`` (when given) its id."""
    container = store.get("container", param(request, "creation_id"))
    if container is None or container[owner_key] != owner:
        return invalid_id()
    text = str(container.get(text_key) or "")
    if container.get("media_id"):
        log_publish(request, remote_id=container["media_id"], marker=container["id"], text=text, repeat=True)
        return JsonResponse({"id": container["media_id"]})
    if (refused := refusal(container)) is not None:
        return refused
    if quota_used(store.all(collection), owner_key=owner_key, owner=owner) >= quota_total:
        return quota_reached()
    media_id = new_media_id(container) if new_media_id is not None else new_numeric_id(store, "180")
    store.put(collection, media_id, {"id": media_id, owner_key: owner, "created": time.time(), **published(container)})
    store.update("container", container["id"], media_id=media_id, **{status_key: "PUBLISHED"})
    log_publish(request, remote_id=media_id, marker=container["id"], text=text)
    return JsonResponse({"id": media_id})


def metric_entries(names: list[str], values: dict[str, int], owner: str, period: str) -> list[dict[str, Any]]:
    """Insights ``data`` entries, one per metric name."""
    return [
        {
            "name": name,
            "period": period,
            "values": [{"value": values[name]}],
            "title": name.title(),
            "description": f"The number of {name}.",
            "id": f"{owner}/insights/{name}/{period}",
        }
        for name in names
    ]
