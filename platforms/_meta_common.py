"""Shared pieces of the Meta clients (Facebook Pages, Instagram via Facebook Login, Threads):
the versioned Graph base, the Graph error envelope mapped onto the taxonomy, Meta's usage
headers, cursor paging, the Facebook Login token steps and the container → publish flow that
Instagram and Threads share. The transport itself is :mod:`platforms.http`."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from typing import Any

import requests

from platforms.base import (
    AppCredentials,
    AuthError,
    Credentials,
    ErrorCode,
    Permanent,
    PlatformError,
    PublishRequest,
    PublishResult,
    QuotaExhausted,
    RateLimited,
    Transient,
    UnknownOutcome,
)
from platforms.http import json_or_empty, parse_instant, retry_at_from, send, utcnow

GRAPH_VERSION = "v21.0"
FACEBOOK_DIALOG_HOST = "https://www.facebook.com"
MAX_PAGES = 50  # bound on cursor paging: a runaway "next" link must not loop forever


# --- rate-limit headers ------------------------------------------------------------------


def _usage_percent(raw: str | None) -> int:
    """Highest percentage in an X-App-Usage / X-Page-Usage style header (0 when absent)."""
    if not raw:
        return 0
    try:
        usage = json.loads(raw)
    except ValueError:
        return 0
    if not isinstance(usage, dict):
        return 0
    values = [v for k, v in usage.items() if k in {"call_count", "total_cputime", "total_time"}]
    return max((int(v) for v in values if isinstance(v, int | float)), default=0)


def retry_at_from_headers(headers: Any) -> dt.datetime | None:
    """When the caller may try again: Retry-After (seconds), or the longest
    ``estimated_time_to_regain_access`` (minutes) of X-Business-Use-Case-Usage."""
    retry_after = retry_at_from(headers, "Retry-After")
    if retry_after is not None:
        return retry_after
    now = utcnow()
    buc = headers.get("X-Business-Use-Case-Usage")
    if buc:
        try:
            parsed = json.loads(buc)
        except ValueError:
            parsed = {}
        minutes = 0
        if isinstance(parsed, dict):
            for entries in parsed.values():
                for entry in entries if isinstance(entries, list) else []:
                    if isinstance(entry, dict):
                        minutes = max(minutes, int(entry.get("estimated_time_to_regain_access") or 0))
        if minutes:
            return now + dt.timedelta(minutes=minutes)
    if max(_usage_percent(headers.get("X-App-Usage")), _usage_percent(headers.get("X-Page-Usage"))) >= 100:
        # Platform-level usage is computed over a rolling hour; Meta advises waiting it out.
        return now + dt.timedelta(minutes=60)
    return None


# --- the Graph error envelope -------------------------------------------------------------

_AUTH_CODES = {102, 190, 463, 467}
_RATE_CODES = {4, 17, 32, 613, 80001, 80002, 80003, 80004, 80005, 80006, 80008, 80009, 80014}
_PERMISSION_CODES = {10, 3, *range(200, 300)}
_MEDIA_CODES = {324, 352, 381, 6000, 9004, 36000, 36001, 36003, 2207026, 2207052}
# Instagram/Threads subcodes of code 4 / 9 / 100 with a meaning of their own
_IG_QUOTA_SUBCODES = {2207042}
_MEDIA_SUBCODES = {2207003, 2207004, 2207005, 2207009, 2207010, 2207026, 2207052, 2207053}
_NOT_READY_CODES = {9007}


def missing_object(response: requests.Response) -> bool:
    """The Graph answer for an object that does not exist (any more): code 100, subcode 33
    ("Unsupported ... request. Object with ID '…' does not exist"), or a bare 404."""
    if response.status_code == 404:
        return True
    error = json_or_empty(response).get("error")
    return isinstance(error, dict) and _int(error.get("code")) == 100 and _int(error.get("error_subcode")) == 33


def graph_error(response: requests.Response) -> PlatformError:
    """Map a Graph API error response ({"error": {message, type, code, error_subcode, ...}})."""
    status = response.status_code
    body = json_or_empty(response)
    error = body.get("error") if isinstance(body.get("error"), dict) else {}
    assert isinstance(error, dict)
    message = str(error.get("error_user_msg") or error.get("message") or f"HTTP {status}")
    code = _int(error.get("code"))
    subcode = _int(error.get("error_subcode"))
    retry_at = retry_at_from_headers(response.headers)
    if code in _AUTH_CODES or (error.get("type") == "OAuthException" and code in (None, 0) and status == 401):
        return AuthError(message, http_status=status)
    if subcode in _IG_QUOTA_SUBCODES:
        return QuotaExhausted(message, http_status=status, retry_at=retry_at or utcnow() + dt.timedelta(hours=1))
    if code in _RATE_CODES or status == 429:
        return RateLimited(message, http_status=status, retry_at=retry_at)
    if code == 506:
        return Permanent(message, error_code=ErrorCode.DUPLICATE, http_status=status)
    if code == 368:
        return Permanent(message, error_code=ErrorCode.CONTENT_REJECTED, http_status=status)
    if code in _NOT_READY_CODES:
        return Transient(message, http_status=status)
    if code in (1, 2) or error.get("is_transient") is True or (status >= 500 and code is None):
        return Transient(message, http_status=status, retry_at=retry_at)
    if code in _MEDIA_CODES or subcode in _MEDIA_SUBCODES:
        return Permanent(message, error_code=ErrorCode.MEDIA_REJECTED, http_status=status)
    if code in _PERMISSION_CODES:
        return Permanent(message, error_code=ErrorCode.PERMISSION_MISSING, http_status=status)
    if status == 401:
        return AuthError(message, http_status=status)
    if status >= 500:
        return Transient(message, http_status=status)
    return Permanent(message, error_code=ErrorCode.INVALID_REQUEST, http_status=status)


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


class GraphApi:
    """A Graph API host (graph.facebook.com or graph.threads.net) at one version."""

    def __init__(self, *, base_url: str, version: str, session: requests.Session, timeout: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.version = version
        self.session = session
        self.timeout = timeout

    def url(self, path: str, *, versioned: bool = True) -> str:
        prefix = f"{self.base_url}/{self.version}" if versioned else self.base_url
        return f"{prefix}/{path.lstrip('/')}"

    def call(
        self,
        method: str,
        path: str,
        *,
        token: str = "",
        params: dict[str, Any] | None = None,
        data: dict[str, Any] | None = None,
        creates: bool = False,
        versioned: bool = True,
        absolute_url: str = "",
        headers: dict[str, str] | None = None,
        missing_ok: bool = False,
    ) -> dict[str, Any]:
        """Send one call; the JSON body on 2xx, else the mapped PlatformError is raised
        (``missing_ok``: an object that does not exist answers ``{}`` instead, for a delete)."""
        all_headers = dict(headers or {})
        if token:
            all_headers["Authorization"] = f"Bearer {token}"
        url = absolute_url or self.url(path, versioned=versioned)
        response = send(
            self.session,
            method,
            url,
            timeout=self.timeout,
            creates=creates,
            params=params,
            data=data,
            headers=all_headers,
        )
        if response.status_code >= 400:
            if missing_ok and missing_object(response):
                return {}
            raise graph_error(response)
        body = json_or_empty(response)
        if isinstance(body.get("error"), dict):
            raise graph_error(response)
        return body

    def pages(
        self, path: str, *, token: str, params: dict[str, Any], limit_pages: int = MAX_PAGES
    ) -> Iterator[dict[str, Any]]:
        """Every item of a cursor-paged edge, following ``paging.next`` links."""
        body = self.call("GET", path, token=token, params=params)
        for _ in range(limit_pages):
            yield from (item for item in body.get("data") or [] if isinstance(item, dict))
            next_url = (body.get("paging") or {}).get("next")
            if not next_url or not body.get("data"):
                return
            body = self.call("GET", "", token=token, absolute_url=str(next_url))


def delete_object(graph: GraphApi, creds: Credentials, object_id: str) -> None:
    """``DELETE /{object-id}`` (a Facebook page post, a Threads post): ``{"success": true}``; an
    object already gone (code 100, subcode 33) counts as deleted."""
    graph.call("DELETE", object_id, token=creds.access_token, creates=True, missing_ok=True)


def read_object(graph: GraphApi, creds: Credentials, object_id: str, fields: str) -> dict[str, Any] | None:
    """``GET /{object-id}?fields=…``: the object, or None where the Graph answers that it does not
    exist (any more): code 100, subcode 33 (a deleted post, a never-published id)."""
    return graph.call("GET", object_id, token=creds.access_token, params={"fields": fields}, missing_ok=True) or None


def revoke_login(graph: GraphApi, *, user_id: str, token: str, users_own_token: bool) -> None:
    """``DELETE /{user-id}/permissions``: the user's Facebook Login of this app is revoked, every
    token it gave (the user's, and the pages' tokens derived from it) stops working. Sent with the
    user's own token (``users_own_token``), an auth error means that token no longer works
    (already revoked, or the user removed the app): counted as revoked. Sent with the app's token
    (``{app-id}|{app-secret}``), an auth error is the app's and is raised."""
    try:
        graph.call("DELETE", f"{user_id}/permissions", token=token, creates=True)
    except AuthError:
        if not users_own_token:
            raise


