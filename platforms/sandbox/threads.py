"""Threads API simulator (graph.threads.net): OAuth authorize/code exchange, long-lived token
exchange and refresh, containers (TEXT, IMAGE, VIDEO, CAROUSEL) that are IN_PROGRESS for one
status read when they hold video, ``threads_publish`` under the publishing limit (250 a day),
the user's threads listing, media insights and the followers count.

Every authorization creates a new Threads user."""

from __future__ import annotations

import time
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import re_path

from platforms.base import Platform
from platforms.sandbox import _meta_common as meta
from platforms.sandbox import audience, media_checks, pages
from platforms.sandbox.store import SandboxStore
from platforms.sandbox.views import simulator_view

SLUG = "threads"
DELETES_PER_DAY = 100  # the Threads delete endpoint's limit per account
V = r"^(?P<version>v\d+\.\d+)/"
QUOTA_TOTAL = 250
TEXT_LIMIT = 500
INSIGHT_METRICS = {"views", "likes", "replies", "reposts", "quotes", "shares"}


def _store() -> SandboxStore:
    return SandboxStore(SLUG)


def _create_user() -> str:
    s = _store()
    user_id = meta.new_numeric_id(s, "2")
    s.put(
        "user",
        user_id,
        {
            "id": user_id,
            "username": f"sandbox.threads{user_id[-6:]}",
            "name": f"Sandbox Threads {user_id[-4:]}",
            "followers_count": 200 + int(user_id[-2:]),
            "quota_total": QUOTA_TOTAL,
        },
    )
    return user_id


def _auth(request: HttpRequest, *, user_id: str | None = None) -> tuple[dict[str, Any] | None, JsonResponse | None]:
    payload, error = meta.authenticate(_store(), request)
    if error or payload is None:
        return None, error
    if user_id is not None and payload["account_id"] != user_id:
        return None, meta.graph_error("(#10) Application does not have permission for this action", code=10)
    return payload, None


@simulator_view(SLUG, log=False)
def authorize(request: HttpRequest) -> HttpResponse:
    return meta.dialog_view(_store(), _create_user)(request)


@simulator_view(SLUG)
def oauth_access_token(request: HttpRequest) -> JsonResponse:
    if request.method != "POST":
        return meta.bad_method()
    if meta.param(request, "grant_type") != "authorization_code":
        return meta.graph_error("Unsupported grant_type", code=100)
    s = _store()
    user_id, error = meta.exchange_code(s, request)
    if error or user_id is None:
        return error or meta.invalid_token()
    token = s.issue_token(user_id, kind="user", ttl=3600)
    return JsonResponse({"access_token": token, "user_id": int(user_id)})


def _exchange(request: HttpRequest, grant_type: str, needs_secret: bool) -> JsonResponse:
    s = _store()
    if meta.param(request, "grant_type") != grant_type or (needs_secret and not meta.param(request, "client_secret")):
        return meta.graph_error(f"grant_type must be {grant_type}", code=100)
    payload, error = meta.authenticate(s, request)
    if error or payload is None:
        return error or meta.invalid_token()
    token = s.issue_token(payload["account_id"], kind="user", ttl=meta.LONG_LIVED_SECONDS, long_lived=True)
    return JsonResponse(meta.token_body(token, meta.LONG_LIVED_SECONDS))


@simulator_view(SLUG)
def access_token(request: HttpRequest) -> JsonResponse:
    return _exchange(request, "th_exchange_token", needs_secret=True)


@simulator_view(SLUG)
def refresh_access_token(request: HttpRequest) -> JsonResponse:
    return _exchange(request, "th_refresh_token", needs_secret=False)


def _user_view(user: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": user["id"],
        "username": user["username"],
        "name": user["name"],
        "threads_profile_picture_url": pages.avatar_url(SLUG, user["id"]),
        "threads_biography": "A simulated Threads user",
    }


@simulator_view(SLUG)
def me(request: HttpRequest, version: str) -> JsonResponse:
    payload, error = _auth(request)
    if error or payload is None:
        return error or meta.invalid_token()
    return JsonResponse(_user_view(_store().get("user", payload["account_id"]) or {}))


def _shortcode(post_id: str) -> str:
    """The code in a post's threads.net link."""
    return post_id[-11:]


def _thread_view(post: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": post["id"],
        "media_product_type": "THREADS",
        "media_type": post["media_type"],
        "media_url": post.get("media_url", ""),
        "permalink": f"{pages.public_base(SLUG)}/@{post['username']}/post/{_shortcode(post['id'])}",
        "username": post["username"],
        "text": post.get("text", ""),
        "timestamp": meta.iso(post["created"]),
        "shortcode": _shortcode(post["id"]),
        "is_quote_post": False,
    }


