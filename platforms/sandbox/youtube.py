"""YouTube Data API v3 simulator: Google OAuth, channels.list, resumable uploads (session URI,
``Content-Range`` chunks, ``bytes */<size>`` status queries answered with 308 + ``Range``),
videos.list statistics that grow with time, playlistItems list/insert, and Google's error
envelope (quota, rate limit, backendError, authError). An upload of at most ``KEPT_UPLOAD_BYTES``
is kept until it completes, so the completing call's request log says what was received
(``media``: ``media_checks.received``)."""

from __future__ import annotations

import base64
import re
import secrets
import time
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path

from platforms.sandbox import audience, media_checks, pages
from platforms.sandbox._google_common import account_of, google_error, oauth_urlpatterns, page_window, unauthenticated
from platforms.sandbox.common import as_dict, digest, grown, iso, sniff_kind
from platforms.sandbox.scenarios import marker
from platforms.sandbox.store import SandboxStore
from platforms.sandbox.views import json_body, simulator_view

SLUG = "youtube"
store = SandboxStore(SLUG)
view = simulator_view(SLUG)

MAX_VIDEO_BYTES = 256 * 1024 * 1024 * 1024
PRIVACY = {"public", "private", "unlisted"}
LICENSES = {"youtube", "creativeCommon"}
KEPT_UPLOAD_BYTES = 64 * 1024 * 1024  # larger uploads are counted, not kept
CHUNK_TTL_SECONDS = 86400
CONTENT_RANGE = re.compile(r"^bytes (?:(\d+)-(\d+)|\*)/(\d+|\*)$")


def _new_channel() -> str:
    suffix = secrets.token_urlsafe(16).replace("-", "a").replace("_", "b")[:22]
    channel_id = f"UC{suffix}"
    playlist_id = f"PL{secrets.token_hex(16)}"
    store.put(
        "channel",
        channel_id,
        {
            "id": channel_id,
            "title": f"Sandbox Channel {suffix[:4]}",
            "created": time.time(),
            "uploads": f"UU{suffix}",
            "playlists": [playlist_id],
        },
    )
    store.put("playlist", playlist_id, {"id": playlist_id, "owner": channel_id, "title": "Sandbox picks", "items": []})
    return channel_id


def _channel(request: HttpRequest) -> dict[str, Any] | None:
    account = account_of(store, request)
    return store.get("channel", account) if account else None


def _channel_view(channel: dict[str, Any], parts: set[str]) -> dict[str, Any]:
    videos = [v for v in store.all("video") if v["owner"] == channel["id"]]
    item: dict[str, Any] = {"kind": "youtube#channel", "etag": digest("etag", channel["id"]), "id": channel["id"]}
    if "snippet" in parts:
        thumb = {"url": pages.avatar_url(SLUG, channel["id"]), "width": 88, "height": 88}
        item["snippet"] = {
            "title": channel["title"],
            "description": "A simulated channel",
            "customUrl": f"@{channel['id'][2:10].lower()}",
            "publishedAt": iso(channel["created"]),
            "thumbnails": {"default": thumb},
            "localized": {"title": channel["title"], "description": "A simulated channel"},
            "country": "US",
        }
    if "contentDetails" in parts:
        item["contentDetails"] = {"relatedPlaylists": {"likes": "", "uploads": channel["uploads"]}}
    if "statistics" in parts:
        item["statistics"] = {
            "viewCount": str(sum(grown(v["created"], 90) for v in videos)),
            "subscriberCount": str(grown(channel["created"], 12, base=250)),
            "hiddenSubscriberCount": False,
            "videoCount": str(len(videos)),
        }
    return item


@view
def channels(request: HttpRequest) -> HttpResponse:
    channel = _channel(request)
    if channel is None:
        return unauthenticated()
    parts = set(request.GET.get("part", "").split(","))
    if not parts - {""}:
        return google_error(400, "required", "Required parameter: part")
    if request.GET.get("mine") != "true" and request.GET.get("id") != channel["id"]:
        return google_error(400, "missingRequiredParameter", "No filter selected. Expected one of: mine, id")
    items = [_channel_view(channel, parts)]
    return JsonResponse(
        {
            "kind": "youtube#channelListResponse",
            "etag": digest("list", channel["id"]),
            "pageInfo": {"totalResults": 1, "resultsPerPage": 5},
            "items": items,
        }
    )


def _thumbnails(video_id: str) -> dict[str, Any]:
    return {
        "default": {"url": pages.thumbnail_url(SLUG, video_id), "width": 120, "height": 90},
        "high": {"url": pages.thumbnail_url(SLUG, video_id), "width": 480, "height": 360},
    }


