"""Simulator of a Mastodon server's REST API: app registration, OAuth (authorize auto-approves and
creates a new user), instance info, verify_credentials, media v2 with background processing,
statuses with ``Idempotency-Key``, editing (``PUT``: the whole status is replaced, every version
kept for ``/history``, ``edited_at`` set; ``/source`` gives the plain text) and deleting them,
token revocation, the account's statuses, error bodies ``{"error": ...}`` and the
``X-RateLimit-*`` headers. Paths are the real ones under ``/sandbox/mastodon/``.

Engagement: the audience (:mod:`platforms.sandbox.audience`) replies to each of the account's
statuses from accounts of other servers, as statuses whose ids carry the post and the reply's key;
``GET /api/v1/statuses/:id/context`` lists them (``descendants``, depth first), a status of the
account's in reply to one of them joins the thread, ``POST /api/v1/statuses/:id/favourite``
favourites one, and only the account's own statuses can be deleted (404 for another's, as
Mastodon answers)."""

from __future__ import annotations

import datetime as dt
import functools
import html
import io
import secrets
import time
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import path
from PIL import Image

from platforms.base import Platform
from platforms.sandbox import audience, audience_ids, media_checks, pages
from platforms.sandbox.common import bearer_token, grown, iso, json_response, request_params, sniff_mime
from platforms.sandbox.scenarios import marker
from platforms.sandbox.store import SandboxStore
from platforms.sandbox.views import simulator_view

SLUG = "mastodon"
RATE_LIMIT = 300
RATE_WINDOW = 300
VIDEO_READY_AFTER = 1.5  # seconds of "processing" for a video before GET /api/v1/media/:id says 200
MAX_IMAGE_BYTES = 16 * 1024 * 1024
MAX_VIDEO_BYTES = 99 * 1024 * 1024


def _store() -> SandboxStore:
    return SandboxStore(SLUG)


def _base(request: HttpRequest) -> str:
    return request.build_absolute_uri(f"/sandbox/{SLUG}").rstrip("/")


def _public_base() -> str:
    """Where a person opens what the simulator links to (avatars, headers): the service's public
    address, not the one its workers reach the simulator at."""
    return f"{settings.PUBLIC_BASE_URL}/sandbox/{SLUG}"


@functools.cache
def _picture(size: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (99, 100, 255)).save(out, format="PNG")
    return out.getvalue()


def default_avatar(request: HttpRequest) -> HttpResponse:
    return HttpResponse(_picture((400, 400)), content_type="image/png")


def default_header(request: HttpRequest) -> HttpResponse:
    return HttpResponse(_picture((1500, 500)), content_type="image/png")


def _error(message: str, status: int, headers: dict[str, str] | None = None) -> HttpResponse:
    return json_response({"error": message}, status=status, headers=headers)


def _rate_headers(token: str) -> dict[str, str]:
    store = _store()
    window = int(time.time()) // RATE_WINDOW
    key = store._key("ratelimit", token[-12:], str(window))
    used = int(store.redis.incr(key))
    store.redis.expire(key, RATE_WINDOW)
    reset = dt.datetime.fromtimestamp((window + 1) * RATE_WINDOW, dt.UTC)
    return {
        "X-RateLimit-Limit": str(RATE_LIMIT),
        "X-RateLimit-Remaining": str(max(RATE_LIMIT - used, 0)),
        "X-RateLimit-Reset": reset.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
    }


def _authenticate(request: HttpRequest) -> tuple[dict[str, Any] | None, HttpResponse | None, dict[str, str]]:
    token = bearer_token(request)
    payload = _store().token(token) if token else None
    if payload is None or payload.get("kind") != "access":
        return None, _error("The access token is invalid", 401), {}
    account = _store().get("account", payload["account_id"])
    if account is None or _store().is_revoked(account["id"]):
        return None, _error("The access token was revoked", 401), {}
    return account, None, _rate_headers(token)


def _account_json(request: HttpRequest, account: dict[str, Any], *, with_source: bool = False) -> dict[str, Any]:
    base = _base(request)
    doc = {
        "id": account["id"],
        "username": account["username"],
        "acct": account["username"],
        "display_name": account["display_name"],
        "locked": False,
        "bot": False,
        "discoverable": True,
        "group": False,
        "created_at": iso(account["created"], millis=True),
        "note": "<p>Simulated account</p>",
        "url": f"{_public_base()}/@{account['username']}",
        "uri": f"{base}/users/{account['username']}",
        "avatar": f"{_public_base()}/avatars/original/missing.png",
        "avatar_static": f"{_public_base()}/avatars/original/missing.png",
        "header": f"{_public_base()}/headers/original/missing.png",
        "header_static": f"{_public_base()}/headers/original/missing.png",
        "followers_count": grown(account["created"], 2, base=account["followers"]),
        "following_count": 12,
        "statuses_count": _store().count(f"statuses:{account['id']}"),
        "last_status_at": None,
        "emojis": [],
        "fields": [],
    }
    if with_source:
        doc["source"] = {
            "privacy": "public",
            "sensitive": False,
            "language": "en",
            "note": "",
            "fields": [],
            "follow_requests_count": 0,
        }
    return doc


