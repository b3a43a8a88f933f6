"""Pinterest API v5 simulator: OAuth, user_account, boards (bookmark pages, one SECRET board per
user), pins from image URLs / several image URLs / an uploaded video, media uploads with a
processing status, pin analytics that grow with time, and the v5 error envelope
``{"code", "message"}``."""

from __future__ import annotations

import base64
import datetime as dt
import time
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path

from platforms.base import Platform
from platforms.sandbox import media_checks, pages
from platforms.sandbox.common import (
    basic_auth,
    bearer_token,
    digest,
    fetch_media,
    grown,
    iso,
    redirect_with,
    settling,
    sniff_kind,
)
from platforms.sandbox.scenarios import marker
from platforms.sandbox.store import SandboxStore
from platforms.sandbox.views import json_body, simulator_view

SLUG = "pinterest"
store = SandboxStore(SLUG)
view = simulator_view(SLUG)

ACCESS_TTL = 30 * 86400
REFRESH_TTL = 365 * 86400
BOARD_NAMES = (
    "Recipes",
    "Travel ideas",
    "Home decor",
    "Garden",
    "Outfits",
    "Quotes",
    "DIY projects",
    "Wedding",
    "Photography",
    "Art",
    "Books",
    "Fitness",
    "Cars",
    "Architecture",
    "Pets",
    "Crafts",
    "Kids",
    "Tattoos",
    "Hair",
    "Makeup",
    "Desserts",
    "Camping",
    "Beaches",
    "Cocktails",
    "Interiors",
    "Typography",
    "Logos",
)
MAX_PAGE_SIZE = 250
DEFAULT_PAGE_SIZE = 25
MAX_IMAGE_BYTES = 32 * 1024 * 1024
MAX_VIDEO_BYTES = 2 * 1024 * 1024 * 1024
PRIVACY_FILTERS = {"ALL", "PROTECTED", "PUBLIC", "SECRET", "PUBLIC_AND_SECRET"}
RATE_HEADERS = {"X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": "999"}


def _error(status: int, code: int, message: str) -> JsonResponse:
    return JsonResponse({"code": code, "message": message}, status=status, headers=RATE_HEADERS)


def _ok(body: dict[str, Any], status: int = 200) -> JsonResponse:
    return JsonResponse(body, status=status, headers=RATE_HEADERS)


def _unauthorized() -> JsonResponse:
    return _error(401, 2, "Authentication failed.")


def _user(request: HttpRequest) -> dict[str, Any] | None:
    token = store.token(bearer_token(request))
    if not token or token.get("kind") != "access" or store.is_revoked(token["account_id"]):
        return None
    return store.get("user", token["account_id"])


def _new_user() -> dict[str, Any]:
    user_id = store.new_id()
    board_ids = []
    for index, name in enumerate((*BOARD_NAMES, "Private drafts")):
        board_id = f"{user_id}{index:03d}"
        privacy = "SECRET" if name == "Private drafts" else ("PROTECTED" if index == 5 else "PUBLIC")
        store.put(
            "board",
            board_id,
            {
                "id": board_id,
                "owner": user_id,
                "name": name,
                "description": f"{name} collected by sandbox",
                "privacy": privacy,
                "created_at": iso(time.time()),
            },
        )
        board_ids.append(board_id)
    user = {"id": user_id, "username": f"sandbox_pinner_{user_id[-6:]}", "created": time.time(), "boards": board_ids}
    _seed_history(user, board_ids[0])
    return store.put("user", user_id, user)


HISTORY_DAYS_AGO = (10, 40, 200)  # a real account has a past: two pins inside 180 days, one before


def _seed_history(user: dict[str, Any], board_id: str) -> None:
    for days in HISTORY_DAYS_AGO:
        pin_id = store.new_id()
        store.put(
            "pin",
            pin_id,
            {
                "id": pin_id,
                "owner": user["id"],
                "username": user["username"],
                "board_id": board_id,
                "title": f"Pinned {days} days ago",
                "description": f"An older pin from {days} days ago",
                "link": None,
                "alt_text": None,
                "media_type": "image",
                "image_url": pages.thumbnail_url(SLUG, pin_id),
                "created": time.time() - days * 86400,
            },
        )