def _channel_title(channel_id: str) -> str:
    channel = store.get("channel", channel_id)
    return str(channel["title"]) if channel else ""


def _comment_counts(videos: list[dict[str, Any]]) -> dict[str, int]:
    """``statistics.commentCount`` of each video, by id: its published comments and their replies
    as the comment listings show them (one held for review is off the video, and so are the replies
    under it); every video's in the same three store reads."""
    shown = audience.threads(store, SLUG, [(v["id"], v["created"]) for v in videos])
    return {video_id: audience.comment_count(every, public_only=True) for video_id, every in shown.items()}


def _video_view(video: dict[str, Any], parts: set[str], comments: int | None = None) -> dict[str, Any]:
    """A video resource with ``parts``; ``comments`` its comment count when already counted."""
    item: dict[str, Any] = {"kind": "youtube#video", "etag": digest("etag", video["id"]), "id": video["id"]}
    if "snippet" in parts:
        item["snippet"] = {
            **video["snippet"],
            "publishedAt": iso(video["created"]),
            "channelId": video["owner"],
            "thumbnails": _thumbnails(video["id"]),
            "channelTitle": _channel_title(video["owner"]),
            "categoryId": str(video["snippet"].get("categoryId") or "22"),
            "liveBroadcastContent": "none",
            "localized": {
                "title": video["snippet"].get("title", ""),
                "description": video["snippet"].get("description", ""),
            },
        }
    if "status" in parts:
        item["status"] = {"uploadStatus": "uploaded", "publicStatsViewable": True, **video["status"]}
    if "statistics" in parts:
        item["statistics"] = {
            "viewCount": str(grown(video["created"], 90)),
            "likeCount": str(grown(video["created"], 9)),
            "favoriteCount": "0",
            "commentCount": str(_comment_counts([video])[video["id"]] if comments is None else comments),
        }
    return item


def _validate_metadata(body: dict[str, Any]) -> JsonResponse | None:
    snippet, status = body.get("snippet") or {}, body.get("status") or {}
    if not isinstance(snippet, dict) or not isinstance(status, dict):
        return google_error(400, "invalidVideoMetadata", "The request metadata is invalid (snippet/status).")
    title = str(snippet.get("title") or "")
    if not title.strip():
        return google_error(400, "invalidTitle", "The request metadata specifies an invalid or empty video title.")
    if len(title) > 100 or "<" in title or ">" in title:
        return google_error(400, "invalidTitle", "The request metadata specifies an invalid video title.")
    description = str(snippet.get("description") or "")
    if len(description.encode()) > 5000 or "<" in description or ">" in description:
        return google_error(400, "invalidDescription", "The request metadata specifies an invalid video description.")
    tags = snippet.get("tags") or []
    if not isinstance(tags, list) or sum(len(str(t)) for t in tags) > 500:
        return google_error(400, "invalidTags", "The request metadata specifies invalid video keywords.")
    if snippet.get("categoryId") is not None and not str(snippet["categoryId"]).isdigit():
        return google_error(400, "invalidCategoryId", "The snippet.categoryId property specifies an invalid ID.")
    if status.get("privacyStatus", "public") not in PRIVACY or status.get("license", "youtube") not in LICENSES:
        return google_error(400, "invalidVideoMetadata", "The request metadata is invalid (privacyStatus/license).")
    return None


def _start_session(request: HttpRequest, channel: dict[str, Any]) -> HttpResponse:
    if request.GET.get("uploadType") != "resumable" or not request.GET.get("part"):
        return google_error(400, "badRequest", "uploadType=resumable and part are required")
    body = json_body(request)
    snippet = as_dict(body.get("snippet"))
    text = f"{snippet.get('title', '')}\n{snippet.get('description', '')}"
    scenario = marker(text)
    if scenario == "unauthorized":
        return unauthenticated()
    if scenario == "flaky" and store.first_time(digest("flaky", channel["id"], text)):
        return google_error(503, "backendError", "Backend Error")
    if scenario == "fail":
        return google_error(400, "invalidDescription", "The request metadata specifies an invalid video description.")
    problem = _validate_metadata(body)
    if problem is not None:
        return problem
    content_type = request.headers.get("X-Upload-Content-Type", "")
    if content_type and not content_type.startswith(("video/", "application/octet-stream")):
        return google_error(400, "invalidFilename", "The media type of the upload must be a video.")
    upload_id = secrets.token_urlsafe(24)
    store.put(
        "session",
        upload_id,
        {
            "owner": channel["id"],
            "snippet": {k: snippet[k] for k in ("title", "description", "tags", "categoryId") if k in snippet},
            "status": {
                k: v
                for k, v in (body.get("status") or {}).items()  # a dict: _validate_metadata checked
                if k in {"privacyStatus", "license", "embeddable", "selfDeclaredMadeForKids"}
            },
            "notify": request.GET.get("notifySubscribers", "true"),
            "received": 0,
            "head": "",
            "video_id": "",
        },
    )
    location = request.build_absolute_uri(
        f"/sandbox/{SLUG}/upload/youtube/v3/videos?uploadType=resumable&upload_id={upload_id}"
    )
    return HttpResponse(status=200, headers={"Location": location, "X-GUploader-UploadID": upload_id})


