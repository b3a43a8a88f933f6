"""Instagram Graph API simulator (professional accounts through Facebook Login): OAuth,
/me/accounts with each page's ``instagram_business_account``, media containers (images,
reels, stories, carousels) that are IN_PROGRESS for one status read when they hold video,
``media_publish`` under the content publishing limit, media listing, insights and ``ig_audio``.

Every authorization creates a Facebook user with one page linked to one professional account;
each account supports audio search and is offered trending audio. The publishing limit is the
account's ``quota_total`` (100 a rolling day, as documented)."""

from __future__ import annotations

import json
import time
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import re_path

from platforms.base import Platform
from platforms.sandbox import _meta_common as meta
from platforms.sandbox import audience, media_checks, pages
from platforms.sandbox.store import SandboxStore
from platforms.sandbox.views import simulator_view

SLUG = "instagram"
V = r"^(?P<version>v\d+\.\d+)/"
QUOTA_TOTAL = 100
TRENDING_AUDIO = [
    ("music", "Golden Hour Drive", "The Sandbox Band", 31000),
    ("music", "Late Night Loops", "Lo-Fi Collective", 28000),
    ("music", "Summer Static", "Neon Coast", 45000),
    ("music", "Paper Planes Remix", "DJ Example", 30000),
    ("music", "Morning Coffee", "Acoustic Days", 22000),
    ("original_sound", "Original audio", "sandbox.creator", 15000),
    ("original_sound", "Crowd cheering", "stadium.sounds", 12000),
    ("original_sound", "Rain on the window", "calm.moments", 20000),
]
INSIGHT_METRICS = {"views", "reach", "likes", "comments", "shares", "saved", "total_interactions"}


def _store() -> SandboxStore:
    return SandboxStore(SLUG)


def _create_user() -> str:
    s = _store()
    user_id = meta.new_numeric_id(s, "10")
    page_id = meta.new_numeric_id(s, "61")
    ig_id = meta.new_numeric_id(s, "1784")
    s.put(
        "iguser",
        ig_id,
        {
            "id": ig_id,
            "username": f"sandbox.pro{ig_id[-6:]}",
            "name": f"Sandbox Pro {ig_id[-4:]}",
            "followers_count": 300 + int(ig_id[-2:]),
            "quota_total": QUOTA_TOTAL,
            "page_id": page_id,
        },
    )
    s.put("page", page_id, {"id": page_id, "name": f"Sandbox Page {page_id[-4:]}", "ig_id": ig_id})
    s.put("user", user_id, {"id": user_id, "name": f"Sandbox User {user_id[-4:]}", "pages": [page_id], "owns": [ig_id]})
    return user_id


def _auth(request: HttpRequest, *, ig_id: str | None = None) -> tuple[dict[str, Any] | None, JsonResponse | None]:
    payload, error = meta.authenticate(_store(), request)
    if error or payload is None:
        return None, error
    if ig_id is not None and ig_id not in payload.get("owns", []):
        return None, meta.graph_error(
            "(#10) Application does not have permission for this action", code=10, subcode=2207050
        )
    return payload, None


dialog, access_token = meta.facebook_login_views(SLUG, _create_user)


@simulator_view(SLUG)
def accounts(request: HttpRequest, version: str) -> JsonResponse:
    payload, error = _auth(request)
    if error or payload is None:
        return error or meta.invalid_token()
    s = _store()
    user = s.get("user", payload["account_id"]) or {"pages": []}
    found = []
    for page_id in user["pages"]:
        page = s.get("page", page_id) or {}
        ig = s.get("iguser", page.get("ig_id", "")) or {}
        found.append(
            {
                "id": page_id,
                "name": page.get("name"),
                "access_token": s.issue_token(page_id, kind="page"),
                "instagram_business_account": {
                    "id": ig["id"],
                    "username": ig["username"],
                    "name": ig["name"],
                    "profile_picture_url": pages.avatar_url(SLUG, ig["id"]),
                },
            }
        )
    return JsonResponse(meta.paged(request, found))


