"""Simulator of the X API v2: OAuth 2.0 with PKCE (authorize auto-approves and creates a user;
the token endpoint checks the verifier and rotates refresh tokens), users/me, the chunked v2 media
upload with video processing, POST /2/tweets (duplicate content refused), the user's timeline and
tweet lookup with metrics that grow, problem-details errors and the x-rate-limit headers."""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import path

from platforms.base import Platform
from platforms.capabilities import text_length
from platforms.sandbox import media_checks, pages
from platforms.sandbox.common import as_dict, bearer_token, grown, iso, json_response, request_params, sniff_mime
from platforms.sandbox.scenarios import marker
from platforms.sandbox.store import SandboxStore
from platforms.sandbox.views import simulator_view

SLUG = "twitter"
ACCESS_TTL = 7200
VIDEO_READY_AFTER = 1.5
DAILY_TWEETS = 2400


def _store() -> SandboxStore:
    return SandboxStore(SLUG)


def _problem(status: int, title: str, detail: str, kind: str = "about:blank", **extra: Any) -> HttpResponse:
    return json_response({"title": title, "detail": detail, "type": kind, "status": status, **extra}, status=status)


def _unauthorized() -> HttpResponse:
    return _problem(401, "Unauthorized", "Unauthorized")


def _limits(user_id: str, endpoint: str, limit: int = 900) -> dict[str, str]:
    store = _store()
    window = int(time.time()) // 900
    key = store._key("ratelimit", user_id, endpoint, str(window))
    used = int(store.redis.incr(key))
    store.redis.expire(key, 900)
    return {
        "x-rate-limit-limit": str(limit),
        "x-rate-limit-remaining": str(max(limit - used, 0)),
        "x-rate-limit-reset": str((window + 1) * 900),
    }


def _user(request: HttpRequest) -> dict[str, Any] | None:
    token = bearer_token(request)
    payload = _store().token(token) if token else None
    if payload is None or payload.get("kind") != "access":
        return None
    user = _store().get("user", payload["account_id"])
    if user is None or _store().is_revoked(user["id"]):
        return None
    return user


# --- OAuth -------------------------------------------------------------------------------


@simulator_view(SLUG)
def authorize(request: HttpRequest) -> HttpResponse:
    query = request.GET
    needed = ("client_id", "redirect_uri", "state", "code_challenge")
    if query.get("response_type") != "code" or any(not query.get(name) for name in needed):
        return _problem(400, "Invalid Request", "Something went wrong. You weren't able to give access to the App.")
    if query.get("code_challenge_method", "plain") not in {"plain", "S256"}:
        return _problem(400, "Invalid Request", "code_challenge_method must be plain or S256")
    store = _store()
    user_id = store.new_id()
    store.put(
        "user",
        user_id,
        {
            "id": user_id,
            "username": f"sandbox_{user_id[-6:]}",
            "name": f"Sandbox {user_id[-4:]}",
            "created": time.time(),
            "followers": 50 + int(user_id[-2:]),
        },
    )
    code = secrets.token_urlsafe(32)
    store.put(
        "code",
        code,
        {
            "user_id": user_id,
            "redirect_uri": query["redirect_uri"],
            "challenge": query["code_challenge"],
            "method": query.get("code_challenge_method", "plain"),
            "scope": query.get("scope", ""),
        },
    )
    separator = "&" if "?" in query["redirect_uri"] else "?"
    return HttpResponseRedirect(
        f"{query['redirect_uri']}{separator}{urlencode({'state': query['state'], 'code': code})}"
    )


def _grant(user_id: str, scope: str) -> dict[str, Any]:
    access = _store().issue_token(user_id, kind="access", ttl=ACCESS_TTL)
    body = {"token_type": "bearer", "expires_in": ACCESS_TTL, "access_token": access, "scope": scope}
    if "offline.access" in scope.split():
        body["refresh_token"] = _store().issue_token(user_id, kind="refresh", scope=scope)
    return body