def _container_view(container: dict[str, Any]) -> dict[str, Any]:
    status = meta.advance_container(_store(), container, status_key="status")
    body = {"id": container["id"], "status": status}
    if container.get("error_message"):
        body["error_message"] = container["error_message"]
    return body


@simulator_view(SLUG)
def node(request: HttpRequest, version: str, node_id: str) -> JsonResponse:
    if request.method == "DELETE":
        return _delete_thread(request, node_id)
    if request.method != "GET":
        return meta.bad_method()
    _, error = _auth(request)
    if error:
        return error
    s = _store()
    if (user := s.get("user", node_id)) is not None:
        return JsonResponse(_user_view(user))
    if (container := s.get("container", node_id)) is not None:
        return JsonResponse(_container_view(container))
    if (post := s.get("thread", node_id)) is not None:
        return JsonResponse(_thread_view(post))
    if (found := _comment_of(node_id)) is not None:
        return JsonResponse(_reply_view(*found, hidden=found[1]["hidden"]))
    return meta.graph_error(f"Unsupported get request. Object with ID '{node_id}' does not exist", code=100, subcode=33)


def _delete_thread(request: HttpRequest, media_id: str) -> JsonResponse:
    """``DELETE /{threads-media-id}``: the user's own post is removed (``{"success": true,
    "deleted_id": …}``); at most ``DELETES_PER_DAY`` a day per account."""
    request.sandbox_log = {"delete": True, "remoteId": media_id}  # type: ignore[attr-defined]
    payload, error = _auth(request)
    if error or payload is None:
        return error or meta.invalid_token()
    s = _store()
    post = s.get("thread", media_id)
    if post is None and _comment_of(media_id) is not None:  # a reply by someone else: hide it instead
        return meta.graph_error("(#10) Application does not have permission for this action", code=10)
    if post is None:
        return meta.missing_object("DELETE", media_id)
    if post["user_id"] != payload["account_id"]:
        return meta.graph_error("(#10) Application does not have permission for this action", code=10)
    day = int(time.time()) // meta.DAY
    used_key = s._key("deletes", str(payload["account_id"]), str(day))
    if int(s.redis.incr(used_key)) > DELETES_PER_DAY:
        s.redis.expire(used_key, meta.DAY)
        return meta.graph_error("Application request limit reached", code=4, is_transient=True)
    s.redis.expire(used_key, meta.DAY)
    s.delete("thread", media_id)
    if (neutral := meta.neutral_of_numeric(media_id)) is not None:  # one of the account's replies
        audience.set_state(s, neutral, deleted=True)
    return JsonResponse({"success": True, "deleted_id": media_id})


def _post_type(request: HttpRequest) -> str:
    return media_checks.meta_post_type("", meta.param(request, "is_carousel_item") == "true")


@simulator_view(SLUG)
def threads(request: HttpRequest, version: str, user_id: str) -> JsonResponse:
    _, error = _auth(request, user_id=user_id)
    if error:
        return error
    s = _store()
    if request.method == "GET":
        # The user's threads edge lists their own threads, not their replies (those are on /replies).
        own = [t for t in s.all("thread") if not t.get("reply_to_id")]
        return meta.owned_listing(request, own, owner_key="user_id", owner=user_id, view=_thread_view)
    media_type = meta.param(request, "media_type").upper()
    text = meta.param(request, "text")
    if (scenario := meta.scenario_error(s, text, f"threads:{user_id}")) is not None:
        return scenario
    if len(text) > TEXT_LIMIT:
        return meta.graph_error(f"(#100) The text exceeds the {TEXT_LIMIT} character limit", code=100, subcode=4279009)
    fields: dict[str, Any] = {
        "media_type": media_type,
        "text": text,
        "polls_left": 0,
        "carousel_item": meta.param(request, "is_carousel_item") == "true",
    }
    if media_type == "CAROUSEL":
        children = [c for c in meta.param(request, "children").split(",") if c]
        docs = [s.get("container", c) for c in children]
        if not 2 <= len(children) <= 20 or any(
            d is None or d["user_id"] != user_id or not d["carousel_item"] for d in docs
        ):
            return meta.graph_error("(#100) A carousel needs 2 to 20 valid carousel item containers", code=100)
        fields["children"] = children
    elif media_type in {"IMAGE", "VIDEO"}:
        url = meta.param(request, "image_url" if media_type == "IMAGE" else "video_url")
        problem = meta.fetch_media(url, kinds=("image",) if media_type == "IMAGE" else ("video",))
        problem = problem or media_checks.refusal_of_url(Platform.THREADS, _post_type(request), url)
        fields.update(media_url=url, polls_left=1 if media_type == "VIDEO" else 0)
        if problem:
            fields["error_message"] = f"FAILED_DOWNLOADING_{media_type}: {problem}"
    elif media_type != "TEXT":
        return meta.graph_error(f"(#100) Invalid media_type {media_type or '(missing)'}", code=100)
    elif not text:
        return meta.graph_error("(#100) A TEXT post needs text", code=100)
    reply_to = meta.param(request, "reply_to_id")
    if reply_to:
        request.sandbox_log = {"replyTo": reply_to}  # type: ignore[attr-defined]
        if s.get("thread", reply_to) is None and _comment_of(reply_to) is None:
            return meta.graph_error(
                f"(#100) Param reply_to_id must be a valid Threads media id: {reply_to}", code=100, subcode=33
            )
        fields["reply_to_id"] = reply_to
    container_id = meta.new_numeric_id(s, "179")
    status = "ERROR" if fields.get("error_message") else "IN_PROGRESS"
    s.put(
        "container",
        container_id,
        {"id": container_id, "user_id": user_id, "created": time.time(), "status": status, **fields},
    )
    return JsonResponse({"id": container_id})