def _incomplete(received: int) -> HttpResponse:
    headers = {"Range": f"bytes=0-{received - 1}"} if received else {}
    return HttpResponse(status=308, headers=headers)


def _receive(request: HttpRequest, channel: dict[str, Any], upload_id: str) -> HttpResponse:
    session = store.get("session", upload_id)
    if session is None or session["owner"] != channel["id"]:
        return google_error(404, "notFound", "The upload session was not found or has expired.")
    if session["video_id"]:
        return JsonResponse(_video_view(store.get("video", session["video_id"]) or {}, {"snippet", "status"}))
    match = CONTENT_RANGE.match(request.headers.get("Content-Range", "") or f"bytes */{len(request.body)}")
    chunk = request.body
    request.sandbox_log = {"contentRange": request.headers.get("Content-Range", "")}  # type: ignore[attr-defined]
    if match is None:
        return google_error(400, "badContent", "Invalid Content-Range header.")
    first, total = match.group(1), match.group(3)
    if first is None and not chunk:  # a status query
        return _incomplete(session["received"])
    start = int(first or 0)
    if start != session["received"]:
        return _incomplete(session["received"])
    if start == 0:
        if sniff_kind(chunk[:16]) != "video":
            return google_error(400, "invalidFilename", "The uploaded file is not a video the platform can process.")
        session["head"] = chunk[:16].hex()
    if total != "*" and int(total) <= KEPT_UPLOAD_BYTES:
        store.put_bytes("chunk", f"{upload_id}:{start}", chunk, ttl=CHUNK_TTL_SECONDS)
        session["chunks"] = [*session.get("chunks", []), start]
    session["received"] += len(chunk)
    if total == "*" or session["received"] < int(total):
        store.put("session", upload_id, session)
        return _incomplete(session["received"])
    if session["received"] > MAX_VIDEO_BYTES:
        return google_error(400, "uploadLimitExceeded", "The file exceeds the maximum upload size.")
    video_id = secrets.token_urlsafe(8)[:11]
    video = {
        "id": video_id,
        "owner": channel["id"],
        "snippet": session["snippet"],
        "status": session["status"],
        "created": time.time(),
        "bytes": session["received"],
    }
    store.put("video", video_id, video)
    session["video_id"] = video_id
    store.put("session", upload_id, session)
    request.sandbox_log.update(publish=True, marker=None, remoteId=video_id)  # type: ignore[attr-defined]
    kept = b"".join(p or b"" for p in store.pop_bytes("chunk", [f"{upload_id}:{o}" for o in session.get("chunks", [])]))
    if kept and len(kept) == session["received"]:  # every chunk kept (none was sent before the size was known)
        media_checks.log_received(request, [media_checks.received(kept)])
    return JsonResponse(_video_view(video, {"snippet", "status"}), status=201)


@view
def upload(request: HttpRequest) -> HttpResponse:
    channel = _channel(request)
    if channel is None:
        return unauthenticated()
    if request.method == "POST":
        return _start_session(request, channel)
    if request.method == "PUT" and request.GET.get("upload_id"):
        return _receive(request, channel, request.GET["upload_id"])
    return google_error(400, "badRequest", "Unsupported upload request")


