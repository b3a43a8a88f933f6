"""TikTok Content Posting API simulator (open.tiktokapis.com/v2): OAuth v2 authorize and token
(authorization_code, refresh_token), user info, creator info, Direct Post video and photo
init with PULL_FROM_URL, inbox (draft) uploads, the publish status machine
(PROCESSING_DOWNLOAD for one read, then PUBLISH_COMPLETE or SEND_TO_USER_INBOX, or FAILED with
``fail_reason``), and the video list/query endpoints.

Daily cap switch: a creator may direct-post ``daily_cap`` times (15) in 24 hours; beyond it, or
when the title/description contains ``#sandbox-daily-cap``, direct-post init answers 403
``spam_risk_too_many_posts`` (inbox uploads still work). ``#sandbox-fail`` makes the post FAIL
moderation (``spam_risk_text``)."""

from __future__ import annotations

import secrets
import time
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.urls import path

from platforms.base import Platform
from platforms.sandbox import media_checks, pages
from platforms.sandbox._meta_common import fetch_media, log_publish
from platforms.sandbox.scenarios import marker
from platforms.sandbox.store import SandboxStore
from platforms.sandbox.views import json_body, simulator_view

SLUG = "tiktok"
DAILY_CAP = 15
DAILY_CAP_MARKER = "#sandbox-daily-cap"
DAY = 86400
ACCESS_TTL = 86400
REFRESH_TTL = 365 * DAY
PRIVACY_OPTIONS = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"]


def _store() -> SandboxStore:
    return SandboxStore(SLUG)


def _log_id() -> str:
    return time.strftime("%Y%m%d%H%M%S") + secrets.token_hex(8).upper()


def _ok(data: dict[str, Any]) -> JsonResponse:
    return JsonResponse({"data": data, "error": {"code": "ok", "message": "", "log_id": _log_id()}})


def _error(code: str, message: str, status: int, headers: dict[str, str] | None = None) -> JsonResponse:
    response = JsonResponse(
        {"data": {}, "error": {"code": code, "message": message, "log_id": _log_id()}}, status=status
    )
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def _oauth_error(error: str, description: str) -> JsonResponse:
    return JsonResponse({"error": error, "error_description": description, "log_id": _log_id()}, status=400)


def _auth(request: HttpRequest) -> tuple[dict[str, Any] | None, JsonResponse | None]:
    header = request.headers.get("Authorization", "")
    s = _store()
    payload = s.token(header[7:]) if header.startswith("Bearer ") else None
    if payload is None or payload.get("kind") != "access" or s.is_revoked(payload["account_id"]):
        return None, _error("access_token_invalid", "The access token is invalid or not found in the request.", 401)
    user = s.get("user", payload["account_id"])
    return user, None


@simulator_view(SLUG, log=False)
def authorize(request: HttpRequest) -> HttpResponse:
    redirect_uri = request.GET.get("redirect_uri", "")
    if not request.GET.get("client_key") or not redirect_uri.startswith(("http://", "https://")):
        return _oauth_error("invalid_request", "client_key and redirect_uri are required")
    s = _store()
    open_id = f"-000{secrets.token_hex(12)}"
    s.put(
        "user",
        open_id,
        {
            "open_id": open_id,
            "username": f"sandbox.tok{open_id[-6:]}",
            "display_name": f"Sandbox Creator {open_id[-4:]}",
            "follower_count": 500,
            "daily_cap": DAILY_CAP,
            "max_video_post_duration_sec": 600,
        },
    )
    code = s.issue_token(open_id, kind="code", ttl=600, redirect_uri=redirect_uri)
    query = urlencode({"code": code, "scopes": request.GET.get("scope", ""), "state": request.GET.get("state", "")})
    return HttpResponseRedirect(f"{redirect_uri}{'&' if '?' in redirect_uri else '?'}{query}")


def _issue(open_id: str) -> JsonResponse:
    s = _store()
    return JsonResponse(
        {
            "access_token": s.issue_token(open_id, kind="access", ttl=ACCESS_TTL),
            "expires_in": ACCESS_TTL,
            "open_id": open_id,
            "refresh_expires_in": REFRESH_TTL,
            "refresh_token": s.issue_token(open_id, kind="refresh", ttl=REFRESH_TTL),
            "scope": "user.info.basic,user.info.profile,user.info.stats,video.publish,video.upload,video.list",
            "token_type": "Bearer",
        }
    )


