"""Simulator of the X API v2: OAuth 2.0 with PKCE (authorize auto-approves and creates a user;
the token endpoint checks the verifier and rotates refresh tokens), users/me, the chunked v2 media
upload with video processing, POST /2/tweets (duplicate content refused), the user's timeline and
tweet lookup with metrics that grow (``reply_count``: the replies the conversation shows),
problem-details errors and the x-rate-limit headers.

Engagement: the audience (:mod:`platforms.sandbox.audience`) replies in the conversation of each
of the user's posts. Its replies are tweets with numeric ids that carry the post and the reply's
key; recent search with ``conversation_id:<post>`` lists them (newest first, ``next_token`` pages,
``start_time``), ``PUT /2/tweets/:id/hidden`` hides one, ``POST /2/users/:id/likes`` likes one, and
a reply the user posts there (``reply.in_reply_to_tweet_id``) joins the conversation. A user
deletes only their own tweets (403 for the audience's)."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import re
import secrets
import time
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import path

from platforms.base import Platform
from platforms.capabilities import text_length
from platforms.sandbox import audience, audience_ids, media_checks, pages
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


def _reply_counts(tweets: list[dict[str, Any]]) -> dict[str, int]:
    """``public_metrics.reply_count`` of each tweet, by id: the replies to that very tweet in its
    conversation, as recent search lists them (a reply to a reply counts under its own parent, not
    the post; a hidden reply still counts, as it is still a reply); every conversation's read in
    the same three store reads."""
    roots = {t["id"]: t for t in tweets if (t.get("conversation_id") or t["id"]) == t["id"]}
    for tweet in tweets:
        root_id = tweet.get("conversation_id") or tweet["id"]
        if root_id not in roots and (root := _root_tweet(root_id)) is not None:
            roots[root_id] = root
    shown = audience.threads(_store(), SLUG, [(r["id"], r["created"]) for r in roots.values()])
    counts: dict[str, int] = {}
    for tweet in tweets:
        root_id = tweet.get("conversation_id") or tweet["id"]
        if root_id == tweet["id"]:
            counts[tweet["id"]] = audience.comment_count(shown[root_id], direct_only=True)
        else:
            mine = audience.comment_id(root_id, audience_ids.own_key(tweet["id"]))
            counts[tweet["id"]] = next((c["replyCount"] for c in shown.get(root_id, []) if c["id"] == mine), 0)
    return counts


def _tweet_json(tweet: dict[str, Any], fields: set[str], owner: bool, replies: int | None = None) -> dict[str, Any]:
    """A tweet of the store with ``fields``; ``replies`` its reply count when already counted."""
    data: dict[str, Any] = {"id": tweet["id"], "text": tweet["text"], "edit_history_tweet_ids": [tweet["id"]]}
    if "created_at" in fields:
        data["created_at"] = iso(tweet["created"], millis=True)
    if "author_id" in fields:
        data["author_id"] = tweet["author_id"]
    if "conversation_id" in fields:
        data["conversation_id"] = tweet.get("conversation_id") or tweet["id"]
    impressions = grown(tweet["created"], 30)
    if "public_metrics" in fields:
        data["public_metrics"] = {
            "retweet_count": grown(tweet["created"], 0.5),
            "reply_count": _reply_counts([tweet])[tweet["id"]] if replies is None else replies,
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
        counts = _reply_counts(page) if "public_metrics" in fields else {}
        body["data"] = [_tweet_json(t, fields, viewer["id"] == user_id, counts.get(t["id"])) for t in page]
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
    tweets = {i: t for i in ids if (t := _find_tweet(i)) is not None}
    counts = _reply_counts(list(tweets.values())) if "public_metrics" in fields else {}
    data: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    for tweet_id in ids:
        found: dict[str, Any] | None
        if tweet_id in tweets:
            tweet = tweets[tweet_id]
            found = _tweet_json(tweet, fields, tweet["author_id"] == viewer["id"], counts.get(tweet_id))
        else:
            found = _any_tweet_json(tweet_id, fields, viewer)
        if found is None:
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
            data.append(found)
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
        if _find_tweet(parent_id) is None and _conversation_comment(parent_id) is None:
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
        tweet["conversation_id"] = _join_conversation(user, tweet_id, parent_id, text)
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
        if tweet is None and _conversation_comment(tweet_id) is not None:
            return _problem(403, "Forbidden", "You are not allowed to delete a Tweet you did not create.")
        if tweet is None:
            return json_response({"errors": [_not_found(tweet_id)]}, status=404, headers=headers)
        if tweet["author_id"] != user["id"]:
            return _problem(403, "Forbidden", "You are not allowed to delete a Tweet you did not create.")
        _leave_conversation(tweet)
        _store().delete(f"tweets:{user['id']}", tweet_id)
        _store().delete("tweet_owner", tweet_id)
        return json_response({"data": {"deleted": True}}, headers=headers)
    data = _any_tweet_json(tweet_id, _fields(request), user)
    if data is None:
        return json_response({"errors": [_not_found(tweet_id)]}, headers=_limits(user["id"], "tweets_lookup", 900))
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
    """The tweet's page on x.com, as its link opens it (a reply of the audience's too)."""
    owner = _store().get("tweet_owner", tweet_id)
    user = _store().get("user", owner["user_id"]) if owner else None
    tweet = _store().get(f"tweets:{owner['user_id']}", tweet_id) if owner else None
    if user is None or tweet is None:
        found = _conversation_comment(tweet_id)
        if found is None:
            return pages.not_found_page("X")
        author = found[1]["author"]
        return pages.post_page(
            platform="X",
            author=author["name"],
            handle=f"@{author['handle']}",
            text=found[1]["text"],
            avatar=author["avatar_url"],
        )
    return pages.post_page(
        platform="X",
        author=user["name"],
        handle=f"@{user['username']}",
        text=tweet["text"],
        avatar=pages.avatar_url(SLUG, user["id"]),
    )


# --- the audience: replies in the conversations of the user's posts ------------------------------

POST_IDS = 1_900_000_000_000_000_000  # where the ids of tweets created here start
COMMENT_IDS = 1_800_000_000_000_000_000  # the audience's replies: below, carrying post and key
KEY_SPAN = 10**audience_ids.KEY_DIGITS
SEARCH_DAYS = 7
SEARCH_WINDOW = 180  # recent search, per user and 15 minutes
_INVALID = "https://api.twitter.com/2/problems/invalid-request"


def comment_tweet_id(comment: dict[str, Any]) -> str:
    """The tweet id of a reply in a conversation (an audience document of
    :func:`platforms.sandbox.audience.thread`): the user's own reply keeps its tweet's id; the
    audience's is a number that carries its post and key."""
    post_id, key = audience.split_id(comment["id"])
    own = audience_ids.own_platform_id(key)
    if own is not None:
        return own
    number = audience_ids.key_number(key)
    assert number is not None, key
    return str(COMMENT_IDS + (int(post_id) - POST_IDS) * KEY_SPAN + number)