@view
def videos(request: HttpRequest) -> HttpResponse:
    channel = _channel(request)
    if request.method in ("PUT", "DELETE"):
        kind = "edit" if request.method == "PUT" else "delete"
        request.sandbox_log = {kind: True}  # type: ignore[attr-defined]
    if channel is None:
        return unauthenticated()
    if request.method == "PUT":
        return _update_video(request, channel)
    if request.method == "DELETE":
        return _delete_video(request, channel)
    parts = set(request.GET.get("part", "").split(","))
    ids = [i for i in request.GET.get("id", "").split(",") if i]
    if not parts - {""} or not ids:
        return google_error(400, "missingRequiredParameter", "Required parameters: part, id")
    if len(ids) > 50:
        return google_error(400, "badRequest", "At most 50 ids")
    found = [v for v in store.get_many("video", ids) if v]
    counts = _comment_counts(found) if "statistics" in parts else {}
    items = [_video_view(v, parts, counts.get(v["id"])) for v in found]
    return JsonResponse(
        {
            "kind": "youtube#videoListResponse",
            "etag": digest("list", *ids),
            "pageInfo": {"totalResults": len(items), "resultsPerPage": len(items)},
            "items": items,
        }
    )


def _update_video(request: HttpRequest, channel: dict[str, Any]) -> HttpResponse:
    """``videos.update?part=snippet``: the snippet is replaced whole (title and categoryId
    required); only the channel's own video."""
    parts = set(request.GET.get("part", "").split(","))
    body = json_body(request)
    video_id = str(body.get("id") or "")
    request.sandbox_log["remoteId"] = video_id  # type: ignore[attr-defined]
    if parts != {"snippet"}:
        return google_error(400, "invalidPart", "The part parameter must be snippet for this request.")
    video = store.get("video", video_id)
    if video is None:
        return google_error(404, "videoNotFound", "The video that you are trying to update cannot be found.")
    if video["owner"] != channel["id"]:
        return google_error(403, "forbidden", "The request cannot access the video.")
    snippet = body.get("snippet")
    if not isinstance(snippet, dict) or not snippet.get("categoryId"):
        return google_error(400, "invalidCategoryId", "The snippet.categoryId property must be specified.")
    description = str(snippet.get("description") or "")
    request.sandbox_log["text"] = description[:80]  # type: ignore[attr-defined]
    scenario = marker(f"{snippet.get('title') or ''}\n{description}")
    if scenario == "unauthorized":
        return unauthenticated()
    if scenario == "fail":
        return google_error(400, "invalidDescription", "The request metadata specifies an invalid video description.")
    problem = _validate_metadata({"snippet": snippet, "status": video["status"]})
    if problem is not None:
        return problem
    kept = ("title", "description", "tags", "categoryId", "defaultLanguage")
    video = store.update("video", video_id, snippet={k: snippet[k] for k in kept if k in snippet}) or video
    return JsonResponse(_video_view(video, {"snippet"}))


def _delete_video(request: HttpRequest, channel: dict[str, Any]) -> HttpResponse:
    """``videos.delete?id=…``: 204; reads then list no such video (an empty ``items``)."""
    video_id = request.GET.get("id", "")
    request.sandbox_log["remoteId"] = video_id  # type: ignore[attr-defined]
    video = store.get("video", video_id)
    if video is None:
        return google_error(404, "videoNotFound", "The video that you are trying to delete cannot be found.")
    if video["owner"] != channel["id"]:
        return google_error(403, "forbidden", "The video that you are trying to delete cannot be deleted.")
    store.delete("video", video_id)
    return HttpResponse(status=204)


# --- comments: the audience (platforms.sandbox.audience) in the Data API's shapes ---------------
# A top-level comment is a thread ``Ug<base64 of its audience id>``; a reply is
# ``<thread id>.<base64 of its key>`` (YouTube nests one level: a reply to a reply joins the
# thread). ``commentThreads.list`` (by videoId) lists threads newest first with their first
# ``EMBEDDED_REPLIES`` replies; ``comments.list`` reads replies by ``parentId`` (oldest first) or
# comments by ``id``. A comment held for review (hidden) is listed only with
# ``moderationStatus=heldForReview``; one rejected is gone with its replies. Only its author deletes
# a comment (``comments.delete``); the video's owner rejects the others'.

EMBEDDED_REPLIES = 2
MODERATION = {"published", "heldForReview", "likelySpam", "rejected"}


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _unb64(text: str) -> str | None:
    try:
        return base64.urlsafe_b64decode((text + "=" * (-len(text) % 4)).encode()).decode()
    except (ValueError, UnicodeDecodeError):
        return None


def wire_comment_id(neutral: str, parent: str = "") -> str:
    """The YouTube id of the audience comment ``neutral`` (``parent``: the audience id of the
    top-level comment it replies to)."""
    if not parent:
        return f"Ug{_b64(neutral)}"
    return f"{wire_comment_id(parent)}.{_b64(audience.split_id(neutral)[1])}"