@simulator_view(SLUG)
def token(request: HttpRequest) -> HttpResponse:
    params = request_params(request)
    invalid = {"error": "invalid_request", "error_description": "Value passed for the token was invalid."}
    if not request.headers.get("Authorization", "").startswith("Basic ") and not params.get("client_id"):
        return json_response(
            {"error": "unauthorized_client", "error_description": "Missing valid authorization header"}, 401
        )
    grant = params.get("grant_type")
    if grant == "authorization_code":
        code = _store().get("code", str(params.get("code") or ""))
        if code is None or code["redirect_uri"] != params.get("redirect_uri"):
            return json_response(invalid, 400)
        verifier = str(params.get("code_verifier") or "")
        expected = (
            base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if code["method"] == "S256"
            else verifier
        )
        if expected != code["challenge"]:
            return json_response({"error": "invalid_request", "error_description": "Invalid code_verifier"}, 400)
        _store().delete("code", str(params["code"]))
        return json_response(_grant(code["user_id"], code["scope"]))
    if grant == "refresh_token":
        old = str(params.get("refresh_token") or "")
        payload = _store().token(old)
        if payload is None or payload.get("kind") != "refresh" or _store().is_revoked(payload["account_id"]):
            return json_response(invalid, 400)
        _store().revoke_token(old)  # refresh tokens rotate
        return json_response(_grant(payload["account_id"], str(payload.get("scope") or "")))
    return json_response({"error": "unsupported_grant_type", "error_description": "grant_type not supported"}, 400)


# --- users and tweets ---------------------------------------------------------------------


@simulator_view(SLUG)
def users_me(request: HttpRequest) -> HttpResponse:
    user = _user(request)
    if user is None:
        return _unauthorized()
    data = {
        "id": user["id"],
        "name": user["name"],
        "username": user["username"],
        "profile_image_url": pages.avatar_url(SLUG, user["id"]),
        "public_metrics": {
            "followers_count": grown(user["created"], 2, base=user["followers"]),
            "following_count": 40,
            "tweet_count": _store().count(f"tweets:{user['id']}"),
            "listed_count": 1,
            "like_count": 0,
        },
    }
    return json_response({"data": data}, headers=_limits(user["id"], "users_me", 75))


def _tweet_json(tweet: dict[str, Any], fields: set[str], owner: bool) -> dict[str, Any]:
    data: dict[str, Any] = {"id": tweet["id"], "text": tweet["text"], "edit_history_tweet_ids": [tweet["id"]]}
    if "created_at" in fields:
        data["created_at"] = iso(tweet["created"], millis=True)
    impressions = grown(tweet["created"], 30)
    if "public_metrics" in fields:
        data["public_metrics"] = {
            "retweet_count": grown(tweet["created"], 0.5),
            "reply_count": grown(tweet["created"], 0.3),
            "like_count": grown(tweet["created"], 2),
            "quote_count": grown(tweet["created"], 0.1),
            "bookmark_count": grown(tweet["created"], 0.2),
            "impression_count": impressions,
        }
    if "non_public_metrics" in fields and owner:
        data["non_public_metrics"] = {
            "impression_count": impressions,
            "user_profile_clicks": grown(tweet["created"], 1),
        }
    if tweet.get("media_keys"):
        data["attachments"] = {"media_keys": tweet["media_keys"]}
    return data


def _fields(request: HttpRequest) -> set[str]:
    return {f for f in (request.GET.get("tweet.fields") or "").split(",") if f}