# --- instance and apps -----------------------------------------------------------------


@simulator_view(SLUG)
def instance_v1(request: HttpRequest) -> HttpResponse:
    host = request.get_host()
    return json_response(
        {
            "uri": host,
            "title": "Crosspost sandbox",
            "short_description": "A simulated Mastodon server",
            "description": "A simulated Mastodon server",
            "email": "admin@example.invalid",
            "version": "4.3.0",
            "urls": {"streaming_api": f"ws://{host}"},
            "stats": {"user_count": _store().count("account"), "status_count": 0, "domain_count": 1},
            "languages": ["en"],
            "registrations": False,
            "approval_required": False,
            "invites_enabled": False,
            "configuration": _configuration(),
            "contact_account": None,
            "rules": [],
        }
    )


def _configuration() -> dict[str, Any]:
    return {
        "statuses": {"max_characters": 500, "max_media_attachments": 4, "characters_reserved_per_url": 23},
        "media_attachments": {
            "supported_mime_types": ["image/jpeg", "image/png", "image/gif", "image/webp", "video/mp4"],
            "image_size_limit": MAX_IMAGE_BYTES,
            "video_size_limit": MAX_VIDEO_BYTES,
        },
    }


@simulator_view(SLUG)
def instance_v2(request: HttpRequest) -> HttpResponse:
    host = request.get_host()
    return json_response(
        {
            "domain": host,
            "title": "Crosspost sandbox",
            "version": "4.3.0",
            "source_url": "https://github.com/mastodon/mastodon",
            "description": "A simulated Mastodon server",
            "usage": {"users": {"active_month": _store().count("account")}},
            "languages": ["en"],
            "configuration": {"urls": {"streaming": f"ws://{host}"}, **_configuration()},
            "registrations": {"enabled": False, "approval_required": False, "message": None},
            "api_versions": {"mastodon": 2},
            "contact": {"email": "admin@example.invalid", "account": None},
            "rules": [],
        }
    )