def _neutral_of(comment_id: str) -> str | None:
    top, dot, reply = comment_id.partition(".")
    if not top.startswith("Ug"):
        return None
    neutral = _unb64(top[2:])
    if neutral is None or not dot:
        return neutral
    key = _unb64(reply)
    return None if key is None else audience.comment_id(audience.split_id(neutral)[0], key)


def platform_comment_id(neutral: str, parent: str = "") -> str:
    """The id this simulator gives the audience comment ``neutral`` (an id of
    :mod:`platforms.sandbox.audience`; ``parent`` its parent's, "" for one under the post), so a
    test predicts the ids a sync must find."""
    return wire_comment_id(neutral, parent)


def _comment_of(comment_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(the video, the comment as the audience shows it now) of a comment id."""
    neutral = _neutral_of(comment_id)
    if neutral is None:
        return None
    video = store.get("video", audience.split_id(neutral)[0])
    if video is None:
        return None
    found = audience.find(store, SLUG, neutral, video["created"])
    return None if found is None else (video, found)


def _comment_view(video: dict[str, Any], comment: dict[str, Any]) -> dict[str, Any]:
    author = comment["author"]
    channel_id = author["id"] if str(author["id"]).startswith("UC") else f"UC{author['id']}"
    snippet: dict[str, Any] = {
        "channelId": video["owner"],
        "videoId": video["id"],
        "textDisplay": comment["text"],
        "textOriginal": comment["text"],
        "authorDisplayName": f"@{author['handle']}",
        "authorProfileImageUrl": author["avatar_url"],
        "authorChannelUrl": f"http://www.youtube.com/@{author['handle']}",
        "authorChannelId": {"value": channel_id},
        "canRate": True,
        "viewerRating": "like" if comment["liked"] else "none",
        "likeCount": comment["likeCount"],
        "publishedAt": iso(comment["createdAt"]),
        "updatedAt": iso(comment["createdAt"]),
    }
    if comment["hidden"]:
        snippet["moderationStatus"] = "heldForReview"
    if comment["parentId"]:
        snippet["parentId"] = wire_comment_id(comment["parentId"])
    comment_id = wire_comment_id(comment["id"], comment["parentId"])
    return {"kind": "youtube#comment", "etag": digest("etag", comment_id), "id": comment_id, "snippet": snippet}


def _thread_view(
    video: dict[str, Any], top: dict[str, Any], replies: list[dict[str, Any]], parts: set[str]
) -> dict[str, Any]:
    thread_id = wire_comment_id(top["id"])
    item: dict[str, Any] = {"kind": "youtube#commentThread", "etag": digest("etag", thread_id), "id": thread_id}
    if "snippet" in parts:
        item["snippet"] = {
            "channelId": video["owner"],
            "videoId": video["id"],
            "topLevelComment": _comment_view(video, top),
            "canReply": True,
            "totalReplyCount": len(replies),
            "isPublic": True,
        }
    if "replies" in parts and replies:
        item["replies"] = {"comments": [_comment_view(video, r) for r in replies[:EMBEDDED_REPLIES]]}
    return item


def _channel_person(channel: dict[str, Any]) -> audience.Person:
    handle = channel["id"][2:10].lower()
    return audience.Person(channel["id"], channel["title"], handle, pages.avatar_url(SLUG, channel["id"]))


def _list_response(kind: str, items: list[dict[str, Any]], request: HttpRequest) -> HttpResponse:
    window = page_window(request, items, size_param="maxResults", default=20, maximum=100)
    if window is None:
        return google_error(400, "invalidPageToken", "The request specifies an invalid page token or maxResults.")
    page, next_token = window
    body: dict[str, Any] = {
        "kind": kind,
        "etag": digest("list", kind, str(len(items))),
        "pageInfo": {"totalResults": len(items), "resultsPerPage": len(page)},
        "items": page,
    }
    if next_token:
        body["nextPageToken"] = next_token
    return JsonResponse(body)


def _list_threads(request: HttpRequest, channel: dict[str, Any]) -> HttpResponse:
    """``commentThreads.list?part=snippet,replies&videoId=…`` (``order``, ``moderationStatus``)."""
    parts = set(request.GET.get("part", "").split(","))
    if not parts & {"snippet", "replies", "id"}:
        return google_error(400, "missingRequiredParameter", "Required parameter: part")
    video = store.get("video", request.GET.get("videoId", ""))
    if video is None:
        return google_error(404, "videoNotFound", "The video identified by the videoId parameter could not be found.")
    status = request.GET.get("moderationStatus", "published")
    if status not in MODERATION - {"rejected"}:
        return google_error(400, "invalidModerationStatus", "The moderationStatus parameter is invalid.")
    if status != "published" and video["owner"] != channel["id"]:
        return google_error(403, "forbidden", "The comment thread's moderation status cannot be read.")
    every = audience.thread(store, SLUG, video["id"], video["created"])
    tops = [c for c in every if not c["parentId"] and c["hidden"] == (status == "heldForReview")]
    if status == "likelySpam":
        tops = []
    if request.GET.get("order", "time") == "time":
        tops.reverse()
    items = [
        _thread_view(video, top, [r for r in every if r["parentId"] == top["id"] and not r["hidden"]], parts)
        for top in tops
    ]
    return _list_response("youtube#commentThreadListResponse", items, request)


def _insert_thread(request: HttpRequest, channel: dict[str, Any]) -> HttpResponse:
    """``commentThreads.insert``: a top-level comment by the channel under a video."""
    if "snippet" not in request.GET.get("part", "").split(","):
        return google_error(400, "missingRequiredParameter", "Required parameter: part")
    body = json_body(request)
    snippet = as_dict(body.get("snippet"))
    video_id = str(snippet.get("videoId") or "")
    text = str(as_dict(as_dict(snippet.get("topLevelComment")).get("snippet")).get("textOriginal") or "")
    if not text.strip():
        return google_error(400, "commentTextRequired", "The comment must contain text.")
    video = store.get("video", video_id) if video_id else None
    if video is None:
        return google_error(404, "videoNotFound", "The video identified by the videoId parameter could not be found.")
    doc = _channel_comment(video, "", text, channel)
    thread_id = wire_comment_id(doc["id"])
    request.sandbox_log = {"comment": True, "on": video_id, "remoteId": thread_id, "body": body}  # type: ignore[attr-defined]
    top = audience.find(store, SLUG, doc["id"], video["created"]) or {**doc, "hidden": False, "liked": False}
    return JsonResponse(_thread_view(video, {"replyCount": 0, **top}, [], {"snippet"}))


def _channel_comment(video: dict[str, Any], parent: str, text: str, channel: dict[str, Any]) -> dict[str, Any]:
    """Store the channel's comment (``parent`` "": a thread of its own) under ``video``."""
    key = f"a{store.redis.incr(store._key('reply-seq'))}"
    reply_id = audience.comment_id(video["id"], key)
    return audience.add_reply(store, video["id"], parent, text, author=_channel_person(channel), reply_id=reply_id)


@view
def comment_threads(request: HttpRequest) -> HttpResponse:
    """``commentThreads.list`` (GET) and ``commentThreads.insert`` (POST)."""
    channel = _channel(request)
    if channel is None:
        return unauthenticated()
    if request.method == "GET":
        return _list_threads(request, channel)
    if request.method != "POST":
        return google_error(405, "methodNotAllowed", "Only commentThreads.list and insert are simulated")
    return _insert_thread(request, channel)


def _list_comments(request: HttpRequest) -> HttpResponse:
    """``comments.list`` by ``parentId`` (its published replies) or by ``id`` (comma-separated)."""
    if "snippet" not in request.GET.get("part", "").split(",") and "id" not in request.GET.get("part", ""):
        return google_error(400, "missingRequiredParameter", "Required parameter: part")
    parent_id, ids = request.GET.get("parentId", ""), [i for i in request.GET.get("id", "").split(",") if i]
    if bool(parent_id) == bool(ids):
        return google_error(400, "missingRequiredParameter", "Exactly one of id and parentId is required.")
    items: list[dict[str, Any]] = []
    if parent_id:
        found = _comment_of(parent_id)
        if found is None or found[1]["parentId"]:
            return google_error(
                404, "commentNotFound", "The comment identified by the parentId parameter cannot be found."
            )
        video, top = found
        every = audience.thread(store, SLUG, video["id"], video["created"])
        items = [_comment_view(video, r) for r in every if r["parentId"] == top["id"] and not r["hidden"]]
    else:
        items = [_comment_view(*found) for found in map(_comment_of, ids) if found is not None]
    return _list_response("youtube#commentListResponse", items, request)


def _insert_reply(request: HttpRequest, channel: dict[str, Any]) -> HttpResponse:
    """``comments.insert?part=snippet`` with ``snippet.parentId`` and ``snippet.textOriginal``."""
    if "snippet" not in request.GET.get("part", "").split(","):
        return google_error(400, "missingRequiredParameter", "Required parameter: part")
    snippet = as_dict(json_body(request).get("snippet"))
    parent_id, text = str(snippet.get("parentId") or ""), str(snippet.get("textOriginal") or "")
    request.sandbox_log = {"reply": True, "on": parent_id, "text": text[:80]}  # type: ignore[attr-defined]
    if not parent_id:
        return google_error(400, "parentIdMissing", "The comment must be linked to a parent comment.")
    if not text.strip():
        return google_error(400, "commentTextRequired", "The comment must contain text.")
    if len(text) > 10000:
        return google_error(400, "commentTextTooLong", "The comment text is too long.")
    scenario = marker(text)
    if scenario == "unauthorized":
        return unauthenticated()
    if scenario == "fail":
        return google_error(400, "invalidCommentMetadata", "The request metadata is invalid.")
    if scenario == "flaky" and store.first_time(digest("flaky-reply", parent_id, text)):
        return google_error(503, "backendError", "Backend Error")
    found = _comment_of(parent_id)
    if found is None:
        return google_error(404, "commentNotFound", "The comment identified by the parentId parameter cannot be found.")
    video, parent = found
    doc = _channel_comment(video, parent["parentId"] or parent["id"], text, channel)
    shown = audience.find(store, SLUG, doc["id"], video["created"]) or {**doc, "hidden": False, "liked": False}
    view = _comment_view(video, {"replyCount": 0, **shown})
    request.sandbox_log.update(comment=True, remoteId=view["id"], body={"snippet": snippet})  # type: ignore[attr-defined]
    return JsonResponse(view)


def _delete_comment(request: HttpRequest, channel: dict[str, Any]) -> HttpResponse:
    """``comments.delete?id=…``: 204, by the comment's author only."""
    comment_id = request.GET.get("id", "")
    request.sandbox_log = {"delete": True, "remoteId": comment_id}  # type: ignore[attr-defined]
    found = _comment_of(comment_id)
    if found is None:
        return google_error(404, "commentNotFound", "The comment that you are trying to delete cannot be found.")
    if found[1]["author"]["id"] != channel["id"]:
        return google_error(403, "forbidden", "The comment that you are trying to delete cannot be deleted.")
    audience.set_state(store, found[1]["id"], deleted=True)
    return HttpResponse(status=204)


@view
def comments(request: HttpRequest) -> HttpResponse:
    """``comments.list`` (GET), ``comments.insert`` (POST) and ``comments.delete`` (DELETE)."""
    channel = _channel(request)
    if channel is None:
        return unauthenticated()
    if request.method == "GET":
        return _list_comments(request)
    if request.method == "POST":
        return _insert_reply(request, channel)
    if request.method == "DELETE":
        return _delete_comment(request, channel)
    return google_error(405, "methodNotAllowed", "Unsupported method")


@view
def set_moderation_status(request: HttpRequest) -> HttpResponse:
    """``POST comments/setModerationStatus?id=…&moderationStatus=…``: 204. ``heldForReview`` hides
    a comment, ``published`` shows it again, ``rejected`` removes it (for good) with its replies."""
    ids = [i for i in request.GET.get("id", "").split(",") if i]
    status = request.GET.get("moderationStatus", "")
    request.sandbox_log = {"moderate": status, "remoteId": ",".join(ids)}  # type: ignore[attr-defined]
    channel = _channel(request)
    if channel is None:
        return unauthenticated()
    if request.method != "POST":
        return google_error(405, "methodNotAllowed", "POST required")
    if not ids or status not in MODERATION - {"likelySpam"}:
        return google_error(400, "missingRequiredParameter", "Required parameters: id, moderationStatus")
    if request.GET.get("banAuthor") == "true" and status != "rejected":
        return google_error(400, "banWithoutReject", "banAuthor can only be used with moderationStatus rejected.")
    found = [_comment_of(i) for i in ids]
    if any(f is None for f in found):
        return google_error(404, "commentNotFound", "One or more comments could not be found.")
    if any(f[0]["owner"] != channel["id"] for f in found if f is not None):
        return google_error(403, "forbidden", "The moderation status of the comments cannot be set.")
    for f in found:
        if f is not None:
            changes = {"deleted": True} if status == "rejected" else {"hidden": status == "heldForReview"}
            audience.set_state(store, f[1]["id"], **changes)
    return HttpResponse(status=204)


def _playlist_item(playlist_id: str, video: dict[str, Any], position: int) -> dict[str, Any]:
    return {
        "kind": "youtube#playlistItem",
        "etag": digest("etag", playlist_id, video["id"]),
        "id": digest("pli", playlist_id, video["id"]),
        "snippet": {
            "publishedAt": iso(video["created"]),
            "channelId": video["owner"],
            "title": video["snippet"].get("title", ""),
            "description": video["snippet"].get("description", ""),
            "thumbnails": _thumbnails(video["id"]),
            "channelTitle": _channel_title(video["owner"]),
            "playlistId": playlist_id,
            "position": position,
            "resourceId": {"kind": "youtube#video", "videoId": video["id"]},
            "videoOwnerChannelId": video["owner"],
        },
        "contentDetails": {"videoId": video["id"], "videoPublishedAt": iso(video["created"])},
    }


@view
def playlist_items(request: HttpRequest) -> HttpResponse:
    channel = _channel(request)
    if channel is None:
        return unauthenticated()
    if request.method == "POST":
        snippet = as_dict(json_body(request).get("snippet"))
        playlist = store.get("playlist", str(snippet.get("playlistId") or ""))
        if playlist is None:
            return google_error(
                404,
                "playlistNotFound",
                "The playlist identified with the request's playlistId parameter cannot be found.",
            )
        if playlist["owner"] != channel["id"]:
            return google_error(403, "playlistItemsNotAccessible", "The request is not properly authorized.")
        video = store.get("video", str(as_dict(snippet.get("resourceId")).get("videoId") or ""))
        if video is None:
            return google_error(404, "videoNotFound", "The video that you are trying to add cannot be found.")
        if video["id"] not in playlist["items"]:
            playlist["items"].append(video["id"])
            store.put("playlist", playlist["id"], playlist)
        return JsonResponse(_playlist_item(playlist["id"], video, playlist["items"].index(video["id"])))
    playlist_id = request.GET.get("playlistId", "")
    if playlist_id == channel["uploads"]:
        mine = sorted((v for v in store.all("video") if v["owner"] == channel["id"]), key=lambda v: -v["created"])
    else:
        playlist = store.get("playlist", playlist_id)
        if playlist is None:
            return google_error(404, "playlistNotFound", "The playlist cannot be found.")
        mine = [v for v in (store.get("video", i) for i in playlist["items"]) if v]
    window = page_window(request, mine, size_param="maxResults", default=5, maximum=50)
    if window is None:
        return google_error(400, "invalidPageToken", "The request specifies an invalid page token or maxResults.")
    page, next_token = window
    body: dict[str, Any] = {
        "kind": "youtube#playlistItemListResponse",
        "etag": digest("list", playlist_id, str(len(mine))),
        "pageInfo": {"totalResults": len(mine), "resultsPerPage": len(page)},
        "items": [_playlist_item(playlist_id, v, i) for i, v in enumerate(page)],
    }
    if next_token:
        body["nextPageToken"] = next_token
    return JsonResponse(body)


def video_page(request: HttpRequest, video_id: str = "") -> HttpResponse:
    """The video's page on youtube.com: ``/watch?v={id}``, or ``/shorts/{id}`` for a Short."""
    video = store.get("video", video_id or request.GET.get("v", ""))
    if video is None:
        return pages.not_found_page("YouTube")
    snippet = video["snippet"]
    return pages.post_page(
        platform="YouTube",
        author=_channel_title(video["owner"]),
        text="\n\n".join(str(part) for part in (snippet.get("title"), snippet.get("description")) if part),
        media=[pages.thumbnail_url(SLUG, video["id"])],
        avatar=pages.avatar_url(SLUG, video["owner"]),
    )


urlpatterns = [
    *pages.urlpatterns,
    path("watch", video_page),
    path("shorts/<str:video_id>", video_page),
    *oauth_urlpatterns(store, view, _new_channel),
    path("youtube/v3/channels", channels),
    path("youtube/v3/videos", videos),
    path("youtube/v3/playlistItems", playlist_items),
    path("youtube/v3/commentThreads", comment_threads),
    path("youtube/v3/comments", comments),
    path("youtube/v3/comments/setModerationStatus", set_moderation_status),
    path("upload/youtube/v3/videos", upload),
]


# --- armed faults (platforms.sandbox.faults) ---------------------------------------------------
FAULTS = {
    "rate_limited": lambda request: google_error(
        403,
        "rateLimitExceeded",
        "The request cannot be completed because you have exceeded your rate limit.",
        domain="usageLimits",
    ),
    "quota_exhausted": lambda request: google_error(
        403,
        "quotaExceeded",
        "The request cannot be completed because you have exceeded your quota.",
        domain="youtube.quota",
    ),
    "server_error": lambda request: google_error(503, "backendError", "Backend Error"),
}