@simulator_view(SLUG)
def token(request: HttpRequest) -> JsonResponse:
    if request.method != "POST":
        return _oauth_error("invalid_request", "POST is required")
    s = _store()
    if not request.POST.get("client_key") or not request.POST.get("client_secret"):
        return _oauth_error("invalid_client", "Client key or secret is incorrect.")
    grant = request.POST.get("grant_type")
    if grant == "authorization_code":
        payload = s.token(request.POST.get("code", ""))
        if payload is None or payload["kind"] != "code" or payload["redirect_uri"] != request.POST.get("redirect_uri"):
            return _oauth_error("invalid_grant", "Authorization code is expired.")
        s.revoke_token(request.POST["code"])
        return _issue(payload["account_id"])
    if grant == "refresh_token":
        payload = s.token(request.POST.get("refresh_token", ""))
        if payload is None or payload["kind"] != "refresh" or s.is_revoked(payload["account_id"]):
            return _oauth_error("invalid_grant", "Refresh token is invalid or expired.")
        return _issue(payload["account_id"])
    return _oauth_error("unsupported_grant_type", "grant_type must be authorization_code or refresh_token")


@simulator_view(SLUG)
def revoke(request: HttpRequest) -> JsonResponse:
    """``POST /v2/oauth/revoke/``: the user's authorization of the app ends (every token of it
    fails from now on); an empty 200, for a token already revoked as well."""
    request.sandbox_log = {"revoke": True}  # type: ignore[attr-defined]
    if request.method != "POST":
        return _oauth_error("invalid_request", "POST is required")
    if not request.POST.get("client_key") or not request.POST.get("client_secret"):
        return _oauth_error("invalid_client", "Client key or secret is incorrect.")
    if not request.POST.get("token"):
        return _oauth_error("invalid_request", "token is required")
    s = _store()
    payload = s.token(request.POST["token"])
    if payload is not None and payload.get("kind") in ("access", "refresh"):
        s.set_revoked(str(payload["account_id"]), True)
    return JsonResponse({})


@simulator_view(SLUG)
def user_info(request: HttpRequest) -> JsonResponse:
    user, error = _auth(request)
    if error or user is None:
        return error or _error("access_token_invalid", "Unknown user", 401)
    every = {
        "open_id": user["open_id"],
        "union_id": f"u{user['open_id'][-12:]}",
        "display_name": user["display_name"],
        "username": user["username"],
        "avatar_url": pages.avatar_url(SLUG, user["open_id"]),
        "follower_count": user["follower_count"],
        "following_count": 12,
        "likes_count": 900,
        "video_count": len([v for v in _store().all("video") if v["open_id"] == user["open_id"]]),
    }
    fields = [f for f in request.GET.get("fields", "").split(",") if f]
    if not fields or any(f not in every for f in fields):
        return _error("invalid_params", "fields must name user fields", 400)
    return _ok({"user": {f: every[f] for f in fields}})


@simulator_view(SLUG)
def creator_info(request: HttpRequest) -> JsonResponse:
    user, error = _auth(request)
    if error or user is None:
        return error or _error("access_token_invalid", "Unknown user", 401)
    return _ok(
        {
            "creator_avatar_url": pages.avatar_url(SLUG, user["open_id"]),
            "creator_username": user["username"],
            "creator_nickname": user["display_name"],
            "privacy_level_options": PRIVACY_OPTIONS,
            "comment_disabled": False,
            "duet_disabled": False,
            "stitch_disabled": True,
            "max_video_post_duration_sec": user["max_video_post_duration_sec"],
        }
    )


def _direct_posts_today(open_id: str) -> int:
    return len(
        [
            p
            for p in _store().all("publish")
            if p["open_id"] == open_id and p["mode"] == "direct" and p["created"] > time.time() - DAY
        ]
    )