def _shortcode(media_id: str) -> str:
    """The code in a post's instagram.com/p/ link."""
    return media_id[-11:]


def _comments_count(media: dict[str, Any]) -> int:
    """``comments_count`` (and the ``comments`` insight): every comment the listing shows, replies
    and hidden ones included."""
    return audience.comment_count(audience.thread(_store(), SLUG, media["id"], media["created"]))


def _media_view(media: dict[str, Any]) -> dict[str, Any]:
    grown = meta.grown_metrics(media["created"])
    return {
        "id": media["id"],
        "caption": media.get("caption", ""),
        "media_type": media["media_type"],
        "media_product_type": media["product"],
        "permalink": f"{pages.public_base(SLUG)}/p/{_shortcode(media['id'])}/",
        "timestamp": meta.iso(media["created"]),
        "like_count": grown["likes"],
        "comments_count": _comments_count(media),
        "media_url": media.get("media_url", ""),
    }


def _container_view(container: dict[str, Any]) -> dict[str, Any]:
    status_code = meta.advance_container(_store(), container, status_key="status_code")
    status = {
        "IN_PROGRESS": "In Progress: Media is still being processed.",
        "FINISHED": "Finished: Media has been uploaded and it is ready to be published.",
        "PUBLISHED": "Published: Media has been published.",
        "EXPIRED": "Expired: The container was not published within 24 hours.",
    }.get(status_code, "")
    return {"id": container["id"], "status_code": status_code, "status": container.get("error") or status}


@simulator_view(SLUG)
def permissions(request: HttpRequest, version: str, user_id: str) -> JsonResponse:
    return meta.revoke_permissions(_store(), request, user_id)


@simulator_view(SLUG)
def node(request: HttpRequest, version: str, node_id: str) -> JsonResponse:
    if (found := _comment_of(node_id)) is not None:
        return _comment_node(request, node_id, *found)
    if request.method == "DELETE" and meta.neutral_of_numeric(node_id) is not None:
        return meta.missing_object("DELETE", node_id)  # a comment that is gone (or never was)
    if request.method != "GET":  # a published media's caption cannot be changed, nor the media deleted
        return meta.bad_method()
    _, error = _auth(request)
    if error:
        return error
    s = _store()
    ig = s.get("iguser", node_id)
    if ig:
        return JsonResponse(
            {
                "id": ig["id"],
                "username": ig["username"],
                "name": ig["name"],
                "profile_picture_url": pages.avatar_url(SLUG, ig["id"]),
                "followers_count": ig["followers_count"],
                "media_count": len([m for m in s.all("media") if m["ig_id"] == node_id]),
            }
        )
    container = s.get("container", node_id)
    if container:
        return JsonResponse(_container_view(container))
    media = s.get("media", node_id)
    if media:
        return JsonResponse(_media_view(media))
    return meta.graph_error(
        f"Unsupported get request. Object with ID '{node_id}' does not exist, cannot be loaded "
        "due to missing permissions, or does not support this operation",
        code=100,
        subcode=33,
    )


def _new_container(ig_id: str, **fields: Any) -> dict[str, Any]:
    s = _store()
    container_id = meta.new_numeric_id(s, "179")
    doc = {"id": container_id, "ig_id": ig_id, "created": time.time(), "status_code": "IN_PROGRESS", **fields}
    s.put("container", container_id, doc)
    return doc