def _not_publishable(container: dict[str, Any]) -> JsonResponse | None:
    status = _container_view(container)["status"]
    if status == "FINISHED":
        return None
    return meta.graph_error(
        "Media Not Found",
        code=24,
        subcode=4279009 if status == "ERROR" else 2207027,
        error_user_msg=f"The container is {status} and cannot be published yet",
    )


@simulator_view(SLUG)
def threads_publish(request: HttpRequest, version: str, user_id: str) -> JsonResponse:
    _, error = _auth(request, user_id=user_id)
    if error:
        return error
    s = _store()
    user = s.get("user", user_id) or {}

    def published(container: dict[str, Any]) -> dict[str, Any]:
        kind = "CAROUSEL_ALBUM" if container["media_type"] == "CAROUSEL" else container["media_type"]
        return {
            "username": user.get("username", ""),
            "text": container["text"],
            "media_type": "TEXT_POST" if kind == "TEXT" else kind,
            "media_url": container.get("media_url", ""),
            **({"reply_to_id": container["reply_to_id"]} if container.get("reply_to_id") else {}),
        }

    return meta.publish_container(
        request,
        s,
        owner_key="user_id",
        owner=user_id,
        collection="thread",
        text_key="text",
        status_key="status",
        quota_total=int(user.get("quota_total", QUOTA_TOTAL)),
        invalid_id=lambda: meta.graph_error("(#100) Invalid creation_id", code=100),
        refusal=_not_publishable,
        quota_reached=lambda: meta.graph_error(
            "Application request limit reached",
            code=4,
            subcode=2207042,
            status=403,
            error_user_msg="You reached the maximum number of posts allowed in 24 hours.",
        ),
        published=published,
        new_media_id=lambda container: _reply_id(s, user, container),
    )


def _reply_id(s: SandboxStore, user: dict[str, Any], container: dict[str, Any]) -> str:
    """The id of what a container publishes: a new post's, or for a reply (``reply_to_id``) the
    account's reply as the audience lists it under the thread's root post."""
    target = str(container.get("reply_to_id") or "")
    if not target:
        return meta.new_numeric_id(s, "180")
    found = _comment_of(target)
    if found is not None:
        root, parent = found[0], found[1]["id"]
    else:
        root, parent = s.get("thread", target) or {}, ""
    if not root:  # gone since the container was made: a post of its own id
        return meta.new_numeric_id(s, "180")
    person = audience.Person(
        str(user.get("id") or ""),
        str(user.get("name") or ""),
        str(user.get("username") or ""),
        pages.avatar_url(SLUG, str(user.get("id") or "")),
    )
    doc = meta.add_account_comment(s, str(root["id"]), parent, str(container.get("text") or ""), person)
    return meta.numeric_comment_id(doc["id"])


@simulator_view(SLUG)
def publishing_limit(request: HttpRequest, version: str, user_id: str) -> JsonResponse:
    _, error = _auth(request, user_id=user_id)
    if error:
        return error
    s = _store()
    total = int((s.get("user", user_id) or {}).get("quota_total", QUOTA_TOTAL))
    return JsonResponse(
        meta.publishing_limit_body(meta.quota_used(s.all("thread"), owner_key="user_id", owner=user_id), total)
    )