@simulator_view(SLUG)
def user_tweets(request: HttpRequest, user_id: str) -> HttpResponse:
    viewer = _user(request)
    if viewer is None:
        return _unauthorized()
    if _store().get("user", user_id) is None:
        return _problem(
            404,
            "Not Found Error",
            f"Could not find user with id: [{user_id}].",
            "https://api.twitter.com/2/problems/resource-not-found",
        )
    try:
        limit = min(max(int(request.GET.get("max_results", 10)), 5), 100)
        offset = int(request.GET.get("pagination_token") or 0)
    except ValueError:
        return _problem(
            400,
            "Invalid Request",
            "One or more parameters to your request was invalid.",
            "https://api.twitter.com/2/problems/invalid-request",
        )
    tweets = sorted(_store().all(f"tweets:{user_id}"), key=lambda t: int(t["id"]), reverse=True)
    if "replies" in (request.GET.get("exclude") or "").split(","):
        tweets = [t for t in tweets if not t.get("in_reply_to_tweet_id")]
    start = request.GET.get("start_time")
    if start:
        tweets = [t for t in tweets if iso(t["created"], millis=True) >= start.replace("Z", ".000Z")]
    page = tweets[offset : offset + limit]
    fields = _fields(request)
    body: dict[str, Any] = {"meta": {"result_count": len(page)}}
    if page:
        body["data"] = [_tweet_json(t, fields, viewer["id"] == user_id) for t in page]
        body["meta"].update(newest_id=page[0]["id"], oldest_id=page[-1]["id"])
    if offset + limit < len(tweets):
        body["meta"]["next_token"] = str(offset + limit)
    return json_response(body, headers=_limits(viewer["id"], "user_tweets", 900))


def _find_tweet(tweet_id: str) -> dict[str, Any] | None:
    owner = _store().get("tweet_owner", tweet_id)
    return _store().get(f"tweets:{owner['user_id']}", tweet_id) if owner else None


def tweets_lookup(request: HttpRequest, viewer: dict[str, Any]) -> HttpResponse:
    ids = [i for i in (request.GET.get("ids") or "").split(",") if i]
    if not ids or len(ids) > 100:
        return _problem(
            400,
            "Invalid Request",
            "The `ids` query parameter value must have 1 to 100 items.",
            "https://api.twitter.com/2/problems/invalid-request",
        )
    fields = _fields(request)
    data, errors = [], []
    for tweet_id in ids:
        tweet = _find_tweet(tweet_id)
        if tweet is None:
            errors.append(
                {
                    "value": tweet_id,
                    "detail": f"Could not find tweet with ids: [{tweet_id}].",
                    "title": "Not Found Error",
                    "resource_type": "tweet",
                    "parameter": "ids",
                    "resource_id": tweet_id,
                    "type": "https://api.twitter.com/2/problems/resource-not-found",
                }
            )
        else:
            data.append(_tweet_json(tweet, fields, tweet["author_id"] == viewer["id"]))
    body: dict[str, Any] = {}
    if data:
        body["data"] = data
    if errors:
        body["errors"] = errors
    return json_response(body, headers=_limits(viewer["id"], "tweets_lookup", 900))