@simulator_view(SLUG)
def media(request: HttpRequest, version: str, ig_id: str) -> JsonResponse:
    _, error = _auth(request, ig_id=ig_id)
    if error:
        return error
    s = _store()
    if request.method == "GET":
        return meta.owned_listing(request, s.all("media"), owner_key="ig_id", owner=ig_id, view=_media_view)
    media_type = meta.param(request, "media_type", "IMAGE").upper()
    caption = meta.param(request, "caption")
    if (scenario := meta.scenario_error(s, caption, f"media:{ig_id}")) is not None:
        return scenario
    if media_type == "CAROUSEL":
        children = [c for c in meta.param(request, "children").split(",") if c]
        docs = [s.get("container", c) for c in children]
        if not 2 <= len(children) <= 10 or any(
            d is None or d["ig_id"] != ig_id or not d.get("carousel_item") for d in docs
        ):
            return meta.graph_error(
                "(#100) The carousel needs 2 to 10 valid carousel item containers", code=100, subcode=2207025
            )
        doc = _new_container(ig_id, media_type="CAROUSEL_ALBUM", caption=caption, children=children, polls_left=0)
        return JsonResponse({"id": doc["id"]})
    if media_type not in {"IMAGE", "VIDEO", "REELS", "STORIES"}:
        return meta.graph_error(f"(#100) Invalid media_type {media_type}", code=100)
    image_url, video_url = meta.param(request, "image_url"), meta.param(request, "video_url")
    if bool(image_url) == bool(video_url) or (image_url and media_type in {"VIDEO", "REELS"}):
        return meta.graph_error("(#100) Provide exactly one of image_url or video_url matching media_type", code=100)
    problem = meta.fetch_media(image_url or video_url, kinds=("image",) if image_url else ("video",))
    receipts: list[dict[str, Any]] = []
    problem = problem or media_checks.refusal_of_url(
        Platform.INSTAGRAM, _post_type(request, media_type), image_url or video_url, receipts=receipts
    )
    media_checks.log_received(request, receipts)
    if problem and image_url:
        return meta.graph_error(
            "Media download has failed.",
            code=9004,
            subcode=2207052,
            error_user_title="Media download has failed",
            error_user_msg=problem,
        )
    trial = meta.param(request, "trial_params")
    try:
        trial_params = json.loads(trial) if trial else None
    except ValueError:
        trial_params = "invalid"
    if trial_params is not None and (
        media_type != "REELS"
        or not isinstance(trial_params, dict)
        or trial_params.get("graduation_strategy") not in {"MANUAL", "SS_PERFORMANCE"}
    ):
        return meta.graph_error(
            "(#100) trial_params.graduation_strategy must be MANUAL or SS_PERFORMANCE on REELS", code=100
        )
    audio_id = meta.param(request, "audio_id")
    if audio_id and (media_type != "REELS" or not audio_id.isdigit()):
        return meta.graph_error("(#100) audio_id is only accepted on REELS and must be an audio asset id", code=100)
    doc = _new_container(
        ig_id,
        media_type={"REELS": "VIDEO", "STORIES": "IMAGE" if image_url else "VIDEO"}.get(media_type, media_type),
        product={"REELS": "REELS", "STORIES": "STORY"}.get(media_type, "FEED"),
        caption=caption,
        media_url=image_url or video_url,
        carousel_item=meta.param(request, "is_carousel_item") == "true",
        polls_left=1 if video_url else 0,
        audio_id=audio_id,
        trial_params=trial_params,
    )
    if problem:
        s.update("container", doc["id"], status_code="ERROR", error=f"Error: Media download has failed. {problem}")
    return JsonResponse({"id": doc["id"]})


def _post_type(request: HttpRequest, media_type: str) -> str:
    return media_checks.meta_post_type(media_type, meta.param(request, "is_carousel_item") == "true")


def _not_publishable(container: dict[str, Any]) -> JsonResponse | None:
    view = _container_view(container)
    if view["status_code"] == "ERROR":
        return meta.graph_error("(#100) The media could not be published: " + view["status"], code=100, subcode=2207032)
    if view["status_code"] != "FINISHED":
        return meta.graph_error(
            "Media ID is not available",
            code=9007,
            subcode=2207027,
            error_user_msg="The media is not ready for publishing, please wait for a moment",
        )
    return None