# --- OAuth ---------------------------------------------------------------------------------
@view
def authorize(request: HttpRequest) -> HttpResponse:
    redirect_uri = request.GET.get("redirect_uri", "")
    if not request.GET.get("client_id") or not redirect_uri or request.GET.get("response_type") != "code":
        return _error(400, 1, "client_id, redirect_uri and response_type=code are required")
    user = _new_user()
    code = store.issue_token(user["id"], kind="code", ttl=600, redirect_uri=redirect_uri)
    return redirect_with(redirect_uri, code=code, state=request.GET.get("state", ""))


@view
def token(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _error(405, 1, "Method not allowed")
    if basic_auth(request) is None:
        return _error(401, 2, "Authentication failed: client credentials are required (HTTP Basic)")
    grant = request.POST.get("grant_type")
    if grant == "authorization_code":
        code = store.token(request.POST.get("code", ""))
        if not code or code.get("kind") != "code" or code.get("redirect_uri") != request.POST.get("redirect_uri"):
            return _error(400, 1, "Invalid authorization code or redirect_uri")
        store.revoke_token(request.POST["code"])
        account_id = code["account_id"]
        refresh = store.issue_token(account_id, kind="refresh", ttl=REFRESH_TTL)
    elif grant == "refresh_token":
        old = store.token(request.POST.get("refresh_token", ""))
        if not old or old.get("kind") != "refresh" or store.is_revoked(old["account_id"]):
            return _error(400, 1, "Invalid refresh token")
        account_id, refresh = old["account_id"], ""
    else:
        return _error(400, 1, "Unsupported grant_type")
    body: dict[str, Any] = {
        "access_token": store.issue_token(account_id, ttl=ACCESS_TTL),
        "response_type": grant,
        "token_type": "bearer",
        "expires_in": ACCESS_TTL,
        "scope": "boards:read,boards:read_secret,pins:read,pins:read_secret,pins:write,user_accounts:read",
    }
    if refresh:
        body.update(refresh_token=refresh, refresh_token_expires_in=REFRESH_TTL)
    return _ok(body)


# --- account and boards --------------------------------------------------------------------
def _business_name(user_id: str) -> str:
    return f"Sandbox Pinner {user_id[-4:]}"


@view
def user_account(request: HttpRequest) -> HttpResponse:
    user = _user(request)
    if user is None:
        return _unauthorized()
    pins = [p for p in store.all("pin") if p["owner"] == user["id"]]
    return _ok(
        {
            "account_type": "BUSINESS",
            "id": user["id"],
            "username": user["username"],
            "business_name": _business_name(user["id"]),
            "about": "A simulated Pinterest business account.",
            "profile_image": pages.avatar_url(SLUG, user["id"]),
            "website_url": "https://example.com",
            "board_count": len(user["boards"]),
            "pin_count": len(pins),
            "follower_count": grown(user["created"], 30, base=120),
            "following_count": 42,
            "monthly_views": grown(user["created"], 600, base=1000),
        }
    )


def _page(request: HttpRequest, items: list[dict[str, Any]]) -> JsonResponse:
    try:
        size = int(request.GET.get("page_size") or DEFAULT_PAGE_SIZE)
        start = int(base64.urlsafe_b64decode(request.GET.get("bookmark", "").encode() or b"MA==").decode())
    except ValueError:
        return _error(400, 1, "Invalid page_size or bookmark")
    if not 1 <= size <= MAX_PAGE_SIZE or start < 0:
        return _error(400, 1, f"page_size must be between 1 and {MAX_PAGE_SIZE}")
    chunk = items[start : start + size]
    more = start + size < len(items)
    bookmark = base64.urlsafe_b64encode(str(start + size).encode()).decode() if more else None
    return _ok({"items": chunk, "bookmark": bookmark})


@view
def boards(request: HttpRequest) -> HttpResponse:
    user = _user(request)
    if user is None:
        return _unauthorized()
    privacy = request.GET.get("privacy", "PUBLIC_AND_SECRET")
    if privacy not in PRIVACY_FILTERS:
        return _error(400, 1, f"Invalid privacy filter: {privacy}")
    wanted = {"ALL": {"PUBLIC", "PROTECTED", "SECRET"}, "PUBLIC_AND_SECRET": {"PUBLIC", "SECRET"}}.get(
        privacy, {privacy}
    )
    boards = [b for b in (store.get("board", i) for i in user["boards"]) if b and b["privacy"] in wanted]
    pins = [p for p in store.all("pin") if p["owner"] == user["id"]]
    return _page(request, [_board_view(b, user, [p for p in pins if p["board_id"] == b["id"]]) for b in boards])


def _board_view(board: dict[str, Any], user: dict[str, Any], pins: list[dict[str, Any]]) -> dict[str, Any]:
    latest = max((p["created"] for p in pins), default=None)
    return {
        **{k: v for k, v in board.items() if k != "owner"},
        "board_pins_modified_at": iso(latest) if latest is not None else board["created_at"],
        "collaborator_count": 0,
        "pin_count": len(pins),
        "follower_count": 0,
        "media": {"image_cover_url": pins[-1]["image_url"] if pins else None, "pin_thumbnail_urls": []},
        "owner": {"username": user["username"]},
    }


# --- media uploads -------------------------------------------------------------------------
@view
def media(request: HttpRequest) -> HttpResponse:
    user = _user(request)
    if user is None:
        return _unauthorized()
    if request.method != "POST":
        return _error(405, 1, "Method not allowed")
    if json_body(request).get("media_type") != "video":
        return _error(400, 1, "media_type must be 'video'")
    media_id = store.new_id()
    upload_key = digest("upload", media_id)
    store.put(
        "media",
        media_id,
        {"media_id": media_id, "owner": user["id"], "status": "registered", "key": upload_key, "polls": 0},
    )
    return _ok(
        {
            "media_id": media_id,
            "media_type": "video",
            "upload_url": request.build_absolute_uri(f"/sandbox/{SLUG}/_upload/{media_id}"),
            "upload_parameters": {"key": upload_key, "Content-Type": "multipart/form-data"},
        },
        status=201,
    )


@view
def media_upload(request: HttpRequest, media_id: str) -> HttpResponse:
    """Stands in for the storage bucket the real ``upload_url`` points at (multipart POST)."""
    item = store.get("media", media_id)
    upload = request.FILES.get("file")
    if item is None or request.POST.get("key") != item["key"] or upload is None:
        return HttpResponse("<Error><Code>AccessDenied</Code></Error>", status=403, content_type="application/xml")
    data = upload.read(MAX_VIDEO_BYTES + 1)
    status = "processing" if sniff_kind(data) == "video" and len(data) <= MAX_VIDEO_BYTES else "failed"
    status = "failed" if media_checks.refusal(Platform.PINTEREST, "FEED", data) else status
    store.update("media", media_id, status=status)
    return HttpResponse(status=204)


@view
def media_status(request: HttpRequest, media_id: str) -> HttpResponse:
    user = _user(request)
    if user is None:
        return _unauthorized()
    item = store.get("media", media_id)
    if item is None or item["owner"] != user["id"]:
        return _error(404, 3, "Media not found.")
    if item["status"] == "processing":  # the first status poll still sees it processing
        status = "succeeded" if item["polls"] >= 1 else "processing"
        item = store.update("media", media_id, polls=item["polls"] + 1, status=status)
        assert item is not None
    return _ok({"media_id": media_id, "media_type": "video", "status": item["status"]})


# --- pins ----------------------------------------------------------------------------------
def _pin_view(pin: dict[str, Any]) -> dict[str, Any]:
    image = {"url": pin["image_url"], "width": 600, "height": 800}
    return {
        "id": pin["id"],
        "created_at": iso(pin["created"]),
        "link": pin["link"],
        "title": pin["title"],
        "description": pin["description"],
        "alt_text": pin["alt_text"],
        "board_id": pin["board_id"],
        "board_section_id": None,
        "board_owner": {"username": pin["username"]},
        "is_owner": True,
        "dominant_color": "#6E7874",
        "creative_type": "VIDEO" if pin["media_type"] == "video" else "REGULAR",
        "media": {"media_type": pin["media_type"], "images": {"150x150": image, "600x": image}},
        "parent_pin_id": None,
        "is_standard": True,
        "has_been_promoted": False,
        "note": "",
        "pin_metrics": None,
    }


def _media_problem(source: dict[str, Any], user: dict[str, Any]) -> tuple[str, str] | str:
    """(media_type, image url for the pin) or an error message."""
    kind = source.get("source_type")
    if kind == "image_url":
        fetched = fetch_media(str(source.get("url") or ""), max_bytes=MAX_IMAGE_BYTES)
        if fetched is None or sniff_kind(fetched[0]) != "image":
            return "Sorry, we could not fetch the image."
        return media_checks.refusal(Platform.PINTEREST, "FEED", fetched[0]) or ("image", str(source["url"]))
    if kind == "multiple_image_urls":
        items = source.get("items") or []
        if not 2 <= len(items) <= 5:
            return "multiple_image_urls needs 2 to 5 images"
        for entry in items:
            fetched = fetch_media(str(entry.get("url") or ""), max_bytes=MAX_IMAGE_BYTES)
            if fetched is None or sniff_kind(fetched[0]) != "image":
                return "Sorry, we could not fetch one of the images."
            if (problem := media_checks.refusal(Platform.PINTEREST, "CAROUSEL_ITEM", fetched[0])) is not None:
                return problem
        return "multiple_images", str(items[0]["url"])
    if kind == "video_id":
        item = store.get("media", str(source.get("media_id") or ""))
        if item is None or item["owner"] != user["id"] or item["status"] != "succeeded":
            return "The video media is not ready or does not exist."
        if not source.get("cover_image_url") and source.get("cover_image_key_frame_time") is None:
            return "A video pin needs cover_image_url or cover_image_key_frame_time"
        return "video", str(source.get("cover_image_url") or pages.thumbnail_url(SLUG, item["media_id"]))
    return "Invalid media_source.source_type"


@view
def pins(request: HttpRequest) -> HttpResponse:
    user = _user(request)
    if user is None:
        return _unauthorized()
    if request.method == "GET":
        mine = [p for p in store.all("pin") if p["owner"] == user["id"]]
        mine.sort(key=lambda p: p["created"], reverse=True)
        return _page(request, [_pin_view(p) for p in mine])
    body = json_body(request)
    title, description = str(body.get("title") or ""), str(body.get("description") or "")
    scenario = marker(f"{title}\n{description}")
    if scenario == "unauthorized":
        return _unauthorized()
    request.sandbox_log = {"publish": True, "marker": None, "text": description[:80]}  # type: ignore[attr-defined]
    if scenario == "flaky" and store.first_time(digest("flaky", user["id"], title, description)):
        return _error(503, 0, "Service temporarily unavailable. Please try again later.")
    if scenario == "fail":
        return _error(400, 1, "Pin not created: it was flagged as spam by our community guidelines.")
    board = store.get("board", str(body.get("board_id") or ""))
    if board is None or board["owner"] != user["id"]:
        return _error(404, 3, "Board not found.")
    if len(title) > 100 or len(description) > 800 or len(str(body.get("alt_text") or "")) > 500:
        return _error(400, 1, "Invalid parameters: title ≤ 100, description ≤ 800, alt_text ≤ 500 characters")
    link = str(body.get("link") or "")
    if link and not link.startswith(("http://", "https://")):
        return _error(400, 1, "Invalid parameters: link must be a URL")
    outcome = _media_problem(body.get("media_source") or {}, user)
    if isinstance(outcome, str):
        return _error(400, 1, outcome)
    pin_id = store.new_id()
    pin = {
        "id": pin_id,
        "owner": user["id"],
        "username": user["username"],
        "board_id": board["id"],
        "title": title,
        "description": description,
        "link": link or None,
        "alt_text": body.get("alt_text"),
        "media_type": outcome[0],
        "image_url": outcome[1],
        "created": time.time(),
    }
    store.put("pin", pin_id, pin)
    request.sandbox_log["remoteId"] = pin_id  # type: ignore[attr-defined]
    return _ok(_pin_view(pin), status=201)


@view
def pin_detail(request: HttpRequest, pin_id: str) -> HttpResponse:
    """``GET``, ``PATCH`` (title, description, link, alt_text, board_id, note; never the media)
    and ``DELETE`` (204) of ``/v5/pins/{pin_id}``; a pin that is not there: 404 "Pin not found."."""
    user = _user(request)
    if request.method in ("PATCH", "DELETE"):
        kind = "edit" if request.method == "PATCH" else "delete"
        request.sandbox_log = {kind: True, "remoteId": pin_id}  # type: ignore[attr-defined]
    if user is None:
        return _unauthorized()
    pin = store.get("pin", pin_id)
    if pin is None:
        return _error(404, 50, "Pin not found.")
    if pin["owner"] != user["id"]:
        return _error(403, 29, "You are not permitted to access that resource.")
    if request.method == "GET":
        return _ok(_pin_view(pin))
    if request.method == "DELETE":
        store.delete("pin", pin_id)
        return HttpResponse(status=204, headers=RATE_HEADERS)
    if request.method != "PATCH":
        return _error(405, 1, "Method not allowed.")
    body = json_body(request)
    editable = {"title", "description", "link", "alt_text", "board_id", "board_section_id", "note"}
    if set(body) - editable:
        return _error(400, 1, f"Invalid parameters: {', '.join(sorted(set(body) - editable))} cannot be updated")
    title = str(body.get("title", pin["title"]) or "")
    description = str(body.get("description", pin["description"]) or "")
    request.sandbox_log["text"] = description[:80]  # type: ignore[attr-defined]
    scenario = marker(f"{title}\n{description}")
    if scenario == "unauthorized":
        return _unauthorized()
    if scenario == "fail":
        return _error(400, 1, "Pin not updated: it was flagged as spam by our community guidelines.")
    if len(title) > 100 or len(description) > 800 or len(str(body.get("alt_text") or "")) > 500:
        return _error(400, 1, "Invalid parameters: title ≤ 100, description ≤ 800, alt_text ≤ 500 characters")
    if "board_id" in body:
        board = store.get("board", str(body["board_id"] or ""))
        if board is None or board["owner"] != user["id"]:
            return _error(404, 3, "Board not found.")
    changes = {key: body[key] for key in ("link", "alt_text", "board_id") if key in body}
    pin = store.update("pin", pin_id, title=title, description=description, **changes) or pin
    return _ok(_pin_view(pin))


@view
def pin_analytics(request: HttpRequest, pin_id: str) -> HttpResponse:
    user = _user(request)
    if user is None:
        return _unauthorized()
    pin = store.get("pin", pin_id)
    if pin is None or pin["owner"] != user["id"]:
        return _error(404, 3, "Pin not found.")
    metric_types = [m for m in request.GET.get("metric_types", "").split(",") if m]
    if not metric_types or not request.GET.get("start_date") or not request.GET.get("end_date"):
        return _error(400, 1, "start_date, end_date and metric_types are required")
    rates = {
        "IMPRESSION": 120,
        "SAVE": 6,
        "PIN_CLICK": 20,
        "OUTBOUND_CLICK": 8,
        "TOTAL_COMMENTS": 2,
        "TOTAL_REACTIONS": 10,
    }
    unknown = [m for m in metric_types if m not in rates]
    if unknown:
        return _error(400, 1, f"Invalid metric_types: {','.join(unknown)}")
    figures = {m: settling(pin["created"], rates[m]) for m in metric_types}
    today = dt.datetime.now(dt.UTC).date().isoformat()
    return _ok(
        {
            "all": {
                "daily_metrics": [{"data_status": "READY", "date": today, "metrics": figures}],
                "summary_metrics": figures,
                "lifetime_metrics": figures,
            }
        }
    )


def pin_page(request: HttpRequest, pin_id: str) -> HttpResponse:
    """The pin's page on pinterest.com (``/pin/{id}/``)."""
    pin = store.get("pin", pin_id)
    if pin is None:
        return pages.not_found_page("Pinterest")
    return pages.post_page(
        platform="Pinterest",
        author=_business_name(pin["owner"]),
        handle=pin["username"],
        text="\n\n".join(part for part in (pin["title"], pin["description"]) if part),
        media=[pin["image_url"]],
        avatar=pages.avatar_url(SLUG, pin["owner"]),
    )


urlpatterns = [
    *pages.urlpatterns,
    path("pin/<str:pin_id>/", pin_page),
    path("oauth/", authorize),
    path("oauth/token", token),
    path("user_account", user_account),
    path("boards", boards),
    path("media", media),
    path("media/<str:media_id>", media_status),
    path("_upload/<str:media_id>", media_upload),
    path("pins", pins),
    path("pins/<str:pin_id>", pin_detail),
    path("pins/<str:pin_id>/analytics", pin_analytics),
]


# --- armed faults (platforms.sandbox.faults): Pinterest answers every limit with 429 ------------


def _rate_limited(request: HttpRequest) -> JsonResponse:
    response = _error(429, 29, "You have exceeded your rate limit. Try again later.")
    response["X-RateLimit-Remaining"] = "0"
    response["Retry-After"] = "60"
    return response


FAULTS = {
    "rate_limited": _rate_limited,
    "server_error": lambda request: _error(503, 0, "Service temporarily unavailable. Please try again later."),
}