def _replies(post: dict[str, Any]) -> int:
    """The ``replies`` insight of a post (or of one of the account's replies): its direct replies
    as the conversation lists them (Threads counts the top-level replies only); a hidden one still
    counts, as it is still listed."""
    if post.get("reply_to_id"):
        found = _comment_of(post["id"])
        return int(found[1]["replyCount"]) if found is not None else 0
    return audience.comment_count(audience.thread(_store(), SLUG, post["id"], post["created"]), direct_only=True)


@simulator_view(SLUG)
def insights(request: HttpRequest, version: str, media_id: str) -> JsonResponse:
    _, error = _auth(request)
    if error:
        return error
    post = _store().get("thread", media_id)
    if post is None:
        return meta.graph_error(
            f"Unsupported get request. Object with ID '{media_id}' does not exist", code=100, subcode=33
        )
    names = [m for m in request.GET.get("metric", "").split(",") if m]
    if not names or any(n not in INSIGHT_METRICS for n in names):
        return meta.graph_error(f"(#100) metric must be one of {', '.join(sorted(INSIGHT_METRICS))}", code=100)
    grown = meta.grown_metrics(post["created"])
    values = {
        "views": grown["views"],
        "likes": grown["likes"],
        "replies": _replies(post),
        "reposts": grown["shares"],
        "quotes": grown["shares"] // 2,
        "shares": grown["shares"] // 3,
    }
    return JsonResponse({"data": meta.metric_entries(names, values, media_id, "lifetime")})


@simulator_view(SLUG)
def user_insights(request: HttpRequest, version: str, user_id: str) -> JsonResponse:
    _, error = _auth(request, user_id=user_id)
    if error:
        return error
    if request.GET.get("metric") != "followers_count":
        return meta.graph_error(
            "(#100) metric must be one of views, likes, replies, reposts, quotes, "
            "followers_count, follower_demographics",
            code=100,
        )
    user = _store().get("user", user_id) or {}
    entry = {
        "name": "followers_count",
        "period": "day",
        "title": "followers_count",
        "description": "The number of followers.",
        "total_value": {"value": user.get("followers_count", 0)},
        "id": f"{user_id}/insights/followers_count/day",
    }
    return JsonResponse({"data": [entry]})


# --- replies: the audience (platforms.sandbox.audience) in Threads' shapes ---------------------
# ``/{media-id}/replies`` lists the direct replies, ``/{media-id}/conversation`` every reply below
# at any depth, flattened (each naming ``replied_to``); both newest first unless ``reverse=false``.
# Reply ids are digits (meta.numeric_comment_id); the account's own replies are published through
# containers with ``reply_to_id`` and can be deleted like its posts, others' only hidden
# (``/{reply-id}/manage_reply``, top-level replies only: their nested replies are hidden with them).


def platform_comment_id(neutral: str, parent: str = "") -> str:
    """The id this simulator gives the audience comment ``neutral`` (an id of
    :mod:`platforms.sandbox.audience`; ``parent`` its parent's, "" for one under the post), so a
    test predicts the ids a sync must find."""
    return meta.numeric_comment_id(neutral)