def parse_time(value: Any) -> dt.datetime:
    """Graph timestamps ("2024-05-01T10:00:00+0000") or unix seconds; now when absent."""
    return parse_instant(value) or utcnow()


def insight_values(body: dict[str, Any]) -> dict[str, int]:
    """{"data":[{"name":..., "values":[{"value":N}]} | {"name":..., "total_value":{"value":N}}]}."""
    found: dict[str, int] = {}
    for entry in body.get("data") or []:
        if not isinstance(entry, dict) or "name" not in entry:
            continue
        value: Any = None
        if isinstance(entry.get("total_value"), dict):
            value = entry["total_value"].get("value")
        elif entry.get("values"):
            value = entry["values"][-1].get("value")
        if isinstance(value, int | float):
            found[str(entry["name"])] = int(value)
    return found


def long_lived_token(graph: GraphApi, app: AppCredentials, token: str) -> tuple[str, dt.datetime | None]:
    """``fb_exchange_token``: a long-lived user token (60 days) for ``token``, and its expiry."""
    body = graph.call(
        "GET",
        "oauth/access_token",
        params={
            "grant_type": "fb_exchange_token",
            "client_id": app.client_id,
            "client_secret": app.client_secret,
            "fb_exchange_token": token,
        },
    )
    expires_in = body.get("expires_in")
    expires_at = utcnow() + dt.timedelta(seconds=int(expires_in)) if expires_in else None
    return str(body["access_token"]), expires_at


