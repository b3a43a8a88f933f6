"""Facebook Graph API simulator (Pages): OAuth dialog and token exchange, /me/accounts, page
feed/photos/videos, reels and stories upload phases, the rupload host, insights and field reads.

Every authorization creates a user who manages one page. Videos and reels are "processing" on
the first status read and "ready" afterwards."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import re_path

from platforms.base import Platform
from platforms.sandbox import _meta_common as meta
from platforms.sandbox import audience, media_checks, pages
from platforms.sandbox.store import SandboxStore
from platforms.sandbox.views import simulator_view

FB = Platform.FACEBOOK
SLUG = "facebook"
V = r"^(?P<version>v\d+\.\d+)/"


def _store() -> SandboxStore:
    return SandboxStore(SLUG)


def _create_user() -> str:
    s = _store()
    user_id = meta.new_numeric_id(s, "10")
    page_id = meta.new_numeric_id(s, "61")
    s.put(
        "page",
        page_id,
        {
            "id": page_id,
            "name": f"Sandbox Page {page_id[-4:]}",
            "username": f"sandboxpage{page_id[-6:]}",
            "category": "Brand",
            "followers_count": 120 + int(page_id[-2:]),
            "user_id": user_id,
        },
    )
    s.put("user", user_id, {"id": user_id, "name": f"Sandbox User {user_id[-4:]}", "pages": [page_id]})
    return user_id


def _auth(request: HttpRequest, *, page_id: str | None = None) -> tuple[dict[str, Any] | None, JsonResponse | None]:
    payload, error = meta.authenticate(_store(), request)
    if error or payload is None:
        return None, error
    if page_id is not None and (payload.get("kind") != "page" or payload["account_id"] != page_id):
        return None, meta.graph_error(
            "(#200) The user hasn't authorized the application to perform this action", code=200
        )
    return payload, None


def _json(body: dict[str, Any], status: int = 200) -> JsonResponse:
    response = JsonResponse(body, status=status)
    response["X-App-Usage"] = json.dumps({"call_count": 1, "total_cputime": 1, "total_time": 1})
    return response


dialog, access_token = meta.facebook_login_views(SLUG, _create_user)


@simulator_view(SLUG)
def me(request: HttpRequest, version: str) -> JsonResponse:
    payload, error = _auth(request)
    if error or payload is None:
        return error or meta.invalid_token()
    if payload["kind"] == "page":
        page = _store().get("page", payload["account_id"]) or {}
        return _json({"id": page.get("id"), "name": page.get("name")})
    user = _store().get("user", payload["account_id"]) or {}
    return _json({"id": user.get("id"), "name": user.get("name")})


@simulator_view(SLUG)
def accounts(request: HttpRequest, version: str) -> JsonResponse:
    payload, error = _auth(request)
    if error or payload is None:
        return error or meta.invalid_token()
    s = _store()
    user = s.get("user", payload["account_id"]) if payload["kind"] == "user" else None
    if user is None:
        return meta.graph_error("(#100) Tried accessing nonexisting field (accounts) on node type (Page)", code=100)
    found = []
    for page_id in user["pages"]:
        page = s.get("page", page_id) or {}
        token = s.issue_token(page_id, kind="page", user_id=user["id"])
        found.append(
            {
                "access_token": token,
                "category": page.get("category"),
                "name": page.get("name"),
                "username": page.get("username"),
                "id": page_id,
                "tasks": ["ADVERTISE", "ANALYZE", "CREATE_CONTENT", "MODERATE", "MANAGE"],
                "picture": {"data": {"url": pages.avatar_url(SLUG, page_id)}},
            }
        )
    return _json(meta.paged(request, found))


@simulator_view(SLUG)
def debug_token(request: HttpRequest, version: str) -> JsonResponse:
    _, error = _auth(request)
    if error:
        return error
    s = _store()
    payload = s.token(request.GET.get("input_token", ""))
    if payload is None or s.is_revoked(str(payload["account_id"])):
        return _json({"data": {"is_valid": False, "error": {"code": 190, "message": "Invalid OAuth access token."}}})
    data = {
        "app_id": "sandbox-facebook-app",
        "type": payload["kind"].upper(),
        "is_valid": True,
        "expires_at": 0,
        "scopes": ["pages_show_list", "pages_manage_posts", "pages_read_engagement", "read_insights"],
        "user_id": payload.get("user_id", payload["account_id"]),
    }
    if payload["kind"] == "page":
        data["profile_id"] = payload["account_id"]
    return _json({"data": data})


# ``comments.summary(total_count)`` counts what the edge lists with its ``filter``: the top-level
# comments (the default) or, with ``filter(stream)``, every comment and reply. A hidden comment
# still counts (the page still lists it, marked ``is_hidden``).
STREAM_FILTER = re.compile(r"(?:^|[,{])comments(?:\.\w+\([^)]*\))*\.filter\(stream\)")


def _comment_totals(request: HttpRequest, posts: list[dict[str, Any]]) -> dict[str, int]:
    """Each post's ``comments.summary.total_count``, by post id, counted from the comments the
    audience listing shows (every post's in the same three store reads)."""
    stream = STREAM_FILTER.search(request.GET.get("fields", "")) is not None
    shown = audience.threads(_store(), SLUG, [(p["id"], p["created"]) for p in posts])
    return {post_id: audience.comment_count(every, direct_only=not stream) for post_id, every in shown.items()}


def _post_view(post: dict[str, Any], comments: int) -> dict[str, Any]:
    """A page post; ``comments`` its comment count (:func:`_comment_totals`)."""
    grown = meta.grown_metrics(post["created"])
    return {
        "id": post["id"],
        "message": post.get("message", ""),
        "created_time": meta.iso(post["created"]),
        "updated_time": meta.iso(post.get("updated") or post["created"]),
        "permalink_url": f"{pages.public_base(SLUG)}/{post['id']}",
        "full_picture": post.get("picture", ""),
        "reactions": {"data": [], "summary": {"total_count": grown["likes"]}},
        "comments": {"data": [], "summary": {"order": "ranked", "total_count": comments}},
        "shares": {"count": grown["shares"]},
        "insights": {
            "data": [
                {
                    "name": "post_impressions",
                    "period": "lifetime",
                    "values": [{"value": grown["views"]}],
                    "id": f"{post['id']}/insights/post_impressions",
                },
                {
                    "name": "post_impressions_unique",
                    "period": "lifetime",
                    "values": [{"value": grown["reach"]}],
                    "id": f"{post['id']}/insights/post_impressions_unique",
                },
            ]
        },
    }


def _video_view(video: dict[str, Any]) -> dict[str, Any]:
    processing = video.get("polls_left", 0) > 0
    published = video.get("phase") == "published"
    if processing:
        _store().update("video", video["id"], polls_left=video["polls_left"] - 1)
    phase_status = "in_progress" if processing else "complete"
    status = {
        "video_status": "processing" if processing else ("ready" if published else "upload_complete"),
        "uploading_phase": {"status": "complete" if video.get("file_url") else "not_started"},
        "processing_phase": {"status": phase_status if video.get("file_url") else "not_started"},
        "publishing_phase": {
            "status": "complete" if published and not processing else "not_started",
            "publish_status": "published" if published else "not_published",
        },
    }
    body: dict[str, Any] = {"id": video["id"], "status": status, "title": video.get("title", "")}
    if video.get("post_id"):
        body["post_id"] = video["post_id"]
        body["permalink_url"] = f"/reel/{video['id']}" if video["kind"] == "reel" else f"/{video['post_id']}"
    return body


def _node(request: HttpRequest, node_id: str) -> dict[str, Any] | None:
    s = _store()
    page = s.get("page", node_id)
    if page:
        return {
            "id": page["id"],
            "name": page["name"],
            "username": page["username"],
            "followers_count": page["followers_count"],
            "fan_count": page["followers_count"],
            "link": f"{pages.public_base(SLUG)}/{page['id']}",
            "picture": {"data": {"url": pages.avatar_url(SLUG, page["id"])}},
        }
    post = s.get("post", node_id)
    if post:
        return _post_view(post, _comment_totals(request, [post])[post["id"]])
    video = s.get("video", node_id)
    if video:
        return _video_view(video)
    photo = s.get("photo", node_id)
    if photo:
        return {"id": photo["id"], "link": photo["url"], "created_time": meta.iso(photo["created"])}
    found = _comment_of(node_id)
    if found is not None:
        return _comment_view(*found)
    return None


@simulator_view(SLUG)
def node(request: HttpRequest, version: str, node_id: str) -> JsonResponse:
    if (comment := _comment_of(node_id)) is not None:
        return _comment_node(request, node_id, *comment)
    if request.method in ("POST", "DELETE"):
        return _change_post(request, node_id)
    if request.method != "GET":
        return meta.bad_method()
    _, error = _auth(request)
    if error:
        return error
    found = _node(request, node_id)
    if found is None:
        return meta.graph_error(
            f"Unsupported get request. Object with ID '{node_id}' does not exist, cannot be "
            "loaded due to missing permissions, or does not support this operation",
            code=100,
            subcode=33,
        )
    return _json(found)


def _change_post(request: HttpRequest, post_id: str) -> JsonResponse:
    """``POST /{post-id}`` with ``message`` edits a page post's text; ``DELETE /{post-id}``
    removes it (reads then answer code 100, subcode 33). Both need the page's token and answer
    ``{"success": true}``."""
    deleting = request.method == "DELETE"
    request.sandbox_log = {"delete" if deleting else "edit": True, "remoteId": post_id}  # type: ignore[attr-defined]
    payload, error = _auth(request)
    if error or payload is None:
        return error or meta.invalid_token()
    s = _store()
    post = s.get("post", post_id)
    if post is None:
        return meta.missing_object(request.method or "POST", post_id)
    if payload.get("kind") != "page" or payload["account_id"] != post["page_id"]:
        return meta.graph_error("(#200) The user hasn't authorized the application to perform this action", code=200)
    if deleting:
        s.delete("post", post_id)
        return _json({"success": True})
    message = meta.param(request, "message")
    request.sandbox_log["text"] = message[:80]  # type: ignore[attr-defined]
    if (scenario := meta.scenario_error(s, message, f"edit:{post_id}")) is not None:
        return scenario
    if not message.strip() and post["kind"] == "status" and not post.get("link"):
        return meta.graph_error("(#100) Missing message or attachment", code=100)
    s.update("post", post_id, message=message, updated=time.time())
    return _json({"success": True})


@simulator_view(SLUG)
def permissions(request: HttpRequest, version: str, user_id: str) -> JsonResponse:
    return meta.revoke_permissions(_store(), request, user_id)


@simulator_view(SLUG)
def root(request: HttpRequest, version: str) -> JsonResponse:
    _, error = _auth(request)
    if error:
        return error
    ids = [i for i in request.GET.get("ids", "").split(",") if i]
    if not ids:
        return meta.graph_error("(#100) Missing ids parameter", code=100)
    posts = {p["id"]: p for p in _store().get_many("post", ids) if p is not None}
    totals = _comment_totals(request, list(posts.values()))
    found = {i: _post_view(posts[i], totals[i]) if i in posts else _node(request, i) for i in ids}
    missing = [i for i, n in found.items() if n is None]
    if missing:
        return meta.graph_error(f"(#803) Some of the aliases you requested do not exist: {','.join(missing)}", code=803)
    return _json({i: n for i, n in found.items() if n is not None})


def _new_post(
    page_id: str, *, message: str, kind: str, object_id: str = "", picture: str = "", link: str = ""
) -> dict[str, Any]:
    s = _store()
    post_id = f"{page_id}_{object_id or meta.new_numeric_id(s, '12')}"
    doc = {
        "id": post_id,
        "page_id": page_id,
        "message": message,
        "kind": kind,
        "created": time.time(),
        "picture": picture,
        "link": link,
    }
    stored, _ = s.create_once("post", post_id, doc)
    return stored


def _media_fbid(raw: str) -> str:
    try:
        item = json.loads(raw)
    except ValueError:
        return ""
    return str(item.get("media_fbid", "")) if isinstance(item, dict) else ""


@simulator_view(SLUG)
def feed(request: HttpRequest, version: str, page_id: str) -> JsonResponse:
    _, error = _auth(request, page_id=page_id if request.method == "POST" else None)
    if error:
        return error
    s = _store()
    if request.method == "GET":
        since, until = meta.since_until(request)
        posts = [p for p in s.all("post") if p["page_id"] == page_id and since <= p["created"] <= until]
        posts.sort(key=lambda p: p["created"], reverse=True)
        page = meta.paged(request, posts)
        totals = _comment_totals(request, page["data"])
        return _json({**page, "data": [_post_view(p, totals[p["id"]]) for p in page["data"]]})
    message = meta.param(request, "message")
    if (scenario := meta.scenario_error(s, message, f"feed:{page_id}")) is not None:
        return scenario
    attached = [_media_fbid(str(v)) for k, v in request.POST.items() if k.startswith("attached_media[")]
    if not message and not attached and not meta.param(request, "link"):
        return meta.graph_error("(#100) Missing message or attachment", code=100)
    for media_fbid in attached:
        photo = s.get("photo", media_fbid)
        if photo is None or photo["page_id"] != page_id:
            return meta.graph_error("(#100) param attached_media must be an array of unpublished photo ids", code=100)
    post = _new_post(page_id, message=message, kind="status", link=meta.param(request, "link"))
    meta.log_publish(request, remote_id=post["id"], text=post["message"])
    return _json({"id": post["id"]})


@simulator_view(SLUG)
def photos(request: HttpRequest, version: str, page_id: str) -> JsonResponse:
    _, error = _auth(request, page_id=page_id)
    if error:
        return error
    s = _store()
    caption = meta.param(request, "caption") or meta.param(request, "message")
    published = meta.param(request, "published", "true").lower() != "false"
    if published and (scenario := meta.scenario_error(s, caption, f"photos:{page_id}")) is not None:
        return scenario
    url = meta.param(request, "url")
    if (problem := meta.fetch_media(url, kinds=("image",)) or media_checks.refusal_of_url(FB, "FEED", url)) is not None:
        return meta.graph_error(f"(#324) Missing or invalid image file: {problem}", code=324)
    photo_id = meta.new_numeric_id(s, "13")
    s.put("photo", photo_id, {"id": photo_id, "page_id": page_id, "url": url, "created": time.time()})
    if not published:
        return _json({"id": photo_id})
    post = _new_post(page_id, message=caption, kind="photo", object_id=photo_id, picture=url)
    meta.log_publish(request, remote_id=post["id"], text=post["message"])
    return _json({"id": photo_id, "post_id": post["id"]})


@simulator_view(SLUG)
def photo_stories(request: HttpRequest, version: str, page_id: str) -> JsonResponse:
    _, error = _auth(request, page_id=page_id)
    if error:
        return error
    photo = _store().get("photo", meta.param(request, "photo_id"))
    if photo is None or photo["page_id"] != page_id:
        return meta.graph_error("(#100) Invalid photo_id", code=100)
    post = _new_post(page_id, message="", kind="story", object_id=photo["id"], picture=photo["url"])
    meta.log_publish(request, remote_id=post["id"], text=post["message"])
    return _json({"success": True, "post_id": post["id"]})


@simulator_view(SLUG)
def videos(request: HttpRequest, version: str, page_id: str) -> JsonResponse:
    _, error = _auth(request, page_id=page_id)
    if error:
        return error
    s = _store()
    description = meta.param(request, "description")
    if (scenario := meta.scenario_error(s, description, f"videos:{page_id}")) is not None:
        return scenario
    file_url = meta.param(request, "file_url")
    if (
        problem := meta.fetch_media(file_url, kinds=("video",)) or media_checks.refusal_of_url(FB, "FEED", file_url)
    ) is not None:
        return meta.graph_error(
            f"(#352) Sorry, the video file you selected is in a format that we don't support: {problem}", code=352
        )
    video_id = meta.new_numeric_id(s, "14")
    post = _new_post(page_id, message=description, kind="video", object_id=video_id)
    s.put(
        "video",
        video_id,
        {
            "id": video_id,
            "page_id": page_id,
            "kind": "video",
            "file_url": file_url,
            "title": meta.param(request, "title"),
            "phase": "published",
            "polls_left": 1,
            "post_id": post["id"],
        },
    )
    meta.log_publish(request, remote_id=post["id"], text=post["message"])
    return _json({"id": video_id})


@simulator_view(SLUG)
def upload_phases(request: HttpRequest, version: str, page_id: str, edge: str) -> JsonResponse:
    """``video_reels`` / ``video_stories``: upload_phase start → (rupload) → finish."""
    _, error = _auth(request, page_id=page_id)
    if error:
        return error
    s = _store()
    kind = "reel" if edge == "video_reels" else "video_story"
    phase = meta.param(request, "upload_phase")
    if phase == "start":
        video_id = meta.new_numeric_id(s, "15")
        s.put("video", video_id, {"id": video_id, "page_id": page_id, "kind": kind, "phase": "started"})
        upload_url = request.build_absolute_uri(f"/sandbox/{SLUG}/video-upload/{version}/{video_id}")
        return _json({"video_id": video_id, "upload_url": upload_url})
    if phase != "finish":
        return meta.graph_error("(#100) upload_phase must be one of start, finish", code=100)
    video = s.get("video", meta.param(request, "video_id"))
    if video is None or video["page_id"] != page_id or video["kind"] != kind:
        return meta.graph_error("(#100) Invalid video_id", code=100)
    if not video.get("file_url"):
        return meta.graph_error(
            "(#6000) There was a problem uploading your video file: no file was uploaded", code=6000
        )
    description = meta.param(request, "description")
    scenario = meta.scenario_error(s, description, f"{edge}:{video['id']}")
    if video["phase"] != "published" and scenario is not None:
        return scenario
    post = _new_post(page_id, message=description, kind=kind, object_id=video["id"])
    if video["phase"] != "published":
        s.update("video", video["id"], phase="published", polls_left=1, post_id=post["id"], title=description)
    meta.log_publish(request, remote_id=post["id"], text=post["message"])
    body: dict[str, Any] = {"success": True}
    if kind == "video_story":
        body["post_id"] = post["id"]
    return _json(body)


@simulator_view(SLUG)
def rupload(request: HttpRequest, version: str, video_id: str) -> JsonResponse:
    if request.method != "POST":
        return meta.bad_method()
    _, error = _auth(request)
    if error:
        return error
    s = _store()
    video = s.get("video", video_id)
    if video is None:
        return meta.graph_error("(#100) Invalid video id", code=100)
    # the documented header is ``file_url``; the WSGI server drops names with "_", so read its twin
    file_url = request.headers.get("file-url", "")
    if file_url:
        if (
            problem := meta.fetch_media(file_url, kinds=("video",)) or media_checks.rupload_refusal(FB, video, file_url)
        ) is not None:
            return meta.graph_error(f"(#352) {problem}", code=352)
    elif not request.body:
        return meta.graph_error("(#100) Either file_url header or the video bytes are required", code=100)
    s.update("video", video_id, file_url=file_url or "uploaded-bytes")
    return _json({"success": True})


@simulator_view(SLUG)
def insights(request: HttpRequest, version: str, post_id: str) -> JsonResponse:
    _, error = _auth(request)
    if error:
        return error
    post = _store().get("post", post_id)
    if post is None:
        return meta.graph_error(
            f"Unsupported get request. Object with ID '{post_id}' does not exist", code=100, subcode=33
        )
    return _json(_post_view(post, 0)["insights"])  # the insights edge carries no comment count


# --- comments: the audience (platforms.sandbox.audience) in Graph shapes ---------------------
# Comment ids are ``<post id>_<digits>`` (meta.underscored_comment_id). ``filter=stream`` lists
# every comment of a post flattened (each reply naming its ``parent``), ``filter=toplevel`` (the
# default) the comments under the post itself; ``order`` chronological (default) or
# reverse_chronological. A reply to a reply joins its top-level comment, as Facebook nests one
# level only.


def platform_comment_id(neutral: str, parent: str = "") -> str:
    """The id this simulator gives the audience comment ``neutral`` (an id of
    :mod:`platforms.sandbox.audience`; ``parent`` its parent's, "" for one under the post), so a
    test predicts the ids a sync must find."""
    return meta.underscored_comment_id(neutral)


def _comment_of(comment_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(the page post, the comment as the audience shows it now) of a comment id."""
    neutral = meta.neutral_of_underscored(comment_id) if comment_id.count("_") == 2 else None
    if neutral is None:
        return None
    post_id, _ = audience.split_id(neutral)
    post = _store().get("post", post_id)
    if post is None:
        return None
    found = audience.find(_store(), SLUG, neutral, post["created"])
    return None if found is None else (post, found)


def _comment_view(post: dict[str, Any], comment: dict[str, Any]) -> dict[str, Any]:
    comment_id = meta.underscored_comment_id(comment["id"])
    author = comment["author"]
    view: dict[str, Any] = {
        "id": comment_id,
        "message": comment["text"],
        "created_time": meta.iso(comment["createdAt"]),
        "from": {"id": author["id"], "name": author["name"], "picture": {"data": {"url": author["avatar_url"]}}},
        "like_count": comment["likeCount"],
        "comment_count": comment["replyCount"],
        "is_hidden": comment["hidden"],
        "user_likes": comment["liked"],
        "can_comment": not comment["parentId"],
        "can_hide": not comment["fromAccount"],
        "can_like": True,
        "can_remove": True,
        "permalink_url": f"{pages.public_base(SLUG)}/{post['id']}?comment_id={comment_id}",
    }
    if comment["parentId"]:
        view["parent"] = {"id": meta.underscored_comment_id(comment["parentId"])}
    return view


def _page_person(page_id: str) -> audience.Person:
    page = _store().get("page", page_id) or {}
    return audience.Person(
        page_id, str(page.get("name") or ""), str(page.get("username") or ""), pages.avatar_url(SLUG, page_id)
    )


def _owner_only(payload: dict[str, Any], post: dict[str, Any]) -> JsonResponse | None:
    if payload.get("kind") != "page" or payload["account_id"] != post["page_id"]:
        return meta.graph_error("(#200) The user hasn't authorized the application to perform this action", code=200)
    return None


def _list_comments(request: HttpRequest, post: dict[str, Any], parent: str = "") -> JsonResponse:
    every = audience.thread(_store(), SLUG, post["id"], post["created"])
    if parent:
        shown = [c for c in every if c["parentId"] == parent]
    elif request.GET.get("filter", "toplevel") == "stream":
        shown = every
    else:
        shown = [c for c in every if not c["parentId"]]
    if request.GET.get("order") == "reverse_chronological":
        shown = list(reversed(shown))
    return _json(meta.paged(request, [_comment_view(post, c) for c in shown]))


def _reply(request: HttpRequest, post: dict[str, Any], parent: dict[str, Any] | None) -> JsonResponse:
    """``POST /{post-id}/comments`` or ``POST /{comment-id}/comments`` with ``message``."""
    s = _store()
    message = meta.param(request, "message")
    target = post["id"] if parent is None else meta.underscored_comment_id(parent["id"])
    request.sandbox_log = {"reply": parent is not None, "on": target, "text": message[:80]}  # type: ignore[attr-defined]
    if not message.strip():
        return meta.graph_error("(#100) The parameter message is required", code=100)
    if parent is not None and (scenario := meta.scenario_error(s, message, f"reply:{target}")) is not None:
        return scenario
    top = "" if parent is None else (parent["parentId"] or parent["id"])

    def create(text: str) -> str:
        doc = meta.add_account_comment(s, post["id"], top, text, _page_person(post["page_id"]))
        return meta.underscored_comment_id(doc["id"])

    if parent is None:
        return meta.post_comment(s, request, object_id=post["id"], exists=True, create=create)
    reply_id = create(message)
    request.sandbox_log.update(comment=True, remoteId=reply_id, body={"message": message})  # type: ignore[attr-defined]
    return _json({"id": reply_id})


@simulator_view(SLUG)
def comments(request: HttpRequest, version: str, object_id: str) -> JsonResponse:
    payload, error = _auth(request)
    if error or payload is None:
        return error or meta.invalid_token()
    s = _store()
    found = _comment_of(object_id)
    post = found[0] if found is not None else s.get("post", object_id)
    if request.method == "GET":
        if post is None:
            return meta.missing_object("GET", object_id)
        return _list_comments(request, post, found[1]["id"] if found is not None else "")
    if request.method != "POST":
        return meta.bad_method()
    if post is None:
        exists = any(s.get(kind, object_id) for kind in ("photo", "video"))
        return meta.post_comment(s, request, object_id=object_id, exists=exists)
    if (refused := _owner_only(payload, post)) is not None:
        return refused
    return _reply(request, post, found[1] if found is not None else None)


def _comment_node(request: HttpRequest, comment_id: str, post: dict[str, Any], comment: dict[str, Any]) -> JsonResponse:
    """``GET``, ``POST`` (``is_hidden``) and ``DELETE /{comment-id}``: a comment on one of the
    page's posts, hidden or shown again, or removed (anyone's: the page moderates its posts)."""
    if request.method == "GET":
        _, error = _auth(request)
        return error or _json(_comment_view(post, comment))
    deleting = request.method == "DELETE"
    hidden = meta.hide_flag(request, "is_hidden")
    request.sandbox_log = {"remoteId": comment_id, **({"delete": True} if deleting else {"hide": hidden})}  # type: ignore[attr-defined]
    payload, error = _auth(request)
    if error or payload is None:
        return error or meta.invalid_token()
    if (refused := _owner_only(payload, post)) is not None:
        return refused
    if deleting:
        audience.set_state(_store(), comment["id"], deleted=True)
        return _json({"success": True})
    if request.method != "POST" or hidden is None:
        return meta.graph_error("(#100) The parameter is_hidden is required", code=100)
    if comment["fromAccount"]:
        return meta.graph_error("(#100) A page cannot hide its own comment", code=100)
    audience.set_state(_store(), comment["id"], hidden=hidden)
    return _json({"success": True})


@simulator_view(SLUG)
def comment_likes(request: HttpRequest, version: str, comment_id: str) -> JsonResponse:
    """``POST /{comment-id}/likes`` (the page likes the comment) and ``DELETE`` (unlike)."""
    request.sandbox_log = {"like": request.method == "POST", "remoteId": comment_id}  # type: ignore[attr-defined]
    payload, error = _auth(request)
    if error or payload is None:
        return error or meta.invalid_token()
    found = _comment_of(comment_id)
    if found is None:
        return meta.missing_object(request.method or "POST", comment_id)
    if request.method not in ("POST", "DELETE"):
        return meta.bad_method()
    if (refused := _owner_only(payload, found[0])) is not None:
        return refused
    audience.set_state(_store(), found[1]["id"], liked=request.method == "POST")
    return _json({"success": True})


# --- what a person opens from the links (www.facebook.com) -----------------------------------


def _page_of(page_id: str, text: str, media: list[str]) -> HttpResponse:
    page = _store().get("page", page_id)
    if page is None:
        return pages.not_found_page("Facebook")
    return pages.post_page(
        platform="Facebook",
        author=page["name"],
        handle=f"@{page['username']}",
        text=text,
        media=media,
        avatar=pages.avatar_url(SLUG, page_id),
    )


def post_page(request: HttpRequest, post_id: str) -> HttpResponse:
    """A post's page (its ``permalink_url``), or the page's own when the id is a page's."""
    post = _store().get("post", post_id)
    if post is None:
        if "_" in post_id:
            return pages.not_found_page("Facebook")
        return _page_of(post_id, "", [])
    return _page_of(post["page_id"], post.get("message", ""), [post["picture"]] if post.get("picture") else [])


def reel_page(request: HttpRequest, video_id: str) -> HttpResponse:
    video = _store().get("video", video_id)
    post = _store().get("post", str(video.get("post_id") or "")) if video else None
    if post is None:
        return pages.not_found_page("Facebook")
    return _page_of(post["page_id"], post.get("message", ""), [])


urlpatterns = [
    *pages.urlpatterns,
    re_path(r"^(?P<post_id>\d+(?:_\d+)?)/?$", post_page),
    re_path(r"^reel/(?P<video_id>\d+)/?$", reel_page),
    re_path(V + r"dialog/oauth/?$", dialog),
    re_path(V + r"oauth/access_token$", access_token),
    re_path(V + r"me$", me),
    re_path(V + r"me/accounts$", accounts),
    re_path(V + r"debug_token$", debug_token),
    re_path(r"^video-upload/(?P<version>v\d+\.\d+)/(?P<video_id>\d+)$", rupload),
    re_path(V + r"(?P<page_id>\d+)/(?:feed|published_posts)$", feed),
    re_path(V + r"(?P<page_id>\d+)/photos$", photos),
    re_path(V + r"(?P<page_id>\d+)/photo_stories$", photo_stories),
    re_path(V + r"(?P<page_id>\d+)/videos$", videos),
    re_path(V + r"(?P<page_id>\d+)/(?P<edge>video_reels|video_stories)$", upload_phases),
    re_path(V + r"(?P<post_id>\d+_\d+)/insights$", insights),
    re_path(V + r"(?P<object_id>[\d_]+)/comments$", comments),
    re_path(V + r"(?P<comment_id>\d+_\d+_\d+)/likes$", comment_likes),
    re_path(V + r"(?P<user_id>\d+|me)/permissions$", permissions),
    re_path(V + r"(?P<node_id>[\d_]+)$", node),
    re_path(V + r"?$", root),
]


# --- armed faults (platforms.sandbox.faults): a Page has no publishing quota -----------------
FAULTS = {
    "rate_limited": lambda request: meta.usage_limited("(#32) Page request limit reached", code=32, usage_type="pages"),
    "server_error": meta.unexpected_error,
}