def platform_comment_id(neutral: str, parent: str = "") -> str:
    """The id this simulator gives the audience comment ``neutral`` (an id of
    :mod:`platforms.sandbox.audience`; ``parent`` its parent's, "" for one under the post), so a
    test predicts the ids a sync must find."""
    return comment_tweet_id({"id": neutral})


def _audience_id(tweet_id: str) -> str | None:
    """The audience document id a tweet id names (None: not a reply in one of the conversations)."""
    if not tweet_id.isdigit():
        return None
    offset = int(tweet_id) - COMMENT_IDS
    if 0 <= offset < POST_IDS - COMMENT_IDS:
        key = audience_ids.key_of_number(offset % KEY_SPAN)
        return audience.comment_id(str(POST_IDS + offset // KEY_SPAN), key) if key else None
    tweet = _find_tweet(tweet_id)
    root = tweet.get("conversation_id") if tweet else None
    return audience.comment_id(root, audience_ids.own_key(tweet_id)) if root and root != tweet_id else None


def _root_tweet(post_id: str) -> dict[str, Any] | None:
    """A post that starts a conversation (not itself a reply)."""
    tweet = _find_tweet(post_id)
    return tweet if tweet is not None and not tweet.get("in_reply_to_tweet_id") else None


def _conversation_comment(tweet_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(the post, the reply as the conversation shows it now) for a reply in one of the
    conversations; None when there is no such reply (never written, not yet, or deleted)."""
    comment_id = _audience_id(tweet_id)
    root = _root_tweet(audience.split_id(comment_id)[0]) if comment_id else None
    if comment_id is None or root is None:
        return None
    found = audience.find(_store(), SLUG, comment_id, root["created"])
    return (root, found) if found is not None else None


def _join_conversation(user: dict[str, Any], tweet_id: str, parent_id: str, text: str) -> str:
    """Record the user's new reply to ``parent_id`` in its conversation; the conversation's id."""
    parent_comment = _audience_id(parent_id)
    if parent_comment is not None:
        root_id, parent_doc = audience.split_id(parent_comment)[0], parent_comment
    else:
        parent = _find_tweet(parent_id) or {}
        root_id, parent_doc = str(parent.get("conversation_id") or parent_id), ""
    if _root_tweet(root_id) is None:
        return root_id
    me = audience.Person(user["id"], user["name"], user["username"], pages.avatar_url(SLUG, user["id"]))
    audience.add_reply(
        _store(),
        root_id,
        parent_doc,
        text,
        author=me,
        reply_id=audience.comment_id(root_id, audience_ids.own_key(tweet_id)),
    )
    return root_id


def _leave_conversation(tweet: dict[str, Any]) -> None:
    """A deleted reply of the user's leaves its conversation (and the replies under it)."""
    root = tweet.get("conversation_id")
    if root and root != tweet["id"]:
        audience.set_state(_store(), audience.comment_id(root, audience_ids.own_key(tweet["id"])), deleted=True)


def _comment_json(
    root: dict[str, Any], comment: dict[str, Any], shown: dict[str, dict[str, Any]], fields: set[str]
) -> dict[str, Any]:
    tweet_id = comment_tweet_id(comment)
    parent = shown.get(comment["parentId"])
    data: dict[str, Any] = {"id": tweet_id, "text": comment["text"], "edit_history_tweet_ids": [tweet_id]}
    if "author_id" in fields:
        data["author_id"] = comment["author"]["id"]
    if "conversation_id" in fields:
        data["conversation_id"] = root["id"]
    if "created_at" in fields:
        data["created_at"] = iso(comment["createdAt"], millis=True)
    if "in_reply_to_user_id" in fields:
        data["in_reply_to_user_id"] = parent["author"]["id"] if parent else root["author_id"]
    if "referenced_tweets" in fields:
        data["referenced_tweets"] = [{"type": "replied_to", "id": comment_tweet_id(parent) if parent else root["id"]}]
    if "public_metrics" in fields:
        data["public_metrics"] = {
            "retweet_count": 0,
            "reply_count": comment["replyCount"],
            "like_count": comment["likeCount"],
            "quote_count": 0,
            "bookmark_count": 0,
            "impression_count": 10 * (comment["likeCount"] + comment["replyCount"] + 1),
        }
    return data


def _user_json(person: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": person["id"],
        "name": person["name"],
        "username": person["handle"],
        "profile_image_url": person["avatar_url"],
    }


def _any_tweet_json(tweet_id: str, fields: set[str], viewer: dict[str, Any]) -> dict[str, Any] | None:
    """A tweet of the store or a reply of the audience, as lookups render them (None: neither)."""
    tweet = _find_tweet(tweet_id)
    if tweet is not None:
        return _tweet_json(tweet, fields, tweet["author_id"] == viewer["id"])
    found = _conversation_comment(tweet_id)
    if found is None:
        return None
    root, comment = found
    shown = {c["id"]: c for c in audience.thread(_store(), SLUG, root["id"], root["created"])}
    return _comment_json(root, comment, shown, fields)


def _search_problem(detail: str) -> HttpResponse:
    return _problem(
        400,
        "Invalid Request",
        "One or more parameters to your request was invalid.",
        _INVALID,
        errors=[{"message": detail}],
    )


@simulator_view(SLUG)
def search_recent(request: HttpRequest) -> HttpResponse:
    """``GET /2/tweets/search/recent``: the sandbox knows the ``conversation_id:<id>`` query only
    (another query finds nothing): the post and every reply in its conversation from the last
    seven days, newest first, ``start_time`` inclusive, ``max_results`` 10 to 100, ``next_token``
    for the next page, the authors under ``includes.users`` with ``expansions=author_id``."""
    viewer = _user(request)
    if viewer is None:
        return _unauthorized()
    query = str(request.GET.get("query") or "").strip()
    if not query:
        return _search_problem("The `query` query parameter can not be empty")
    try:
        limit = int(request.GET.get("max_results") or 10)
        offset = int(str(request.GET.get("next_token") or "0"), 16)
    except ValueError:
        return _search_problem("The `max_results` and `next_token` query parameters must be valid")
    if not 10 <= limit <= 100:
        return _search_problem(f"The `max_results` query parameter value [{limit}] is not between 10 and 100")
    now = time.time()
    oldest = now - SEARCH_DAYS * 86400
    start = request.GET.get("start_time")
    if start:
        try:
            start_at = dt.datetime.fromisoformat(start.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return _search_problem(f"Invalid 'start_time':'{start}'.")
        if start_at < oldest:
            floor = iso(oldest)
            return _search_problem(f"Invalid 'start_time':'{start}'. 'start_time' must be on or after {floor}")
        oldest = start_at
    found: list[dict[str, Any]] = []
    users: dict[str, dict[str, Any]] = {}
    fields = _fields(request)
    match = re.fullmatch(r"conversation_id:(\d+)", query)
    root = _root_tweet(match.group(1)) if match else None
    if root is not None:
        shown = {c["id"]: c for c in audience.thread(_store(), SLUG, root["id"], root["created"])}
        replies = [c for c in shown.values() if c["createdAt"] >= oldest]
        owner = _store().get("user", root["author_id"]) or {}
        entries = [(c["createdAt"], _comment_json(root, c, shown, fields)) for c in replies]
        if root["created"] >= oldest:
            direct = audience.comment_count(list(shown.values()), direct_only=True)
            entries.append((root["created"], _tweet_json(root, fields, owner.get("id") == viewer["id"], direct)))
        for comment in replies:
            users[comment["author"]["id"]] = _user_json(comment["author"])
        if owner:
            users[owner["id"]] = {
                "id": owner["id"],
                "name": owner["name"],
                "username": owner["username"],
                "profile_image_url": pages.avatar_url(SLUG, owner["id"]),
            }
        found = [data for _, data in sorted(entries, key=lambda e: (e[0], int(e[1]["id"])), reverse=True)]
    size = audience_ids.page_size(limit)
    page = found[offset : offset + size]
    body: dict[str, Any] = {"meta": {"result_count": len(page)}}
    if page:
        body["data"] = page
        body["meta"].update(newest_id=page[0]["id"], oldest_id=page[-1]["id"])
        if "author_id" in (request.GET.get("expansions") or "").split(","):
            authors = {t.get("author_id") for t in page}
            body["includes"] = {"users": [u for uid, u in users.items() if uid in authors]}
    if offset + size < len(found):
        body["meta"]["next_token"] = f"{offset + size:x}"
    return json_response(body, headers=_limits(viewer["id"], "search_recent", SEARCH_WINDOW))


@simulator_view(SLUG)
def hide_reply(request: HttpRequest, tweet_id: str) -> HttpResponse:
    """``PUT /2/tweets/:id/hidden`` ``{"hidden": true|false}``: a reply in a conversation the user
    started is hidden (or shown again); setting the state it has succeeds as well."""
    user = _user(request)
    if user is None:
        return _unauthorized()
    if request.method != "PUT":
        return _problem(405, "Method Not Allowed", "PUT is the only method of this endpoint.")
    hidden = request_params(request).get("hidden")
    request.sandbox_log = {"hide": hidden, "remoteId": tweet_id}  # type: ignore[attr-defined]
    if not isinstance(hidden, bool):
        return _search_problem("The `hidden` field is required and must be a boolean")
    found = _conversation_comment(tweet_id)
    if found is None:
        if _find_tweet(tweet_id) is not None:
            return _problem(403, "Forbidden", "You can only hide or unhide replies to conversations you authored.")
        return json_response({"errors": [_not_found(tweet_id)]}, status=404)
    root, comment = found
    if root["author_id"] != user["id"]:
        return _problem(403, "Forbidden", "You can only hide or unhide replies to conversations you authored.")
    audience.set_state(_store(), comment["id"], hidden=hidden)
    return json_response({"data": {"hidden": hidden}}, headers=_limits(user["id"], "hide_reply", 50))


@simulator_view(SLUG)
def user_likes(request: HttpRequest, user_id: str) -> HttpResponse:
    """``POST /2/users/:id/likes`` ``{"tweet_id"}``: the user likes a tweet (again: still liked)."""
    user = _user(request)
    if user is None:
        return _unauthorized()
    if request.method != "POST":
        return _problem(405, "Method Not Allowed", "POST is the only method of this endpoint.")
    tweet_id = request_params(request).get("tweet_id")
    request.sandbox_log = {"like": True, "remoteId": tweet_id}  # type: ignore[attr-defined]
    if user_id != user["id"]:
        return _problem(403, "Forbidden", "You are not permitted to perform this action.")
    if not isinstance(tweet_id, str) or not tweet_id:
        return _search_problem("The `tweet_id` field is required")
    found = _conversation_comment(tweet_id)
    if found is not None:
        audience.set_state(_store(), found[1]["id"], liked=True)
    elif _find_tweet(tweet_id) is None:
        return json_response({"errors": [_not_found(tweet_id)]}, status=404)
    return json_response({"data": {"liked": True}}, headers=_limits(user["id"], "likes", 50))


urlpatterns = [
    *pages.urlpatterns,
    path("<str:username>/status/<str:tweet_id>", tweet_page),
    path("i/oauth2/authorize", authorize),
    path("2/oauth2/token", token),
    path("2/users/me", users_me),
    path("2/users/<str:user_id>/tweets", user_tweets),
    path("2/oauth2/revoke", revoke),
    path("2/tweets", tweets),
    path("2/tweets/search/recent", search_recent),
    path("2/tweets/<str:tweet_id>", tweet_detail),
    path("2/tweets/<str:tweet_id>/hidden", hide_reply),
    path("2/users/<str:user_id>/likes", user_likes),
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