def facebook_login_token(
    graph: GraphApi, app: AppCredentials, *, code: str, redirect_uri: str
) -> tuple[str, dt.datetime | None]:
    """Facebook Login: authorization code → short-lived user token → long-lived user token."""
    short = graph.call(
        "GET",
        "oauth/access_token",
        params={
            "client_id": app.client_id,
            "client_secret": app.client_secret,
            "redirect_uri": redirect_uri,
            "code": code,
        },
    )
    return long_lived_token(graph, app, str(short["access_token"]))


class ContainerFlow:
    """The container → status → publish flow Instagram and Threads share. ``state`` holds the
    step and the container ids, so a resumed call continues and never publishes twice."""

    def __init__(
        self,
        graph: GraphApi,
        *,
        token: str,
        user_id: str,
        create_edge: str,
        publish_edge: str,
        status_field: str,
        message_field: str,
        poll_after: float,
    ) -> None:
        self.graph = graph
        self.token = token
        self.user_id = user_id
        self.create_edge = create_edge
        self.publish_edge = publish_edge
        self.status_field = status_field
        self.message_field = message_field
        self.poll_after = poll_after

    def create(self, params: dict[str, Any]) -> str:
        data = {k: v for k, v in params.items() if v not in (None, "")}
        body = self.graph.call("POST", f"{self.user_id}/{self.create_edge}", token=self.token, data=data)
        return str(body["id"])

    def status(self, container_id: str) -> str:
        fields = f"{self.status_field},{self.message_field}"
        node = self.graph.call("GET", container_id, token=self.token, params={"fields": fields})
        status = str(node.get(self.status_field) or "")
        if status == "ERROR":
            raise Permanent(
                str(node.get(self.message_field) or "The platform could not process the media"),
                error_code=ErrorCode.MEDIA_REJECTED,
            )
        return status

    def advance(
        self,
        state: dict[str, Any],
        *,
        create_containers: Callable[[], dict[str, Any]],
        carousel_params: Callable[[list[str]], dict[str, Any]],
    ) -> PublishResult:
        state = dict(state)
        if not state.get("step"):
            state = create_containers()
        if state["step"] == "children":
            if any(self.status(child) != "FINISHED" for child in state["children"]):
                return PublishResult(done=False, state=state, poll_after=self.poll_after)
            state = {**state, "step": "container", "container_id": self.create(carousel_params(state["children"]))}
        if state["step"] == "container":
            status = self.status(state["container_id"])
            if status == "EXPIRED":  # never published: start over with fresh containers
                return PublishResult(done=False, state={}, poll_after=0)
            if status == "PUBLISHED":
                raise UnknownOutcome("The container was already published; look the post up before retrying")
            if status != "FINISHED":
                return PublishResult(done=False, state=state, poll_after=self.poll_after)
            body = self.graph.call(
                "POST",
                f"{self.user_id}/{self.publish_edge}",
                token=self.token,
                data={"creation_id": state["container_id"]},
                creates=True,
            )
            state = {"step": "published", "media_id": str(body["id"])}
        if state["step"] != "published":
            raise Permanent(f"Unknown publishing step {state['step']!r}", error_code=ErrorCode.INVALID_REQUEST)
        node = self.graph.call("GET", state["media_id"], token=self.token, params={"fields": "id,permalink,timestamp"})
        return PublishResult(
            done=True,
            platform_post_id=state["media_id"],
            url=str(node.get("permalink") or ""),
            published_at=parse_time(node.get("timestamp")) if node.get("timestamp") else utcnow(),
        )