@simulator_view(SLUG)
def media_publish(request: HttpRequest, version: str, ig_id: str) -> JsonResponse:
    _, error = _auth(request, ig_id=ig_id)
    if error:
        return error
    s = _store()
    return meta.publish_container(
        request,
        s,
        owner_key="ig_id",
        owner=ig_id,
        collection="media",
        text_key="caption",
        status_key="status_code",
        quota_total=int((s.get("iguser", ig_id) or {}).get("quota_total", QUOTA_TOTAL)),
        invalid_id=lambda: meta.graph_error("(#100) Invalid creation_id", code=100, subcode=2207001),
        refusal=_not_publishable,
        quota_reached=lambda: meta.graph_error(
            "Application request limit reached",
            code=4,
            subcode=2207042,
            is_transient=False,
            error_user_title="Max Number of Posts Reached",
            error_user_msg="You reached maximum number of posts that is allowed to be published "
            "by Content Publishing API.",
            status=403,
        ),
        published=lambda container: {
            "caption": container.get("caption", ""),
            "media_type": container["media_type"],
            "product": container.get("product", "FEED"),
            "media_url": container.get("media_url", ""),
            "audio_id": container.get("audio_id"),
            "trial_params": container.get("trial_params"),
        },
    )


@simulator_view(SLUG)
def publishing_limit(request: HttpRequest, version: str, ig_id: str) -> JsonResponse:
    _, error = _auth(request, ig_id=ig_id)
    if error:
        return error
    s = _store()
    total = int((s.get("iguser", ig_id) or {}).get("quota_total", QUOTA_TOTAL))
    return JsonResponse(
        meta.publishing_limit_body(meta.quota_used(s.all("media"), owner_key="ig_id", owner=ig_id), total)
    )


@simulator_view(SLUG)
def insights(request: HttpRequest, version: str, media_id: str) -> JsonResponse:
    _, error = _auth(request)
    if error:
        return error
    item = _store().get("media", media_id)
    if item is None:
        return meta.graph_error(
            f"Unsupported get request. Object with ID '{media_id}' does not exist", code=100, subcode=33
        )
    metrics = [m for m in request.GET.get("metric", "").split(",") if m]
    unknown = [m for m in metrics if m not in INSIGHT_METRICS]
    if not metrics or unknown:
        return meta.graph_error(
            f"(#100) metric[0] must be one of the following values: {', '.join(sorted(INSIGHT_METRICS))}", code=100
        )
    grown = meta.grown_metrics(item["created"])
    grown["comments"] = _comments_count(item)
    grown["saved"] = grown["likes"] // 3
    grown["total_interactions"] = grown["likes"] + grown["comments"] + grown["shares"]
    return JsonResponse({"data": meta.metric_entries(metrics, grown, media_id, "lifetime")})


@simulator_view(SLUG)
def ig_audio(request: HttpRequest, version: str) -> JsonResponse:
    payload, error = _auth(request)
    if error or payload is None:
        return error or meta.invalid_token()
    audio_type = request.GET.get("audio_type", "")
    user_id = request.GET.get("user_id", "")
    query = request.GET.get("search_query", "")
    if audio_type not in {"music", "original_sound"}:
        return meta.graph_error("(#100) audio_type must be one of music, original_sound", code=100)
    if user_id not in payload.get("owns", []):
        return meta.graph_error("(#100) user_id must be an Instagram professional account of this user", code=100)
    if len(query) > 100:
        return meta.graph_error("(#100) search_query must be at most 100 characters", code=100)
    items = []
    for index, (kind, title, artist, duration) in enumerate(TRENDING_AUDIO):
        if kind != audio_type or (query and query.lower() not in f"{title} {artist}".lower()):
            continue
        item: dict[str, Any] = {
            "audio_id": f"1790000000000{index:04d}",
            "audio_type": kind,
            "title": title,
            "duration_in_ms": duration,
        }
        if kind == "music":
            item["display_artist"] = artist
            item["cover_artwork_thumbnail_url"] = pages.thumbnail_url(SLUG, f"audio-{index}")
        else:
            item["ig_username"] = artist
            item["profile_picture_url"] = pages.avatar_url(SLUG, artist)
        items.append(item)
    return JsonResponse({"data": items})