def _comment_of(reply_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(the root post, the reply as the audience shows it now) of a reply id."""
    neutral = meta.neutral_of_numeric(reply_id)
    if neutral is None:
        return None
    root_id, _ = audience.split_id(neutral)
    root = _store().get("thread", root_id)
    if root is None or root.get("reply_to_id"):
        return None
    found = audience.find(_store(), SLUG, neutral, root["created"])
    return None if found is None else (root, found)


def _reply_view(root: dict[str, Any], reply: dict[str, Any], *, hidden: bool) -> dict[str, Any]:
    reply_id = meta.numeric_comment_id(reply["id"])
    username = reply["author"]["handle"]
    return {
        "id": reply_id,
        "media_product_type": "THREADS",
        "media_type": "TEXT_POST",
        "text": reply["text"],
        "timestamp": meta.iso(reply["createdAt"]),
        "username": username,
        "shortcode": _shortcode(reply_id),
        "permalink": f"{pages.public_base(SLUG)}/@{username}/post/{_shortcode(reply_id)}",
        "is_quote_post": False,
        "is_reply": True,
        "has_replies": reply["replyCount"] > 0,
        "root_post": {"id": root["id"]},
        "replied_to": {"id": meta.numeric_comment_id(reply["parentId"]) if reply["parentId"] else root["id"]},
        "is_reply_owned_by_me": reply["fromAccount"],
        "hide_status": "HIDDEN" if hidden else "NOT_HUSHED",
        "reply_audience": "EVERYONE",
    }


def _listing(request: HttpRequest, media_id: str, *, nested: bool) -> JsonResponse:
    payload, error = _auth(request)
    if error or payload is None:
        return error or meta.invalid_token()
    s = _store()
    found = _comment_of(media_id)
    root = found[0] if found is not None else s.get("thread", media_id)
    if root is None or (found is None and root.get("reply_to_id")):
        return meta.missing_object("GET", media_id)
    every = audience.thread(s, SLUG, root["id"], root["created"])
    hidden: dict[str, bool] = {}
    below: set[str] = {found[1]["id"]} if found is not None else {""}
    shown = []
    for reply in every:  # oldest first: a parent comes before its replies
        hidden[reply["id"]] = reply["hidden"] or hidden.get(reply["parentId"], False)
        if reply["parentId"] in below:
            shown.append(reply)
            if nested:
                below.add(reply["id"])
    if request.GET.get("reverse", "true").lower() != "false":
        shown.reverse()
    return JsonResponse(meta.paged(request, [_reply_view(root, r, hidden=hidden[r["id"]]) for r in shown]))


@simulator_view(SLUG)
def replies(request: HttpRequest, version: str, media_id: str) -> JsonResponse:
    return _listing(request, media_id, nested=False)


@simulator_view(SLUG)
def conversation(request: HttpRequest, version: str, media_id: str) -> JsonResponse:
    return _listing(request, media_id, nested=True)


@simulator_view(SLUG)
def manage_reply(request: HttpRequest, version: str, reply_id: str) -> JsonResponse:
    """``POST /{reply-id}/manage_reply`` with ``hide`` true|false: ``{"success": true}``."""
    hidden = meta.hide_flag(request, "hide")
    request.sandbox_log = {"hide": hidden, "remoteId": reply_id}  # type: ignore[attr-defined]
    if request.method != "POST":
        return meta.bad_method()
    payload, error = _auth(request)
    if error or payload is None:
        return error or meta.invalid_token()
    found = _comment_of(reply_id)
    if found is None:
        return meta.missing_object("POST", reply_id)
    root, reply = found
    if root["user_id"] != payload["account_id"]:
        return meta.graph_error("(#10) Application does not have permission for this action", code=10)
    if hidden is None:
        return meta.graph_error("(#100) The parameter hide is required", code=100)
    if reply["parentId"]:
        return meta.graph_error(
            "(#100) Only top-level replies can be hidden; nested replies are hidden with them", code=100
        )
    audience.set_state(_store(), reply["id"], hidden=hidden)
    return JsonResponse({"success": True})


def post_page(request: HttpRequest, username: str, shortcode: str) -> HttpResponse:
    """The post's page on threads.net, as its ``permalink`` opens it."""
    s = _store()
    post = next((p for p in s.all("thread") if p["username"] == username and _shortcode(p["id"]) == shortcode), None)
    user = s.get("user", str(post.get("user_id") or "")) if post else None
    if post is None:
        return pages.not_found_page("Threads")
    return pages.post_page(
        platform="Threads",
        author=user["name"] if user else username,
        handle=f"@{username}",
        text=str(post.get("text") or ""),
        media=[post["media_url"]] if post.get("media_url") else [],
        avatar=pages.avatar_url(SLUG, user["id"]) if user else "",
    )


urlpatterns = [
    *pages.urlpatterns,
    re_path(r"^@(?P<username>[\w.]+)/post/(?P<shortcode>\w+)/?$", post_page),
    re_path(r"^oauth/authorize/?$", authorize),
    re_path(r"^oauth/access_token$", oauth_access_token),
    re_path(r"^access_token$", access_token),
    re_path(r"^refresh_access_token$", refresh_access_token),
    re_path(V + r"me$", me),
    re_path(V + r"(?P<user_id>\d+)/threads$", threads),
    re_path(V + r"(?P<user_id>\d+)/threads_publish$", threads_publish),
    re_path(V + r"(?P<user_id>\d+)/threads_publishing_limit$", publishing_limit),
    re_path(V + r"(?P<user_id>\d+)/threads_insights$", user_insights),
    re_path(V + r"(?P<media_id>\d+)/insights$", insights),
    re_path(V + r"(?P<media_id>\d+)/replies$", replies),
    re_path(V + r"(?P<media_id>\d+)/conversation$", conversation),
    re_path(V + r"(?P<reply_id>\d+)/manage_reply$", manage_reply),
    re_path(V + r"(?P<node_id>\d+)$", node),
]


# --- armed faults (platforms.sandbox.faults) ---------------------------------------------------
FAULTS = {
    "rate_limited": lambda request: meta.usage_limited(
        "(#4) Application request limit reached", code=4, usage_type="threads"
    ),
    "quota_exhausted": meta.publishing_quota_reached,
    "server_error": meta.unexpected_error,
}