def _init(request: HttpRequest, *, kind: str, mode: str | None = None) -> JsonResponse:
    user, error = _auth(request)
    if error or user is None:
        return error or _error("access_token_invalid", "Unknown user", 401)
    body = json_body(request)
    post_info = body.get("post_info") if isinstance(body.get("post_info"), dict) else {}
    source = body.get("source_info") if isinstance(body.get("source_info"), dict) else {}
    assert isinstance(post_info, dict) and isinstance(source, dict)
    if mode is None:
        mode = "direct" if body.get("post_mode", "DIRECT_POST") == "DIRECT_POST" else "inbox"
    text = f"{post_info.get('title', '')} {post_info.get('description', '')}"
    s = _store()
    scenario = marker(text)
    if scenario == "unauthorized":
        return _error("access_token_invalid", "The access token is invalid or not found in the request.", 401)
    if scenario == "flaky" and s.first_time(f"flaky:{user['open_id']}:{text}"):
        return _error("internal_error", "Something went wrong. Please try again later.", 500)
    if source.get("source") != "PULL_FROM_URL":
        return _error("invalid_params", "source_info.source must be PULL_FROM_URL in this simulator", 400)
    urls = [source.get("video_url")] if kind == "VIDEO" else source.get("photo_images")
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) and u for u in urls):
        return _error("invalid_params", "video_url or photo_images is required", 400)
    if kind == "PHOTO" and not 1 <= len(urls) <= 35:
        return _error("invalid_params", "photo_images takes 1 to 35 images", 400)
    if mode == "direct":
        privacy = post_info.get("privacy_level")
        if privacy not in PRIVACY_OPTIONS:
            return _error("privacy_level_option_mismatch", "privacy_level is not among the creator's options", 400)
        if DAILY_CAP_MARKER in text or _direct_posts_today(user["open_id"]) >= int(user.get("daily_cap", DAILY_CAP)):
            return _error(
                "spam_risk_too_many_posts", "The daily post cap from the API is reached for the current user.", 403
            )
    problem = next(
        (p for u in urls if (p := fetch_media(u, kinds=("video",) if kind == "VIDEO" else ("image",)))), None
    )
    receipts: list[dict[str, Any]] = []
    problem = problem or next(
        (p for u in urls if (p := media_checks.refusal_of_url(Platform.TIKTOK, "FEED", u, receipts=receipts))), None
    )
    publish_id = f"v_pub_url~v2-1.{s.new_id()}"
    s.put(
        "publish",
        publish_id,
        {
            "publish_id": publish_id,
            "open_id": user["open_id"],
            "mode": mode,
            "kind": kind,
            "created": time.time(),
            "title": str(post_info.get("title", "")),
            "description": str(post_info.get("description", "")),
            "privacy": post_info.get("privacy_level"),
            "polls_left": 1,
            "status": "PROCESSING_DOWNLOAD",
            "fail_reason": media_checks.tiktok_fail_reason(problem, kind)
            if problem
            else ("spam_risk_text" if scenario == "fail" else ""),
        },
    )
    log_publish(request, remote_id=publish_id, text=text.strip(), mode=mode)
    media_checks.log_received(request, receipts)
    return _ok({"publish_id": publish_id})


@simulator_view(SLUG)
def video_init(request: HttpRequest) -> JsonResponse:
    return _init(request, kind="VIDEO", mode="direct")


@simulator_view(SLUG)
def inbox_video_init(request: HttpRequest) -> JsonResponse:
    return _init(request, kind="VIDEO", mode="inbox")


@simulator_view(SLUG)
def content_init(request: HttpRequest) -> JsonResponse:
    if json_body(request).get("media_type") != "PHOTO":
        return _error("invalid_params", "media_type must be PHOTO", 400)
    return _init(request, kind="PHOTO")


@simulator_view(SLUG)
def status_fetch(request: HttpRequest) -> JsonResponse:
    user, error = _auth(request)
    if error or user is None:
        return error or _error("access_token_invalid", "Unknown user", 401)
    s = _store()
    job = s.get("publish", str(json_body(request).get("publish_id", "")))
    if job is None or job["open_id"] != user["open_id"]:
        return _error("invalid_publish_id", "The publish_id does not exist or is not accessible.", 400)
    if job["polls_left"] > 0:
        s.update("publish", job["publish_id"], polls_left=job["polls_left"] - 1)
        return _ok({"status": job["status"], "downloaded_bytes": 0, "uploaded_bytes": 0})
    if job["fail_reason"]:
        return _ok({"status": "FAILED", "fail_reason": job["fail_reason"]})
    if job["mode"] == "inbox":
        return _ok({"status": "SEND_TO_USER_INBOX"})
    video_id = f"7{job['publish_id'].rsplit('.', 1)[-1][-18:]}"
    s.create_once(
        "video",
        video_id,
        {
            "id": video_id,
            "open_id": user["open_id"],
            "title": job["title"],
            "description": job["description"] or job["title"],
            "created": job["created"],
            "username": user["username"],
        },
    )
    return _ok(
        {
            "status": "PUBLISH_COMPLETE",
            "publicaly_available_post_id": [int(video_id)],
            "uploaded_bytes": 0,
            "downloaded_bytes": 1,
        }
    )