# --- comments: the audience (platforms.sandbox.audience) in Instagram's shapes ------------------
# ``GET /{ig-media-id}/comments`` lists the comments under the media, newest first, each with its
# ``replies`` (oldest first); ``/{ig-comment-id}/replies`` reads and answers one comment. Ids are
# digits (meta.numeric_comment_id). Instagram nests one level: a reply to a reply joins its
# top-level comment. The API has no comment like.


def platform_comment_id(neutral: str, parent: str = "") -> str:
    """The id this simulator gives the audience comment ``neutral`` (an id of
    :mod:`platforms.sandbox.audience`; ``parent`` its parent's, "" for one under the post), so a
    test predicts the ids a sync must find."""
    return meta.numeric_comment_id(neutral)


def _comment_of(comment_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(the media, the comment as the audience shows it now) of a comment id."""
    neutral = meta.neutral_of_numeric(comment_id)
    if neutral is None:
        return None
    media_id, _ = audience.split_id(neutral)
    item = _store().get("media", media_id)
    if item is None:
        return None
    found = audience.find(_store(), SLUG, neutral, item["created"])
    return None if found is None else (item, found)


def _comment_view(comment: dict[str, Any], replies: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    author = comment["author"]
    view: dict[str, Any] = {
        "id": meta.numeric_comment_id(comment["id"]),
        "text": comment["text"],
        "timestamp": meta.iso(comment["createdAt"]),
        "username": author["handle"],
        "from": {"id": author["id"], "username": author["handle"]},
        "like_count": comment["likeCount"],
        "hidden": comment["hidden"],
        "media": {"id": comment["postId"]},
    }
    if comment["parentId"]:
        view["parent_id"] = meta.numeric_comment_id(comment["parentId"])
    if replies is not None:
        view["replies"] = {"data": [_comment_view(r) for r in replies]}
    return view


def _account_person(ig_id: str) -> audience.Person:
    ig = _store().get("iguser", ig_id) or {}
    return audience.Person(
        ig_id, str(ig.get("name") or ""), str(ig.get("username") or ""), pages.avatar_url(SLUG, ig_id)
    )


def _owner_only(payload: dict[str, Any], item: dict[str, Any]) -> JsonResponse | None:
    if item["ig_id"] not in payload.get("owns", []):
        return meta.graph_error("(#10) Application does not have permission for this action", code=10, subcode=2207050)
    return None


def _create_reply(item: dict[str, Any], parent: str, text: str) -> str:
    doc = meta.add_account_comment(_store(), item["id"], parent, text, _account_person(item["ig_id"]))
    return meta.numeric_comment_id(doc["id"])


@simulator_view(SLUG)
def comments(request: HttpRequest, version: str, media_id: str) -> JsonResponse:
    payload, error = _auth(request)
    if error or payload is None:
        return error or meta.invalid_token()
    s = _store()
    item = s.get("media", media_id)
    if request.method == "GET":
        if item is None:
            return meta.missing_object("GET", media_id)
        every = audience.thread(s, SLUG, media_id, item["created"])
        tops = [c for c in reversed(every) if not c["parentId"]]
        views = [_comment_view(c, [r for r in every if r["parentId"] == c["id"]]) for c in tops]
        return JsonResponse(meta.paged(request, views))
    if item is None:
        return meta.post_comment(s, request, object_id=media_id, exists=False)
    if (refused := _owner_only(payload, item)) is not None:
        return refused
    return meta.post_comment(
        s, request, object_id=media_id, exists=True, create=lambda text: _create_reply(item, "", text)
    )


@simulator_view(SLUG)
def replies(request: HttpRequest, version: str, comment_id: str) -> JsonResponse:
    """``GET /{ig-comment-id}/replies`` and ``POST`` with ``message``: the account's reply."""
    payload, error = _auth(request)
    if error or payload is None:
        return error or meta.invalid_token()
    found = _comment_of(comment_id)
    if found is None:
        return meta.missing_object(request.method or "GET", comment_id)
    item, comment = found
    if request.method == "GET":
        every = audience.thread(_store(), SLUG, item["id"], item["created"])
        return JsonResponse(meta.paged(request, [_comment_view(r) for r in every if r["parentId"] == comment["id"]]))
    if request.method != "POST":
        return meta.bad_method()
    message = meta.param(request, "message")
    request.sandbox_log = {"reply": True, "on": comment_id, "text": message[:80]}  # type: ignore[attr-defined]
    if (refused := _owner_only(payload, item)) is not None:
        return refused
    if not message.strip():
        return meta.graph_error("(#100) The parameter message is required", code=100)
    if (scenario := meta.scenario_error(_store(), message, f"reply:{comment_id}")) is not None:
        return scenario
    reply_id = _create_reply(item, comment["parentId"] or comment["id"], message)
    request.sandbox_log.update(comment=True, remoteId=reply_id, body={"message": message})  # type: ignore[attr-defined]
    return JsonResponse({"id": reply_id})


def _comment_node(request: HttpRequest, comment_id: str, item: dict[str, Any], comment: dict[str, Any]) -> JsonResponse:
    """``GET``, ``POST`` (``hide``) and ``DELETE /{ig-comment-id}`` on the account's media."""
    if request.method == "GET":
        _, error = _auth(request)
        return error or JsonResponse(_comment_view(comment))
    deleting = request.method == "DELETE"
    hidden = meta.hide_flag(request, "hide")
    request.sandbox_log = {"remoteId": comment_id, **({"delete": True} if deleting else {"hide": hidden})}  # type: ignore[attr-defined]
    payload, error = _auth(request)
    if error or payload is None:
        return error or meta.invalid_token()
    if (refused := _owner_only(payload, item)) is not None:
        return refused
    if deleting:
        audience.set_state(_store(), comment["id"], deleted=True)
        return JsonResponse({"success": True})
    if request.method != "POST" or hidden is None:
        return meta.graph_error("(#100) The parameter hide is required", code=100)
    if comment["fromAccount"]:
        return meta.graph_error("(#100) The media owner cannot hide their own comment", code=100)
    audience.set_state(_store(), comment["id"], hidden=hidden)
    return JsonResponse({"success": True})


def post_page(request: HttpRequest, shortcode: str) -> HttpResponse:
    """The post's page on instagram.com, as its ``permalink`` opens it."""
    s = _store()
    item = next((m for m in s.all("media") if _shortcode(m["id"]) == shortcode), None)
    ig = s.get("iguser", item["ig_id"]) if item else None
    if item is None or ig is None:
        return pages.not_found_page("Instagram")
    return pages.post_page(
        platform="Instagram",
        author=ig["name"],
        handle=f"@{ig['username']}",
        text=str(item.get("caption") or ""),
        media=[item["media_url"]] if item.get("media_url") else [],
        avatar=pages.avatar_url(SLUG, ig["id"]),
    )


urlpatterns = [
    *pages.urlpatterns,
    re_path(r"^p/(?P<shortcode>[\w-]+)/?$", post_page),
    re_path(V + r"dialog/oauth/?$", dialog),
    re_path(V + r"oauth/access_token$", access_token),
    re_path(V + r"me/accounts$", accounts),
    re_path(V + r"ig_audio$", ig_audio),
    re_path(V + r"(?P<ig_id>\d+)/media$", media),
    re_path(V + r"(?P<ig_id>\d+)/media_publish$", media_publish),
    re_path(V + r"(?P<ig_id>\d+)/content_publishing_limit$", publishing_limit),
    re_path(V + r"(?P<media_id>\d+)/insights$", insights),
    re_path(V + r"(?P<media_id>\d+)/comments$", comments),
    re_path(V + r"(?P<comment_id>\d+)/replies$", replies),
    re_path(V + r"(?P<user_id>\d+|me)/permissions$", permissions),
    re_path(V + r"(?P<node_id>\d+)$", node),
]


# --- armed faults (platforms.sandbox.faults) ---------------------------------------------------
FAULTS = {
    "rate_limited": lambda request: meta.usage_limited(
        "(#4) Application request limit reached", code=4, usage_type="instagram"
    ),
    "quota_exhausted": meta.publishing_quota_reached,
    "server_error": meta.unexpected_error,
}