def create_tweet(request: HttpRequest, user: dict[str, Any]) -> HttpResponse:
    body = request_params(request)
    text = str(body.get("text") or "")
    request.sandbox_log = {"publish": True, "marker": None, "text": text[:80]}  # type: ignore[attr-defined]
    invalid = "https://api.twitter.com/2/problems/invalid-request"
    scenario = marker(text)
    if scenario == "unauthorized":
        return _unauthorized()
    if scenario == "flaky" and _store().first_time(f"flaky:{user['id']}:{text}"):
        return _problem(503, "Service Unavailable", "Service Unavailable")
    if scenario == "fail":
        return _problem(400, "Invalid Request", "The Tweet was refused by the sandbox (#sandbox-fail).", invalid)
    listed = as_dict(body.get("media")).get("media_ids")
    media_ids = [str(m) for m in listed] if isinstance(listed, list) else []
    if not text.strip() and not media_ids:
        return _problem(
            400,
            "Invalid Request",
            "One or more parameters to your request was invalid.",
            invalid,
            errors=[{"parameters": {"text": [text]}, "message": "text must not be empty"}],
        )
    if text_length(Platform.TWITTER, text) > 280:
        return _problem(
            400,
            "Invalid Request",
            "One or more parameters to your request was invalid.",
            invalid,
            errors=[{"parameters": {"text": [text]}, "message": "Your Tweet text is too long."}],
        )
    reply = body.get("reply")
    parent_id = None
    if reply is not None:
        parent_id = as_dict(reply).get("in_reply_to_tweet_id")
        if not isinstance(parent_id, str) or not parent_id:
            return _problem(
                400,
                "Invalid Request",
                "One or more parameters to your request was invalid.",
                invalid,
                errors=[{"parameters": {"reply.in_reply_to_tweet_id": [str(parent_id)]}, "message": "is required"}],
            )
        request.sandbox_log["inReplyTo"] = parent_id  # type: ignore[attr-defined]
        if _find_tweet(parent_id) is None:
            return _problem(
                403, "Forbidden", "You attempted to reply to a Tweet that is deleted or not visible to you."
            )
    media_keys = []
    for media_id in media_ids:
        media = _store().get("media", media_id)
        if media is None or media["user_id"] != user["id"] or not media["finalized"] or media["ready_at"] > time.time():
            return _problem(400, "Invalid Request", "Your media IDs are invalid.", invalid)
        media_keys.append(media["media_key"])
    if any(t["text"] == text for t in _store().all(f"tweets:{user['id']}")):
        return _problem(403, "Forbidden", "You are not allowed to create a Tweet with duplicate content.")
    headers = _limits(user["id"], "create_tweet", 100)
    used = int(_store().redis.incr(_store()._key("daily", user["id"], str(int(time.time()) // 86400))))
    headers.update(
        {
            "x-user-limit-24hour-limit": str(DAILY_TWEETS),
            "x-user-limit-24hour-remaining": str(max(DAILY_TWEETS - used, 0)),
            "x-user-limit-24hour-reset": str((int(time.time()) // 86400 + 1) * 86400),
        }
    )
    tweet_id = str(1_900_000_000_000_000_000 + int(_store().new_id()[-12:]))
    tweet = {"id": tweet_id, "text": text, "author_id": user["id"], "created": time.time(), "media_keys": media_keys}
    if parent_id:
        tweet["in_reply_to_tweet_id"] = parent_id
    _store().put(f"tweets:{user['id']}", tweet_id, tweet)
    _store().put("tweet_owner", tweet_id, {"user_id": user["id"]})
    request.sandbox_log["remoteId"] = tweet_id  # type: ignore[attr-defined]
    data = {"id": tweet_id, "text": text, "edit_history_tweet_ids": [tweet_id]}
    response = json_response({"data": data}, status=201, headers=headers)
    return response


def _not_found(tweet_id: str) -> dict[str, Any]:
    return {
        "value": tweet_id,
        "detail": f"Could not find tweet with id: [{tweet_id}].",
        "title": "Not Found Error",
        "resource_type": "tweet",
        "parameter": "id",
        "resource_id": tweet_id,
        "type": "https://api.twitter.com/2/problems/resource-not-found",
    }


@simulator_view(SLUG)
def tweet_detail(request: HttpRequest, tweet_id: str) -> HttpResponse:
    """``GET /2/tweets/:id`` (a missing post: 200 with ``errors``, as X answers) and ``DELETE
    /2/tweets/:id`` (``{"data": {"deleted": true}}``; only the author's own; a post already gone:
    404 with the same not-found problem)."""
    user = _user(request)
    if user is None:
        return _unauthorized()
    tweet = _find_tweet(tweet_id)
    if request.method == "DELETE":
        request.sandbox_log = {"delete": True, "remoteId": tweet_id}  # type: ignore[attr-defined]
        headers = _limits(user["id"], "delete_tweet", 50)
        if tweet is None:
            return json_response({"errors": [_not_found(tweet_id)]}, status=404, headers=headers)
        if tweet["author_id"] != user["id"]:
            return _problem(403, "Forbidden", "You are not allowed to delete a Tweet you did not create.")
        _store().delete(f"tweets:{user['id']}", tweet_id)
        _store().delete("tweet_owner", tweet_id)
        return json_response({"data": {"deleted": True}}, headers=headers)
    if tweet is None:
        return json_response({"errors": [_not_found(tweet_id)]}, headers=_limits(user["id"], "tweets_lookup", 900))
    data = _tweet_json(tweet, _fields(request), tweet["author_id"] == user["id"])
    return json_response({"data": data}, headers=_limits(user["id"], "tweets_lookup", 900))


@simulator_view(SLUG)
def revoke(request: HttpRequest) -> HttpResponse:
    """``POST /2/oauth2/revoke``: the token (access or refresh) stops working; ``{"revoked":
    true}`` whether or not it still worked."""
    request.sandbox_log = {"revoke": True}  # type: ignore[attr-defined]
    params = request_params(request)
    if not request.headers.get("Authorization", "").startswith("Basic ") and not params.get("client_id"):
        return json_response(
            {"error": "unauthorized_client", "error_description": "Missing valid authorization header"}, 401
        )
    token_value = str(params.get("token") or "")
    if not token_value:
        return json_response(
            {"error": "invalid_request", "error_description": "Missing required parameter [token]."}, 400
        )
    _store().revoke_token(token_value)
    return json_response({"revoked": True})


@simulator_view(SLUG)
def tweets(request: HttpRequest) -> HttpResponse:
    user = _user(request)
    if user is None:
        return _unauthorized()
    if request.method == "POST":
        return create_tweet(request, user)
    return tweets_lookup(request, user)


# --- chunked media upload (v2) -----------------------------------------------------------------


def _media_problem(detail: str) -> HttpResponse:
    return _problem(400, "Invalid Request", detail, "https://api.twitter.com/2/problems/invalid-request")


@simulator_view(SLUG)
def media_initialize(request: HttpRequest) -> HttpResponse:
    user = _user(request)
    if user is None:
        return _unauthorized()
    params = request_params(request)
    mime = str(params.get("media_type") or "")
    try:
        total = int(params.get("total_bytes") or 0)
    except (TypeError, ValueError):
        total = 0
    if mime not in {"image/jpeg", "image/png", "image/gif", "image/webp", "video/mp4"} or total <= 0:
        return _media_problem("media_type and total_bytes are required (jpeg, png, gif, webp or mp4)")
    limit = 512 * 1024 * 1024 if mime == "video/mp4" else 5 * 1024 * 1024
    if total > limit:
        return _media_problem(f"File size exceeds {limit} bytes.")
    media_id = str(1_880_000_000_000_000_000 + int(_store().new_id()[-12:]))
    kind = "13" if mime == "video/mp4" else "3"
    media = {
        "id": media_id,
        "media_key": f"{kind}_{media_id}",
        "user_id": user["id"],
        "mime": mime,
        "total": total,
        "category": str(params.get("media_category") or ""),
        "chunks": {},
        "finalized": False,
        "ready_at": 0,
    }
    _store().put("media", media_id, media)
    return json_response({"data": {"id": media_id, "media_key": media["media_key"], "expires_after_secs": 86400}})


def _own_media(request: HttpRequest, media_id: str) -> tuple[dict[str, Any] | None, HttpResponse | None]:
    user = _user(request)
    if user is None:
        return None, _unauthorized()
    media = _store().get("media", media_id)
    if media is None or media["user_id"] != user["id"]:
        return None, _media_problem(f"Invalid media_id: {media_id}")
    return media, None


@simulator_view(SLUG)
def media_append(request: HttpRequest, media_id: str) -> HttpResponse:
    media, failure = _own_media(request, media_id)
    if failure:
        return failure
    assert media is not None
    chunk = request.FILES.get("media")
    segment = request.POST.get("segment_index", "")
    if chunk is None or not segment.isdigit() or media["finalized"]:
        return _media_problem("segment_index and media are required before FINALIZE")
    data = chunk.read()
    key = _store()._key("chunk", media_id, segment)
    _store().redis.set(key, data, ex=86400)
    media["chunks"][segment] = len(data)
    _store().put("media", media_id, media)
    return json_response({"data": {"expires_at": int(time.time()) + 86400}})


def _media_bytes(media_id: str, media: dict[str, Any]) -> bytes:
    """The uploaded file, its chunks in order (what FINALIZE hands to media processing)."""
    chunks = (_store().redis.get(_store()._key("chunk", media_id, index)) for index in sorted(media["chunks"], key=int))
    return b"".join(c if isinstance(c, bytes) else str(c or "").encode() for c in chunks)


@simulator_view(SLUG)
def media_finalize(request: HttpRequest, media_id: str) -> HttpResponse:
    media, failure = _own_media(request, media_id)
    if failure:
        return failure
    assert media is not None
    size = sum(media["chunks"].values())
    if size != media["total"]:
        return _media_problem(f"File size mismatch: received {size} of {media['total']} bytes.")
    first = _store().redis.get(_store()._key("chunk", media_id, "0")) or b""
    if not media["mime"].startswith(
        sniff_mime(first if isinstance(first, bytes) else str(first).encode()).split("/")[0]
    ):
        return _media_problem("Unsupported media: the bytes do not match media_type.")
    uploaded = _media_bytes(media_id, media)
    media_checks.log_received(request, [media_checks.received(uploaded)])
    if (problem := media_checks.refusal(Platform.TWITTER, "FEED", uploaded)) is not None:
        return _media_problem(f"InvalidMedia: {problem}")
    video = media["mime"] == "video/mp4"
    media.update(finalized=True, ready_at=time.time() + (VIDEO_READY_AFTER if video else 0))
    _store().put("media", media_id, media)
    data: dict[str, Any] = {"id": media_id, "media_key": media["media_key"], "size": size, "expires_after_secs": 86400}
    if video:
        data["processing_info"] = {"state": "pending", "check_after_secs": 1}
    return json_response({"data": data})


@simulator_view(SLUG)
def media_status(request: HttpRequest) -> HttpResponse:
    if request.GET.get("command") != "STATUS":
        return _media_problem("command must be STATUS")
    media, failure = _own_media(request, str(request.GET.get("media_id") or ""))
    if failure:
        return failure
    assert media is not None
    data: dict[str, Any] = {"id": media["id"], "media_key": media["media_key"]}
    if media["ready_at"] > time.time():
        data["processing_info"] = {"state": "in_progress", "check_after_secs": 1, "progress_percent": 50}
    else:
        data["processing_info"] = {"state": "succeeded", "progress_percent": 100}
    return json_response({"data": data})


def tweet_page(request: HttpRequest, username: str, tweet_id: str) -> HttpResponse:
    """The tweet's page on x.com, as its link opens it."""
    owner = _store().get("tweet_owner", tweet_id)
    user = _store().get("user", owner["user_id"]) if owner else None
    tweet = _store().get(f"tweets:{owner['user_id']}", tweet_id) if owner else None
    if user is None or tweet is None:
        return pages.not_found_page("X")
    return pages.post_page(
        platform="X",
        author=user["name"],
        handle=f"@{user['username']}",
        text=tweet["text"],
        avatar=pages.avatar_url(SLUG, user["id"]),
    )


urlpatterns = [
    *pages.urlpatterns,
    path("<str:username>/status/<str:tweet_id>", tweet_page),
    path("i/oauth2/authorize", authorize),
    path("2/oauth2/token", token),
    path("2/users/me", users_me),
    path("2/users/<str:user_id>/tweets", user_tweets),
    path("2/oauth2/revoke", revoke),
    path("2/tweets", tweets),
    path("2/tweets/<str:tweet_id>", tweet_detail),
    path("2/media/upload/initialize", media_initialize),
    path("2/media/upload/<str:media_id>/append", media_append),
    path("2/media/upload/<str:media_id>/finalize", media_finalize),
    path("2/media/upload", media_status),
]


# --- armed faults (platforms.sandbox.faults) ---------------------------------------------------


def _too_many_requests(*, daily: bool) -> HttpResponse:
    now = int(time.time())
    headers = {"x-rate-limit-limit": "100", "x-rate-limit-remaining": "0", "x-rate-limit-reset": str(now + 60)}
    if daily:  # the 24-hour posting cap of the user, with its own reset
        headers.update(
            {
                "x-user-limit-24hour-limit": "17",
                "x-user-limit-24hour-remaining": "0",
                "x-user-limit-24hour-reset": str(now + 86400),
            }
        )
    body = {"title": "Too Many Requests", "detail": "Too Many Requests", "type": "about:blank", "status": 429}
    return json_response(body, status=429, headers=headers)


FAULTS = {
    "rate_limited": lambda request: _too_many_requests(daily=False),
    "quota_exhausted": lambda request: _too_many_requests(daily=True),
    "server_error": lambda request: _problem(503, "Service Unavailable", "Service Unavailable"),
}