def _video_view(video: dict[str, Any]) -> dict[str, Any]:
    age = max(0, int(time.time() - video["created"]))
    views = 10 + age * 3
    return {
        "id": video["id"],
        "title": video["title"][:150],
        "video_description": video["description"],
        "create_time": int(video["created"]),
        "cover_image_url": pages.thumbnail_url(SLUG, video["id"]),
        "share_url": f"{pages.public_base(SLUG)}/@{video['username']}/video/{video['id']}",
        "view_count": views,
        "like_count": views // 6,
        "comment_count": views // 30,
        "share_count": views // 50,
        "embed_link": f"{pages.public_base(SLUG)}/embed/v2/{video['id']}",
        "duration": 3,
    }


@simulator_view(SLUG)
def video_list(request: HttpRequest) -> JsonResponse:
    user, error = _auth(request)
    if error or user is None:
        return error or _error("access_token_invalid", "Unknown user", 401)
    body = json_body(request)
    try:
        max_count = max(1, min(20, int(body.get("max_count", 10))))
        cursor = int(body.get("cursor") or time.time() * 1000 + 1)
    except (TypeError, ValueError):
        return _error("invalid_params", "max_count and cursor must be integers", 400)
    videos = sorted(
        (v for v in _store().all("video") if v["open_id"] == user["open_id"] and v["created"] * 1000 < cursor),
        key=lambda v: v["created"],
        reverse=True,
    )
    page = videos[:max_count]
    next_cursor = int(page[-1]["created"] * 1000) if page else cursor
    return _ok({"videos": [_video_view(v) for v in page], "cursor": next_cursor, "has_more": len(videos) > max_count})


@simulator_view(SLUG)
def video_query(request: HttpRequest) -> JsonResponse:
    user, error = _auth(request)
    if error or user is None:
        return error or _error("access_token_invalid", "Unknown user", 401)
    filters = json_body(request).get("filters")
    ids = filters.get("video_ids") if isinstance(filters, dict) else None
    if not isinstance(ids, list) or not 1 <= len(ids) <= 20:
        return _error("invalid_params", "filters.video_ids takes 1 to 20 ids", 400)
    s = _store()
    found = [s.get("video", str(i)) for i in ids]
    return _ok({"videos": [_video_view(v) for v in found if v and v["open_id"] == user["open_id"]]})


def video_page(request: HttpRequest, video_id: str, username: str = "") -> HttpResponse:
    """The video's page on tiktok.com (its ``share_url``, or its ``embed_link`` without a name)."""
    video = _store().get("video", video_id)
    user = _store().get("user", video["open_id"]) if video else None
    if video is None or user is None or username not in ("", video["username"]):
        return pages.not_found_page("TikTok")
    return pages.post_page(
        platform="TikTok",
        author=user["display_name"],
        handle=f"@{user['username']}",
        text=video["description"],
        media=[pages.thumbnail_url(SLUG, video["id"])],
        avatar=pages.avatar_url(SLUG, user["open_id"]),
    )


urlpatterns = [
    *pages.urlpatterns,
    path("@<str:username>/video/<str:video_id>", video_page),
    path("embed/v2/<str:video_id>", video_page),
    path("v2/auth/authorize/", authorize),
    path("v2/oauth/token/", token),
    path("v2/oauth/revoke/", revoke),
    path("v2/user/info/", user_info),
    path("v2/post/publish/creator_info/query/", creator_info),
    path("v2/post/publish/video/init/", video_init),
    path("v2/post/publish/inbox/video/init/", inbox_video_init),
    path("v2/post/publish/content/init/", content_init),
    path("v2/post/publish/status/fetch/", status_fetch),
    path("v2/video/list/", video_list),
    path("v2/video/query/", video_query),
]


# --- armed faults (platforms.sandbox.faults) ---------------------------------------------------
FAULTS = {
    "rate_limited": lambda request: _error(
        "rate_limit_exceeded", "API rate limit was exceeded, please try again later", 429
    ),
    "quota_exhausted": lambda request: _error(
        "spam_risk_too_many_pending_share", "The number of pending shares has reached the limit.", 403
    ),
    "server_error": lambda request: _error("internal_error", "Something went wrong. Please try again later.", 500),
}