@simulator_view(SLUG)
def apps(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _error("Method not allowed", 405)
    params = request_params(request)
    name = str(params.get("client_name") or "").strip()
    redirect_uris = str(params.get("redirect_uris") or "").strip()
    if not name or not redirect_uris:
        return json_response({"error": "Validation failed: Name can't be blank, Redirect URI can't be blank"}, 422)
    client_id = secrets.token_urlsafe(32)
    app = {
        "id": _store().new_id(),
        "name": name,
        "website": params.get("website") or None,
        "scopes": str(params.get("scopes") or "read").split(),
        "redirect_uris": redirect_uris.split(),
        "redirect_uri": redirect_uris,
        "client_id": client_id,
        "client_secret": secrets.token_urlsafe(32),
        "vapid_key": "",
    }
    _store().put("app", client_id, app)
    return json_response(app)


def _app_known(client_id: str, client_secret: str | None = None) -> bool:
    app = _store().get("app", client_id)
    if app is None:
        # the service's own app, registered out of band (registry's sandbox default)
        return client_id.startswith("sandbox-")
    return client_secret is None or app["client_secret"] == client_secret


# --- OAuth -------------------------------------------------------------------------------


@simulator_view(SLUG)
def authorize(request: HttpRequest) -> HttpResponse:
    client_id = request.GET.get("client_id", "")
    redirect_uri = request.GET.get("redirect_uri", "")
    if request.GET.get("response_type") != "code" or not redirect_uri or not _app_known(client_id):
        return _error("Client authentication failed due to unknown client, or unsupported authentication method.", 401)
    store = _store()
    account_id = store.new_id()
    number = account_id[-6:]
    store.put(
        "account",
        account_id,
        {
            "id": account_id,
            "username": f"sandbox_user{number}",
            "display_name": f"Sandbox User {number}",
            "created": time.time(),
            "followers": 40 + int(number) % 50,
        },
    )
    code = secrets.token_urlsafe(24)
    store.put(
        "code",
        code,
        {
            "account_id": account_id,
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "scope": request.GET.get("scope"),
        },
    )
    query = {"code": code}
    if "state" in request.GET:
        query["state"] = request.GET["state"]
    separator = "&" if "?" in redirect_uri else "?"
    return HttpResponseRedirect(f"{redirect_uri}{separator}{urlencode(query)}")


@simulator_view(SLUG)
def token(request: HttpRequest) -> HttpResponse:
    params = request_params(request)
    client_id = str(params.get("client_id") or "")
    if not _app_known(client_id, str(params.get("client_secret") or "")):
        return json_response(
            {"error": "invalid_client", "error_description": "Client authentication failed due to unknown client."}, 401
        )
    grant = params.get("grant_type")
    store = _store()
    if grant == "authorization_code":
        code_doc = store.get("code", str(params.get("code") or ""))
        if code_doc is None or code_doc["redirect_uri"] != params.get("redirect_uri"):
            return json_response(
                {
                    "error": "invalid_grant",
                    "error_description": "The provided authorization grant is invalid, expired, revoked, does not "
                    "match the redirection URI used in the authorization request, or was issued to another client.",
                },
                400,
            )
        store.delete("code", str(params["code"]))
        account_id = code_doc["account_id"]
        scope = str(code_doc.get("scope") or params.get("scope") or "read")
    elif grant == "client_credentials":
        account_id, scope = "", str(params.get("scope") or "read")
    else:
        return json_response({"error": "unsupported_grant_type"}, 400)
    access = store.issue_token(account_id, kind="access" if account_id else "app")
    return json_response(
        {"access_token": access, "token_type": "Bearer", "scope": scope, "created_at": int(time.time())}
    )


@simulator_view(SLUG)
def oauth_metadata(request: HttpRequest) -> HttpResponse:
    # servers before 4.3 do not publish RFC 8414 metadata; clients fall back to /oauth/token
    return _error("Not Found", 404)


# --- accounts ----------------------------------------------------------------------------


@simulator_view(SLUG)
def verify_credentials(request: HttpRequest) -> HttpResponse:
    account, failure, headers = _authenticate(request)
    if failure:
        return failure
    assert account is not None
    return json_response(_account_json(request, account, with_source=True), headers=headers)


@simulator_view(SLUG)
def account_statuses(request: HttpRequest, account_id: str) -> HttpResponse:
    _account, failure, headers = _authenticate(request)
    if failure:
        return failure
    owner = _store().get("account", account_id)
    if owner is None:
        return _error("Record not found", 404)
    try:
        limit = min(max(int(request.GET.get("limit", 20)), 1), 40)
    except ValueError:
        limit = 20
    statuses = sorted(_store().all(f"statuses:{account_id}"), key=lambda s: int(s["id"]), reverse=True)
    if "max_id" in request.GET:
        statuses = [s for s in statuses if int(s["id"]) < int(request.GET["max_id"] or 0)]
    if "since_id" in request.GET:
        statuses = [s for s in statuses if int(s["id"]) > int(request.GET["since_id"] or 0)]
    page = statuses[:limit]
    if len(statuses) > limit:
        next_url = f"{_base(request)}/api/v1/accounts/{account_id}/statuses?limit={limit}&max_id={page[-1]['id']}"
        headers["Link"] = f'<{next_url}>; rel="next"'
    return json_response([_status_json(request, s, owner) for s in page], headers=headers)


# --- media -------------------------------------------------------------------------------


def _media_json(request: HttpRequest, media: dict[str, Any]) -> dict[str, Any]:
    base = _base(request)
    ready = media["ready_at"] <= time.time()
    extension = {"image/png": "png", "video/mp4": "mp4", "image/gif": "gif"}.get(media["mime"], "jpg")
    original = f"{base}/system/media_attachments/files/{media['id']}/original/upload.{extension}"
    return {
        "id": media["id"],
        "type": media["type"],
        "url": original if ready else None,
        "preview_url": f"{base}/system/media_attachments/files/{media['id']}/small/upload.jpg",
        "remote_url": None,
        "text_url": None,
        "meta": {"original": {"size": str(media["size"])}} if ready else {},
        "description": media["description"],
        "blurhash": "UFBWY:8_0Jxv4mx]t8t64.%M-;xuWBRjM{of",
    }


@simulator_view(SLUG)
def media_create(request: HttpRequest) -> HttpResponse:
    account, failure, headers = _authenticate(request)
    if failure:
        return failure
    assert account is not None
    upload = request.FILES.get("file")
    if upload is None:
        return _error("Validation failed: File can't be blank", 422, headers)
    data = upload.read()
    mime = sniff_mime(data)
    if mime.startswith("image/"):
        kind, limit, delay = "image", MAX_IMAGE_BYTES, 0.0
    elif mime == "video/mp4":
        kind, limit, delay = "video", MAX_VIDEO_BYTES, VIDEO_READY_AFTER
    else:
        return _error(f"Validation failed: File content type is invalid ({upload.content_type})", 422, headers)
    if len(data) > limit:
        return _error("Validation failed: File file size must be less than the limit", 422, headers)
    if (problem := media_checks.refusal(Platform.MASTODON, "FEED", data)) is not None:
        return _error(f"Validation failed: {problem}", 422, headers)
    media_id = _store().new_id()
    media = {
        "id": media_id,
        "account_id": account["id"],
        "type": kind,
        "mime": mime,
        "size": len(data),
        "description": request_params(request).get("description") or None,
        "ready_at": time.time() + delay,
    }
    _store().put("media", media_id, media)
    v2 = "/api/v2/" in request.path
    status = 202 if v2 and delay else 200
    return json_response(_media_json(request, media), status=status, headers=headers)


@simulator_view(SLUG)
def media_detail(request: HttpRequest, media_id: str) -> HttpResponse:
    account, failure, headers = _authenticate(request)
    if failure:
        return failure
    assert account is not None
    media = _store().get("media", media_id)
    if media is None or media["account_id"] != account["id"]:
        return _error("Record not found", 404, headers)
    if request.method == "PUT":
        description = request_params(request).get("description")
        media = _store().update("media", media_id, description=description) or media
    body = _media_json(request, media)
    return json_response(body, status=200 if body["url"] else 206, headers=headers)


# --- statuses ----------------------------------------------------------------------------


def _html(text: str) -> str:
    return "".join(f"<p>{html.escape(p).replace(chr(10), '<br />')}</p>" for p in text.split("\n\n"))


def _status_json(request: HttpRequest, status: dict[str, Any], account: dict[str, Any]) -> dict[str, Any]:
    base = _base(request)
    paragraphs = _html(status["text"])
    media = [m for m in (_store().get("media", i) for i in status["media_ids"]) if m]
    return {
        "id": status["id"],
        "created_at": iso(status["created"], millis=True),
        "in_reply_to_id": status.get("in_reply_to_id"),
        "in_reply_to_account_id": account["id"] if status.get("in_reply_to_id") else None,
        "sensitive": status["sensitive"],
        "spoiler_text": status["spoiler_text"],
        "visibility": status["visibility"],
        "language": status["language"],
        "uri": f"{base}/users/{account['username']}/statuses/{status['id']}",
        "url": f"{_public_base()}/@{account['username']}/{status['id']}",
        "replies_count": _replies_count(account, status),
        "reblogs_count": grown(status["created"], 0.5),
        "favourites_count": grown(status["created"], 1.5),
        # present on authenticated reads, and every simulated read is authenticated
        "favourited": False,
        "reblogged": False,
        "muted": False,
        "bookmarked": False,
        "edited_at": iso(status["edited"], millis=True) if status.get("edited") else None,
        "content": paragraphs,
        "reblog": None,
        "application": {"name": "Crosspost", "website": None},
        "account": _account_json(request, account),
        "media_attachments": [_media_json(request, m) for m in media],
        "mentions": [],
        "tags": [],
        "emojis": [],
        "card": None,
        "poll": None,
    }


def _media_ids(params: dict[str, Any]) -> list[str]:
    raw = params.get("media_ids[]", params.get("media_ids", []))
    if isinstance(raw, (str, int)):
        raw = [raw]
    return [str(x) for x in raw] if isinstance(raw, list) else []


@simulator_view(SLUG)
def statuses(request: HttpRequest) -> HttpResponse:
    account, failure, headers = _authenticate(request)
    if failure:
        return failure
    assert account is not None
    params = request_params(request)
    text = str(params.get("status") or "")
    key = request.headers.get("Idempotency-Key", "")
    request.sandbox_log = {"publish": True, "marker": key or None, "text": text[:80]}  # type: ignore[attr-defined]
    scenario = marker(text)
    if scenario == "unauthorized":
        return _error("The access token is invalid", 401)
    if scenario == "flaky" and _store().first_time(f"flaky:{account['id']}:{key or text}"):
        return _error("Service Unavailable", 503)
    if scenario == "fail":
        return _error("Validation failed: Text contains content this server does not accept", 422, headers)
    media_ids = _media_ids(params)
    refused = _refused_content(text, media_ids, account, headers)
    if refused is not None:
        return refused
    parent_id = str(params.get("in_reply_to_id") or "")
    if parent_id:
        request.sandbox_log["inReplyTo"] = parent_id  # type: ignore[attr-defined]
        if _store().get(f"statuses:{account['id']}", parent_id) is None and _thread_reply(account, parent_id) is None:
            return _error("Record not found", 404, headers)
    status_id = _store().new_id()
    if key:
        claim, created = _store().create_once("idempotency", f"{account['id']}:{key}", {"status_id": status_id})
        if not created:
            existing = _wait_for_status(account["id"], claim["status_id"])
            request.sandbox_log.update({"remoteId": claim["status_id"], "repeat": True})  # type: ignore[attr-defined]
            if existing is None:
                return _error("Conflict: this Idempotency-Key is being processed", 409, headers)
            return json_response(_status_json(request, existing, account), headers=headers)
    status = {
        "id": status_id,
        "text": text,
        "media_ids": media_ids,
        "created": time.time(),
        "visibility": str(params.get("visibility") or "public"),
        "sensitive": str(params.get("sensitive", "")).lower() in {"true", "1"},
        "spoiler_text": str(params.get("spoiler_text") or ""),
        "language": str(params.get("language") or "en"),
        "in_reply_to_id": parent_id or None,
    }
    _store().put(f"statuses:{account['id']}", status_id, status)
    if parent_id:
        _join_thread(account, status)
    request.sandbox_log["remoteId"] = status_id  # type: ignore[attr-defined]
    return json_response(_status_json(request, status, account), headers=headers)


def _refused_content(
    text: str, media_ids: list[str], account: dict[str, Any], headers: dict[str, str]
) -> HttpResponse | None:
    """What the server refuses of a status's text and attachments, as creating and editing one
    both check them (PostStatusService, UpdateStatusService): a blank status without media, the
    character limit, more than 4 attachments, an attachment not the account's, one still being
    processed. None: accepted."""
    if not text.strip() and not media_ids:
        return _error("Validation failed: Text can't be blank", 422, headers)
    if len(text) > 500:
        return _error("Validation failed: Text character limit of 500 exceeded", 422, headers)
    if len(media_ids) > 4:
        return _error("Validation failed: Media attachments can't be more than 4", 422, headers)
    for media_id in media_ids:
        media = _store().get("media", media_id)
        if media is None or media["account_id"] != account["id"]:
            return _error("Record not found", 404, headers)
        if media["ready_at"] > time.time():
            return _error("Cannot attach files that have not finished processing. Try again in a moment!", 422, headers)
    return None


def _wait_for_status(account_id: str, status_id: str) -> dict[str, Any] | None:
    for _ in range(20):
        status = _store().get(f"statuses:{account_id}", status_id)
        if status is not None:
            return status
        time.sleep(0.05)
    return None


@simulator_view(SLUG)
def status_detail(request: HttpRequest, status_id: str) -> HttpResponse:
    account, failure, headers = _authenticate(request)
    if failure:
        return failure
    assert account is not None
    status = _store().get(f"statuses:{account['id']}", status_id)
    if request.method in ("PUT", "DELETE"):
        request.sandbox_log = {"edit" if request.method == "PUT" else "delete": True, "remoteId": status_id}  # type: ignore[attr-defined]
    if status is None and request.method == "GET" and (reply := _thread_reply(account, status_id)) is not None:
        return json_response(_reply_json(request, account, *reply), headers=headers)
    if status is None:
        return _error("Record not found", 404, headers)
    if request.method == "DELETE":
        _leave_thread(account, status)
        _store().delete(f"statuses:{account['id']}", status_id)
        body = _status_json(request, status, account)
        body["text"] = status["text"]  # the source, for "delete and redraft"
        return json_response(body, headers=headers)
    if request.method == "PUT":
        return _edit_status(request, status, account, headers)
    return json_response(_status_json(request, status, account), headers=headers)


def _snapshot(status: dict[str, Any], at: float) -> dict[str, Any]:
    keys = ("text", "spoiler_text", "sensitive", "media_ids")
    return {"at": at, **{key: status[key] for key in keys}}


def _edit_status(
    request: HttpRequest, status: dict[str, Any], account: dict[str, Any], headers: dict[str, str]
) -> HttpResponse:
    """Mastodon's UpdateStatusService: every attribute is set from the call (an absent ``status``
    empties the text, absent ``media_ids`` drop the media), the previous version is kept."""
    params = request_params(request)
    text = str(params.get("status") or "")
    request.sandbox_log["text"] = text[:80]  # type: ignore[attr-defined]
    scenario = marker(text)
    if scenario == "unauthorized":
        return _error("The access token is invalid", 401)
    if scenario == "flaky" and _store().first_time(f"flaky-edit:{status['id']}:{text}"):
        return _error("Service Unavailable", 503)
    if scenario == "fail":
        return _error("Validation failed: Text contains content this server does not accept", 422, headers)
    media_ids = _media_ids(params)
    request.sandbox_log["mediaIds"] = media_ids  # type: ignore[attr-defined]
    refused = _refused_content(text, media_ids, account, headers)
    if refused is not None:
        return refused
    now = time.time()
    history = status.get("history") or [_snapshot(status, status["created"])]
    spoiler = str(params.get("spoiler_text") or "")
    status.update(
        text=text,
        media_ids=media_ids,
        spoiler_text=spoiler,
        sensitive=str(params.get("sensitive", "")).lower() in {"true", "1"} or bool(spoiler),
        language=str(params.get("language") or status["language"]),
        edited=now,
    )
    status["history"] = [*history, _snapshot(status, now)]
    _store().put(f"statuses:{account['id']}", status["id"], status)
    return json_response(_status_json(request, status, account), headers=headers)


@simulator_view(SLUG)
def status_history(request: HttpRequest, status_id: str) -> HttpResponse:
    """``GET /api/v1/statuses/:id/history``: every version, oldest first (one for a status never
    edited), as StatusEdit entities."""
    account, failure, headers = _authenticate(request)
    if failure:
        return failure
    assert account is not None
    status = _store().get(f"statuses:{account['id']}", status_id)
    if status is None:
        return _error("Record not found", 404, headers)
    versions = status.get("history") or [_snapshot(status, status["created"])]
    return json_response(
        [
            {
                "content": _html(version["text"]),
                "spoiler_text": version["spoiler_text"],
                "sensitive": version["sensitive"],
                "created_at": iso(version["at"], millis=True),
                "account": _account_json(request, account),
                "poll": None,
                "media_attachments": [
                    _media_json(request, m) for m in (_store().get("media", i) for i in version["media_ids"]) if m
                ],
                "emojis": [],
            }
            for version in versions
        ],
        headers=headers,
    )


@simulator_view(SLUG)
def status_source(request: HttpRequest, status_id: str) -> HttpResponse:
    """``GET /api/v1/statuses/:id/source``: the plain text an edit starts from."""
    account, failure, headers = _authenticate(request)
    if failure:
        return failure
    assert account is not None
    status = _store().get(f"statuses:{account['id']}", status_id)
    if status is None:
        return _error("Record not found", 404, headers)
    return json_response(
        {"id": status["id"], "text": status["text"], "spoiler_text": status["spoiler_text"]}, headers=headers
    )


@simulator_view(SLUG)
def revoke(request: HttpRequest) -> HttpResponse:
    """``POST /oauth/revoke`` (RFC 7009): 200 ``{}`` whether or not the token was known; an
    unknown client is refused."""
    params = request_params(request)
    request.sandbox_log = {"revoke": True}  # type: ignore[attr-defined]
    if not _app_known(str(params.get("client_id") or ""), str(params.get("client_secret") or "")):
        return json_response(
            {
                "error": "unauthorized_client",
                "error_description": "You are not authorized to revoke this token",
            },
            403,
        )
    token_value = str(params.get("token") or "")
    if token_value:
        _store().revoke_token(token_value)
    return json_response({})


def _account_named(username: str) -> dict[str, Any] | None:
    return next((a for a in _store().all("account") if a.get("username") == username), None)


def status_page(request: HttpRequest, username: str, status_id: str) -> HttpResponse:
    """The status's public page, as the link in its ``url`` opens it."""
    account = _account_named(username)
    status = _store().get(f"statuses:{account['id']}", status_id) if account else None
    if account is None or status is None:
        return pages.not_found_page("Mastodon")
    media = [_media_json(request, m) for m in (_store().get("media", i) for i in status["media_ids"]) if m]
    return pages.post_page(
        platform="Mastodon",
        author=account["display_name"],
        handle=f"@{username}",
        text=status["text"],
        # the attachments' files (a stored attachment has no url of its own: its JSON makes one)
        media=[str(m["url"]) for m in media if m.get("url")],
        avatar=f"{_public_base()}/avatars/original/missing.png",
    )


def profile_page(request: HttpRequest, username: str) -> HttpResponse:
    account = _account_named(username)
    if account is None:
        return pages.not_found_page("Mastodon")
    return pages.post_page(platform="Mastodon", author=account["display_name"], handle=f"@{username}", text="")


# --- the audience: replies to the account's statuses -----------------------------------------

FANS_SERVER = "fans.example"
KEY_SPAN = 10**audience_ids.KEY_DIGITS


def comment_status_id(comment: dict[str, Any]) -> str:
    """The status id of a reply in a thread (an audience document of
    :func:`platforms.sandbox.audience.thread`): the account's own reply keeps its status's id;
    the audience's is the post's id followed by its key's number."""
    post_id, key = audience.split_id(comment["id"])
    own = audience_ids.own_platform_id(key)
    if own is not None:
        return own
    return f"{post_id}{audience_ids.key_number(key):0{audience_ids.KEY_DIGITS}d}"


def platform_comment_id(neutral: str, parent: str = "") -> str:
    """The id this simulator gives the audience comment ``neutral`` (an id of
    :mod:`platforms.sandbox.audience`; ``parent`` its parent's, "" for one under the post), so a
    test predicts the ids a sync must find."""
    return comment_status_id({"id": neutral})


def _audience_id(account: dict[str, Any], status_id: str) -> str | None:
    """The audience document a status id names under one of the account's statuses."""
    status = _store().get(f"statuses:{account['id']}", status_id)
    if status is not None:
        root = status.get("thread_root")
        return audience.comment_id(root, audience_ids.own_key(status_id)) if root else None
    post_id, number = status_id[: -audience_ids.KEY_DIGITS], status_id[-audience_ids.KEY_DIGITS :]
    key = audience_ids.key_of_number(int(number)) if status_id.isdigit() and post_id else None
    return audience.comment_id(post_id, key) if key else None


def _root_status(account: dict[str, Any], status_id: str) -> dict[str, Any] | None:
    """A status of the account's that starts a thread (replies to none)."""
    status = _store().get(f"statuses:{account['id']}", status_id)
    return status if status is not None and not status.get("in_reply_to_id") else None


def _thread_reply(
    account: dict[str, Any], status_id: str
) -> tuple[dict[str, Any], dict[str, Any], dict[str, dict[str, Any]]] | None:
    """(the post, the reply as the thread shows it, every shown reply by id) for a reply under one of
    the account's statuses; None when there is none (never written, not yet, or deleted)."""
    comment_id = _audience_id(account, status_id)
    root = _root_status(account, audience.split_id(comment_id)[0]) if comment_id else None
    if comment_id is None or root is None:
        return None
    shown = {c["id"]: c for c in audience.thread(_store(), SLUG, root["id"], root["created"])}
    return (root, shown[comment_id], shown) if comment_id in shown else None


def _join_thread(account: dict[str, Any], status: dict[str, Any]) -> None:
    """The account's new status in reply to a status of a thread joins that thread."""
    parent_id = str(status["in_reply_to_id"])
    parent_doc = _audience_id(account, parent_id)
    root_id = audience.split_id(parent_doc)[0] if parent_doc else parent_id
    if _root_status(account, root_id) is None:
        return
    status["thread_root"] = root_id
    _store().put(f"statuses:{account['id']}", status["id"], status)
    me = audience.Person(account["id"], account["display_name"], account["username"], _avatar())
    audience.add_reply(
        _store(),
        root_id,
        parent_doc or "",
        status["text"],
        author=me,
        reply_id=audience.comment_id(root_id, audience_ids.own_key(status["id"])),
    )


def _leave_thread(account: dict[str, Any], status: dict[str, Any]) -> None:
    if status.get("thread_root"):
        comment_id = audience.comment_id(status["thread_root"], audience_ids.own_key(status["id"]))
        audience.set_state(_store(), comment_id, deleted=True)


def _replies_count(account: dict[str, Any], status: dict[str, Any]) -> int:
    """``replies_count`` of one of the account's statuses: the replies whose ``in_reply_to_id`` is
    that very status, as its context lists them (Mastodon counts the direct replies only)."""
    if status.get("thread_root"):  # the account's reply in one of its threads
        root = _root_status(account, status["thread_root"])
        mine = audience.comment_id(status["thread_root"], audience_ids.own_key(status["id"]))
        shown = audience.thread(_store(), SLUG, root["id"], root["created"]) if root else []
        return next((c["replyCount"] for c in shown if c["id"] == mine), 0)
    if status.get("in_reply_to_id"):  # a reply outside the account's threads: none under it here
        return 0
    return audience.comment_count(audience.thread(_store(), SLUG, status["id"], status["created"]), direct_only=True)


def _avatar() -> str:
    return f"{_public_base()}/avatars/original/missing.png"


def _fan_json(person: dict[str, Any], at: float) -> dict[str, Any]:
    acct = f"{person['handle']}@{FANS_SERVER}"
    return {
        "id": person["id"],
        "username": person["handle"],
        "acct": acct,
        "display_name": person["name"],
        "locked": False,
        "bot": False,
        "discoverable": True,
        "group": False,
        "created_at": iso(at - 86400 * 400, millis=True),
        "note": "",
        "url": f"https://{FANS_SERVER}/@{person['handle']}",
        "uri": f"https://{FANS_SERVER}/users/{person['handle']}",
        "avatar": person["avatar_url"],
        "avatar_static": person["avatar_url"],
        "header": f"{_public_base()}/headers/original/missing.png",
        "header_static": f"{_public_base()}/headers/original/missing.png",
        "followers_count": 12,
        "following_count": 40,
        "statuses_count": 30,
        "last_status_at": None,
        "emojis": [],
        "fields": [],
    }


def _reply_json(
    request: HttpRequest,
    account: dict[str, Any],
    root: dict[str, Any],
    comment: dict[str, Any],
    shown: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """A reply of a thread as a Status entity."""
    status_id = comment_status_id(comment)
    parent = shown.get(comment["parentId"])
    own = _store().get(f"statuses:{account['id']}", status_id) if comment["fromAccount"] else None
    if own is not None:
        body = _status_json(request, own, account)
    else:
        person = comment["author"]
        body = {
            "id": status_id,
            "created_at": iso(comment["createdAt"], millis=True),
            "sensitive": False,
            "spoiler_text": "",
            "visibility": "public",
            "language": "en",
            "uri": f"https://{FANS_SERVER}/users/{person['handle']}/statuses/{status_id}",
            "url": f"https://{FANS_SERVER}/@{person['handle']}/{status_id}",
            "reblogged": False,
            "muted": False,
            "bookmarked": False,
            "edited_at": None,
            "content": _html(comment["text"]),
            "reblog": None,
            "application": None,
            "account": _fan_json(person, comment["createdAt"]),
            "media_attachments": [],
            "mentions": [],
            "tags": [],
            "emojis": [],
            "card": None,
            "poll": None,
        }
    body.update(
        in_reply_to_id=comment_status_id(parent) if parent else root["id"],
        in_reply_to_account_id=parent["author"]["id"] if parent else account["id"],
        replies_count=comment["replyCount"],
        reblogs_count=0,
        favourites_count=comment["likeCount"],
        favourited=comment["liked"],
    )
    return body


@simulator_view(SLUG)
def status_context(request: HttpRequest, status_id: str) -> HttpResponse:
    """``GET /api/v1/statuses/:id/context``: the statuses above (``ancestors``, the thread's first
    status first) and below (``descendants``, depth first, each branch oldest first)."""
    account, failure, headers = _authenticate(request)
    if failure:
        return failure
    assert account is not None
    root = _root_status(account, status_id)
    reply = None if root is not None else _thread_reply(account, status_id)
    if root is None and reply is None:
        if _store().get(f"statuses:{account['id']}", status_id) is not None:
            return json_response({"ancestors": [], "descendants": []}, headers=headers)
        return _error("Record not found", 404, headers)
    if reply is not None:
        root, anchor, shown = reply[0], reply[1]["id"], reply[2]
    else:
        assert root is not None
        anchor, shown = "", {c["id"]: c for c in audience.thread(_store(), SLUG, root["id"], root["created"])}
    children: dict[str, list[dict[str, Any]]] = {}
    for comment in shown.values():
        children.setdefault(comment["parentId"], []).append(comment)
    descendants: list[dict[str, Any]] = []
    stack = list(reversed(children.get(anchor, [])))
    while stack:
        comment = stack.pop()
        descendants.append(_reply_json(request, account, root, comment, shown))
        stack.extend(reversed(children.get(comment["id"], [])))
    ancestors: list[dict[str, Any]] = []
    above = shown[anchor]["parentId"] if anchor else None
    while above:
        ancestors.insert(0, _reply_json(request, account, root, shown[above], shown))
        above = shown[above]["parentId"]
    if anchor:
        ancestors.insert(0, _status_json(request, root, account))
    return json_response({"ancestors": ancestors, "descendants": descendants}, headers=headers)


@simulator_view(SLUG)
def status_favourite(request: HttpRequest, status_id: str) -> HttpResponse:
    """``POST /api/v1/statuses/:id/favourite``: the status, favourited (again: still favourited)."""
    account, failure, headers = _authenticate(request)
    if failure:
        return failure
    assert account is not None
    request.sandbox_log = {"favourite": True, "remoteId": status_id}  # type: ignore[attr-defined]
    if request.method != "POST":
        return _error("Method not allowed", 405, headers)
    reply = _thread_reply(account, status_id)
    if reply is not None:
        audience.set_state(_store(), reply[1]["id"], liked=True)
        root, comment_id = reply[0], reply[1]["id"]
        shown = {c["id"]: c for c in audience.thread(_store(), SLUG, root["id"], root["created"])}
        return json_response(_reply_json(request, account, root, shown[comment_id], shown), headers=headers)
    status = _store().get(f"statuses:{account['id']}", status_id)
    if status is None:
        return _error("Record not found", 404, headers)
    return json_response({**_status_json(request, status, account), "favourited": True}, headers=headers)


urlpatterns = [
    path("@<str:username>", profile_page),
    path("@<str:username>/<str:status_id>", status_page),
    path("api/v1/instance", instance_v1),
    path("api/v1/instance/", instance_v1),
    path("api/v2/instance", instance_v2),
    path("api/v2/instance/", instance_v2),
    path("api/v1/apps", apps),
    path("oauth/authorize", authorize),
    path("oauth/token", token),
    path("oauth/revoke", revoke),
    path(".well-known/oauth-authorization-server", oauth_metadata),
    path("api/v1/accounts/verify_credentials", verify_credentials),
    path("api/v1/accounts/<str:account_id>/statuses", account_statuses),
    path("api/v1/media", media_create),
    path("api/v2/media", media_create),
    path("api/v1/media/<str:media_id>", media_detail),
    path("api/v1/statuses", statuses),
    path("api/v1/statuses/<str:status_id>", status_detail),
    path("api/v1/statuses/<str:status_id>/history", status_history),
    path("api/v1/statuses/<str:status_id>/source", status_source),
    path("api/v1/statuses/<str:status_id>/context", status_context),
    path("api/v1/statuses/<str:status_id>/favourite", status_favourite),
    path("avatars/original/missing.png", default_avatar),
    path("headers/original/missing.png", default_header),
]


# --- armed faults (platforms.sandbox.faults): Mastodon has no quota beyond its rate limits ------


def _too_many_requests(request: HttpRequest) -> HttpResponse:
    reset = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=RATE_WINDOW)
    headers = {
        "X-RateLimit-Limit": str(RATE_LIMIT),
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": reset.strftime("%Y-%m-%dT%H:%M:%S.") + f"{reset.microsecond // 1000:03d}Z",
    }
    return _error("Too many requests", 429, headers)


FAULTS = {
    "rate_limited": _too_many_requests,
    "server_error": lambda request: HttpResponse(
        "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center>"
        "<hr><center>nginx</center></body></html>",
        status=502,
        content_type="text/html",
    ),
}