def post_comment(graph: GraphApi, creds: Credentials, request: PublishRequest) -> PublishResult:
    """``POST /{object-id}/comments`` with ``message`` under the post ``request.reply_to`` names (a
    Facebook post, an Instagram media): the comment's id. No idempotency key, so the pipeline never
    re-sends one whose outcome is unknown."""
    if request.reply_to is None:
        raise Permanent("A comment needs the post it replies to", error_code=ErrorCode.INVALID_REQUEST)
    object_id = request.reply_to.parent.platform_post_id
    body = graph.call(
        "POST", f"{object_id}/comments", token=creds.access_token, data={"message": request.text}, creates=True
    )
    return PublishResult(done=True, platform_post_id=str(body["id"]))


# --- comments ------------------------------------------------------------------------------

COMMENT_PAGE_SIZE = 50  # comments asked for per page (Graph edges take up to 100)


def next_after(body: dict[str, Any]) -> str:
    """The ``after`` cursor of a Graph page that has a next one ("" on the last page)."""
    paging = body.get("paging") if isinstance(body.get("paging"), dict) else {}
    assert isinstance(paging, dict)
    if not paging.get("next") or not body.get("data"):
        return ""
    return str((paging.get("cursors") or {}).get("after") or "")


def list_edge(graph: GraphApi, creds: Credentials, path: str, params: dict[str, Any], cursor: str) -> dict[str, Any]:
    """One page of a comments edge (``after=cursor``); an object that does not exist (any more)
    answers an empty last page."""
    return graph.call(
        "GET",
        path,
        token=creds.access_token,
        params={**params, **({"after": cursor} if cursor else {})},
        missing_ok=True,
    )


def reply_to_comment(graph: GraphApi, creds: Credentials, request: PublishRequest, edge: str) -> PublishResult:
    """``POST /{comment-id}/<edge>`` with ``message`` (Facebook ``comments``, Instagram
    ``replies``): the reply's id. No idempotency key: sent as one that ``creates``, never re-sent
    by the pipeline after an unknown outcome."""
    if request.reply_to is None:
        raise Permanent("A reply needs the comment it answers", error_code=ErrorCode.INVALID_REQUEST)
    comment_id = request.reply_to.parent.platform_post_id
    body = graph.call(
        "POST", f"{comment_id}/{edge}", token=creds.access_token, data={"message": request.text}, creates=True
    )
    return PublishResult(done=True, platform_post_id=str(body["id"]))


def find_recent_post(graph: GraphApi, *, token: str, edge: str, text_field: str, text: str) -> PublishResult | None:
    """A post of the last day on ``edge`` whose ``text_field`` is exactly ``text`` (the lookup
    after an unknown outcome, for APIs with no idempotency key); None when there is none."""
    since = utcnow() - dt.timedelta(days=1)
    # The whole day, bounded by ``since``: the 24-hour publishing limits (Threads 250, Instagram
    # 100 posts) allow more posts than a page or two between a lost attempt and its lookup.
    params = {"fields": f"id,{text_field},permalink,timestamp", "since": int(since.timestamp()), "limit": 100}
    for node in graph.pages(edge, token=token, params=params):
        if node.get(text_field) == text:
            return PublishResult(
                done=True,
                platform_post_id=str(node["id"]),
                url=str(node.get("permalink") or ""),
                published_at=parse_time(node.get("timestamp")),
            )
    return None


def check_publishing_limit(graph: GraphApi, *, token: str, path: str, platform_name: str) -> None:
    """Raise QuotaExhausted when ``quota_usage`` has reached ``config.quota_total``."""
    body = graph.call("GET", path, token=token, params={"fields": "quota_usage,config"})
    entry = (body.get("data") or [{}])[0]
    total = (entry.get("config") or {}).get("quota_total")
    usage = entry.get("quota_usage")
    if isinstance(total, int) and isinstance(usage, int) and usage >= total:
        # the window is a rolling 24 hours and the oldest post leaving it is not reported
        raise QuotaExhausted(
            f"{platform_name} publishing limit reached ({usage}/{total} posts in 24 hours)",
            retry_at=utcnow() + dt.timedelta(hours=1),
        )
