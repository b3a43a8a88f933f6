"""Simulator of a Bluesky PDS (plus the AppView reads and the video service) over XRPC under
``/sandbox/bluesky/xrpc/<nsid>``: sessions with real-shaped JWTs (any handle, password
``sandbox``; unknown handles become new users), uploadBlob, createRecord/getRecord with record-key
uniqueness, getProfile/getAuthorFeed/getPosts with counts that grow, the video service's
uploadVideo/getJobStatus under ``/sandbox/bluesky/video/xrpc/``, the ``{error, message}``
envelope and the ``ratelimit-*`` headers."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import re
import secrets
import time
from typing import Any

import grapheme
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import path

from platforms.base import Platform
from platforms.sandbox import media_checks, pages
from platforms.sandbox.common import bearer_token, grown, iso, json_response, sniff_mime
from platforms.sandbox.scenarios import marker
from platforms.sandbox.store import SandboxStore
from platforms.sandbox.views import json_body, simulator_view

SLUG = "bluesky"
PASSWORD = "sandbox"
ACCESS_TTL = 2 * 3600
REFRESH_TTL = 90 * 86400
IMAGE_LIMIT = 1_000_000
BLOB_LIMIT = 100 * 1024 * 1024
VIDEO_READY_AFTER = 1.5
TID = re.compile(r"^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$")
POST = "app.bsky.feed.post"


class XrpcError(Exception):
    def __init__(self, status: int, name: str, message: str) -> None:
        super().__init__(message)
        self.status, self.name, self.message = status, name, message


def _store() -> SandboxStore:
    return SandboxStore(SLUG)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _secret() -> bytes:
    return hashlib.sha256(f"bluesky-sandbox:{settings.SECRET_KEY}".encode()).digest()


def _jwt(claims: dict[str, Any], typ: str) -> str:
    head = _b64(json.dumps({"typ": typ, "alg": "HS256"}).encode())
    body = _b64(json.dumps(claims).encode())
    signature = hmac.new(_secret(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64(signature)}"


def _claims(token: str) -> dict[str, Any] | None:
    parts = token.split(".")
    if len(parts) != 3:
        return None
    expected = _b64(hmac.new(_secret(), f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest())
    if not hmac.compare_digest(expected, parts[2]):
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None
    return claims if isinstance(claims, dict) else None


def _cid(data: bytes, codec: int) -> str:
    """A CIDv1 (sha2-256) in base32, as the PDS names blobs (raw) and records (dag-cbor)."""
    raw = bytes([0x01, codec, 0x12, 0x20]) + hashlib.sha256(data).digest()
    return "b" + base64.b32encode(raw).decode().lower().rstrip("=")


def _tid() -> str:
    value = (int(time.time() * 1_000_000) << 10) | secrets.randbelow(1024)
    alphabet = "234567abcdefghijklmnopqrstuvwxyz"
    return "".join(alphabet[(value >> (5 * (12 - i))) & 31] for i in range(13))


def _ratelimit(did: str) -> dict[str, str]:
    store = _store()
    window = int(time.time()) // 300
    key = store._key("ratelimit", did, str(window))
    used = int(store.redis.incr(key))
    store.redis.expire(key, 300)
    return {
        "ratelimit-limit": "3000",
        "ratelimit-remaining": str(max(3000 - used, 0)),
        "ratelimit-reset": str((window + 1) * 300),
        "ratelimit-policy": "3000;w=300",
    }


# --- users and sessions -----------------------------------------------------------------


def _user_by(identifier: str) -> dict[str, Any] | None:
    if identifier.startswith("did:"):
        return _store().get("user", identifier)
    pointer = _store().get("handle", identifier.lower())
    return _store().get("user", pointer["did"]) if pointer else None


def _new_user(handle: str) -> dict[str, Any]:
    digest = hashlib.sha256(handle.encode()).digest()
    did = "did:plc:" + base64.b32encode(digest).decode().lower()[:24]
    user = {"did": did, "handle": handle, "created": time.time(), "followers": 30 + digest[0]}
    _store().create_once("user", did, user)
    _store().create_once("handle", handle, {"did": did})
    return _store().get("user", did) or user


def _session(request: HttpRequest, user: dict[str, Any]) -> dict[str, Any]:
    now = int(time.time())
    audience = f"did:web:{request.get_host().split(':')[0]}"
    jti = secrets.token_urlsafe(16)
    _store().put("session", jti, {"did": user["did"], "created": now})
    access = {"scope": "com.atproto.access", "sub": user["did"], "aud": audience, "iat": now, "exp": now + ACCESS_TTL}
    refresh = {
        "scope": "com.atproto.refresh",
        "sub": user["did"],
        "aud": audience,
        "jti": jti,
        "iat": now,
        "exp": now + REFRESH_TTL,
    }
    access["jti"] = f"{jti}.a"
    return {
        "did": user["did"],
        "handle": user["handle"],
        "email": f"{user['handle']}@example.invalid",
        "emailConfirmed": True,
        "accessJwt": _jwt(access, "at+jwt"),
        "refreshJwt": _jwt(refresh, "refresh+jwt"),
        "active": True,
    }


def _auth(request: HttpRequest, scope: str = "com.atproto.access") -> dict[str, Any]:
    token = bearer_token(request)
    if not token:
        raise XrpcError(401, "AuthMissing", "Authentication Required")
    claims = _claims(token)
    if claims is None or claims.get("scope") != scope:
        raise XrpcError(400 if claims else 401, "InvalidToken", "Bad token scope" if claims else "Malformed token")
    if int(claims.get("exp", 0)) < time.time():
        raise XrpcError(400, "ExpiredToken", "Token has expired")
    jti = str(claims.get("jti", "")).split(".")[0]
    if _store().get("session", jti) is None:
        raise XrpcError(400, "ExpiredToken", "Token has been revoked")
    user = _store().get("user", str(claims.get("sub")))
    if user is None or _store().is_revoked(user["did"]):
        raise XrpcError(401, "InvalidToken", "Token has been revoked")
    return {**user, "jti": jti}


def create_session(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    body = json_body(request)
    identifier = str(body.get("identifier") or "").strip().lower().lstrip("@")
    if not identifier or not body.get("password"):
        raise XrpcError(400, "InvalidRequest", 'Input must have the property "identifier" and "password"')
    if body["password"] != PASSWORD:
        raise XrpcError(401, "AuthenticationRequired", "Invalid identifier or password")
    user = _user_by(identifier)
    if user is None:
        if identifier.startswith("did:"):
            raise XrpcError(401, "AuthenticationRequired", "Invalid identifier or password")
        user = _new_user(identifier if "." in identifier else f"{identifier}.bsky.social")
    if _store().is_revoked(user["did"]):
        raise XrpcError(401, "AccountTakedown", "Account has been taken down")
    return _session(request, user), {}


def refresh_session(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    user = _auth(request, scope="com.atproto.refresh")
    _store().delete("session", user["jti"])  # a refresh token is single-use
    return _session(request, user), {}


def get_session(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    user = _auth(request)
    return {
        "handle": user["handle"],
        "did": user["did"],
        "email": f"{user['handle']}@example.invalid",
        "emailConfirmed": True,
        "active": True,
    }, _ratelimit(user["did"])


def get_service_auth(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    user = _auth(request)
    if not request.GET.get("aud"):
        raise XrpcError(400, "InvalidRequest", 'Error: Params must have the property "aud"')
    token = _store().issue_token(user["did"], kind="service", ttl=300, lxm=request.GET.get("lxm"))
    return {"token": token}, _ratelimit(user["did"])


def resolve_handle(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    user = _user_by(str(request.GET.get("handle") or "").lower())
    if user is None:
        raise XrpcError(400, "InvalidRequest", "Unable to resolve handle")
    return {"did": user["did"]}, {}


# --- profiles and feeds ----------------------------------------------------------------------


def _profile_basic(user: dict[str, Any]) -> dict[str, Any]:
    return {
        "did": user["did"],
        "handle": user["handle"],
        "displayName": user["handle"].split(".")[0].title(),
        "avatar": pages.avatar_url(SLUG, user["did"]),
        "labels": [],
        "createdAt": iso(user["created"], millis=True),
    }


def get_profile(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    viewer = _auth(request)
    user = _user_by(str(request.GET.get("actor") or "").lower())
    if user is None:
        raise XrpcError(400, "InvalidRequest", "Profile not found")
    return {
        **_profile_basic(user),
        "description": "A simulated Bluesky account",
        "followersCount": grown(user["created"], 2, base=user["followers"]),
        "followsCount": 25,
        "postsCount": _store().count(f"posts:{user['did']}"),
        "indexedAt": iso(user["created"], millis=True),
    }, _ratelimit(viewer["did"])


def _embed_view(request: HttpRequest, did: str, embed: dict[str, Any] | None) -> dict[str, Any] | None:
    if not embed:
        return None
    cdn = request.build_absolute_uri(f"/sandbox/{SLUG}/cdn")
    if embed.get("$type") == "app.bsky.embed.images":
        images = []
        for image in embed.get("images", []):
            cid = image["image"]["ref"]["$link"]
            images.append(
                {
                    "thumb": f"{cdn}/feed_thumbnail/plain/{did}/{cid}@jpeg",
                    "fullsize": f"{cdn}/feed_fullsize/plain/{did}/{cid}@jpeg",
                    "alt": image.get("alt", ""),
                }
            )
        return {"$type": "app.bsky.embed.images#view", "images": images}
    if embed.get("$type") == "app.bsky.embed.video":
        cid = embed["video"]["ref"]["$link"]
        return {
            "$type": "app.bsky.embed.video#view",
            "cid": cid,
            "playlist": f"{cdn}/watch/{did}/{cid}/playlist.m3u8",
            "thumbnail": f"{cdn}/watch/{did}/{cid}/thumbnail.jpg",
            "alt": embed.get("alt"),
        }
    return None


def _post_view(request: HttpRequest, user: dict[str, Any], post: dict[str, Any]) -> dict[str, Any]:
    view = {
        "uri": post["uri"],
        "cid": post["cid"],
        "author": _profile_basic(user),
        "record": post["value"],
        "replyCount": grown(post["indexed"], 0.3),
        "repostCount": grown(post["indexed"], 0.6),
        "likeCount": grown(post["indexed"], 2.0),
        "quoteCount": grown(post["indexed"], 0.1),
        "indexedAt": iso(post["indexed"], millis=True),
        "labels": [],
    }
    embed = _embed_view(request, user["did"], post["value"].get("embed"))
    if embed:
        view["embed"] = embed
    return view


def get_author_feed(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    viewer = _auth(request)
    user = _user_by(str(request.GET.get("actor") or "").lower())
    if user is None:
        raise XrpcError(400, "InvalidRequest", "Profile not found")
    try:
        limit = min(max(int(request.GET.get("limit", 50)), 1), 100)
        offset = int(request.GET.get("cursor") or 0)
    except ValueError:
        raise XrpcError(400, "InvalidRequest", "Invalid limit or cursor")
    posts = sorted(_store().all(f"posts:{user['did']}"), key=lambda p: p["indexed"], reverse=True)
    page = posts[offset : offset + limit]
    body: dict[str, Any] = {"feed": [{"post": _post_view(request, user, p)} for p in page]}
    if offset + limit < len(posts):
        body["cursor"] = str(offset + limit)
    return body, _ratelimit(viewer["did"])


def get_posts(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    viewer = _auth(request)
    uris = request.GET.getlist("uris")
    if len(uris) > 25:
        raise XrpcError(400, "InvalidRequest", "uris must not have more than 25 elements")
    views = []
    for uri in uris:
        match = re.fullmatch(r"at://([^/]+)/([^/]+)/([^/]+)", uri)
        user = _user_by(match.group(1)) if match else None
        post = _store().get(f"posts:{user['did']}", match.group(3)) if user and match else None
        if user and post:
            views.append(_post_view(request, user, post))
    return {"posts": views}, _ratelimit(viewer["did"])


# --- repository writes -----------------------------------------------------------------------


def upload_blob(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    user = _auth(request)
    data = request.body
    if not data:
        raise XrpcError(400, "InvalidRequest", "Request body is empty")
    if len(data) > BLOB_LIMIT:
        raise XrpcError(400, "BlobTooLarge", f"This file is too large. It is {len(data)} bytes")
    if (problem := media_checks.refusal(Platform.BLUESKY, "FEED", data)) is not None:
        raise XrpcError(400, "InvalidRequest", problem)
    # like the PDS, trust the bytes over the header (SDKs send */*)
    sniffed = sniff_mime(data)
    mime = sniffed if sniffed != "application/octet-stream" else (request.content_type or sniffed).lower()
    cid = _cid(data, 0x55)
    _store().put("blob", cid, {"did": user["did"], "mimeType": mime, "size": len(data)})
    return {"blob": {"$type": "blob", "ref": {"$link": cid}, "mimeType": mime, "size": len(data)}}, _ratelimit(
        user["did"]
    )


def _check_blob(did: str, ref: Any, *, video: bool) -> None:
    link = ref.get("ref", {}).get("$link") if isinstance(ref, dict) else None
    blob = _store().get("blob", str(link)) if link else None
    if blob is None or blob["did"] != did:
        raise XrpcError(400, "BlobNotFound", f"Could not find blob: {link}")
    if video and blob["mimeType"] != "video/mp4":
        raise XrpcError(
            400, "InvalidMimeType", f"Wrong type of file. It is {blob['mimeType']} but it must match video/mp4"
        )
    if not video and not blob["mimeType"].startswith("image/"):
        raise XrpcError(
            400, "InvalidMimeType", f"Wrong type of file. It is {blob['mimeType']} but it must match image/*"
        )
    if not video and blob["size"] > IMAGE_LIMIT:
        raise XrpcError(
            400, "BlobTooLarge", f"This file is too large. It is {blob['size']} bytes but the maximum size is 976.56KB."
        )


def _validate_post(did: str, record: dict[str, Any]) -> None:
    invalid = "Invalid app.bsky.feed.post record: "
    text = record.get("text")
    if record.get("$type") != POST or not isinstance(text, str):
        raise XrpcError(400, "InvalidRequest", invalid + 'Record must have the property "text"')
    if grapheme.length(text) > 300 or len(text.encode()) > 3000:
        raise XrpcError(400, "InvalidRequest", invalid + "Record/text must not be longer than 300 graphemes")
    try:
        dt.datetime.fromisoformat(str(record.get("createdAt")).replace("Z", "+00:00"))
    except ValueError:
        raise XrpcError(400, "InvalidRequest", invalid + "Record/createdAt must be an valid atproto datetime")
    size = len(text.encode())
    for number, facet in enumerate(record.get("facets") or []):
        index = facet.get("index") or {}
        if not 0 <= int(index.get("byteStart", -1)) < int(index.get("byteEnd", -1)) <= size:
            raise XrpcError(400, "InvalidRequest", invalid + f"Record/facets/{number}/index is out of range")
    embed = record.get("embed")
    if embed and embed.get("$type") == "app.bsky.embed.images":
        images = embed.get("images") or []
        if not 1 <= len(images) <= 4:
            raise XrpcError(400, "InvalidRequest", invalid + "Record/embed/images must not have more than 4 elements")
        for image in images:
            _check_blob(did, image.get("image"), video=False)
    elif embed and embed.get("$type") == "app.bsky.embed.video":
        _check_blob(did, embed.get("video"), video=True)
    if "reply" in record:
        _check_reply(record["reply"])


def _check_reply(reply: Any) -> None:
    """``reply: {root, parent}``, each a strong reference (``uri`` and ``cid``) to a post that
    exists with that content id."""
    invalid = "Invalid app.bsky.feed.post record: "
    if not isinstance(reply, dict):
        raise XrpcError(400, "InvalidRequest", invalid + "Record/reply must be an object")
    for name in ("root", "parent"):
        ref = reply.get(name)
        if not isinstance(ref, dict) or not isinstance(ref.get("uri"), str) or not isinstance(ref.get("cid"), str):
            raise XrpcError(
                400, "InvalidRequest", invalid + f'Record/reply/{name} must have the properties "uri", "cid"'
            )
        did, _, rest = ref["uri"].removeprefix("at://").partition("/")
        collection, _, rkey = rest.partition("/")
        post = _store().get(f"posts:{did}", rkey) if collection == POST and rkey else None
        if post is None or post["cid"] != ref["cid"]:
            raise XrpcError(400, "InvalidRequest", f"Could not find reply {name}: {ref['uri']} ({ref['cid']})")


def _scenario(request: HttpRequest, did: str, rkey: str, text: str) -> None:
    scenario = marker(text)
    if scenario == "unauthorized":
        raise XrpcError(401, "InvalidToken", "Token could not be verified")
    if scenario == "flaky" and _store().first_time(f"flaky:{did}:{rkey}"):
        raise XrpcError(502, "UpstreamFailure", "Upstream Failure")
    if scenario == "fail":
        raise XrpcError(400, "InvalidRequest", "Invalid app.bsky.feed.post record: content refused (#sandbox-fail)")


def create_record(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    user = _auth(request)
    body = json_body(request)
    raw_record = body.get("record")
    record: dict[str, Any] = raw_record if isinstance(raw_record, dict) else {}
    rkey = str(body.get("rkey") or "")
    log: dict[str, Any] = {"publish": True, "marker": rkey or None, "text": str(record.get("text", ""))[:80]}
    reply = record.get("reply")
    if isinstance(reply, dict):
        log["replyTo"] = {name: as_ref for name, as_ref in reply.items() if name in ("root", "parent")}
    request.sandbox_log = log  # type: ignore[attr-defined]
    if str(body.get("repo")) not in {user["did"], user["handle"]}:
        raise XrpcError(400, "InvalidRequest", "Invalid repo")
    if body.get("collection") != POST:
        raise XrpcError(400, "InvalidRequest", f"Unsupported collection: {body.get('collection')}")
    if rkey and not TID.match(rkey):
        raise XrpcError(400, "InvalidRequest", f"Invalid record key for {POST}: {rkey}")
    _scenario(request, user["did"], rkey, str(record.get("text", "")))
    _validate_post(user["did"], record)
    rkey = rkey or _tid()
    uri = f"at://{user['did']}/{POST}/{rkey}"
    cid = _cid(json.dumps(record, sort_keys=True).encode(), 0x71)
    post = {"uri": uri, "cid": cid, "value": record, "indexed": time.time()}
    _, created = _store().create_once(f"posts:{user['did']}", rkey, post)
    request.sandbox_log["remoteId"] = uri  # type: ignore[attr-defined]
    if not created:
        request.sandbox_log["repeat"] = True  # type: ignore[attr-defined]
        raise XrpcError(400, "InvalidRequest", f"Record already exists: {uri}")
    rev = _tid()
    return {
        "uri": uri,
        "cid": cid,
        "commit": {"cid": _cid(rev.encode(), 0x71), "rev": rev},
        "validationStatus": "valid",
    }, _ratelimit(user["did"])


def delete_record(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    """``com.atproto.repo.deleteRecord``: the record leaves the repo (reads: RecordNotFound; the
    author feed no longer lists it); a record that is not there deletes as well."""
    user = _auth(request)
    body = json_body(request)
    rkey = str(body.get("rkey") or "")
    uri = f"at://{user['did']}/{body.get('collection')}/{rkey}"
    request.sandbox_log = {"delete": True, "remoteId": uri}  # type: ignore[attr-defined]
    if str(body.get("repo")) not in {user["did"], user["handle"]}:
        raise XrpcError(400, "InvalidRequest", "Invalid repo")
    if body.get("collection") != POST or not rkey:
        raise XrpcError(400, "InvalidRequest", "Input must have the properties collection and rkey")
    if not _store().delete(f"posts:{user['did']}", rkey):
        # deleteRecord of a record that is not there succeeds too; the log says so (tests tell a
        # delete that removed the post from one that found it gone)
        request.sandbox_log["alreadyGone"] = True  # type: ignore[attr-defined]
    rev = _tid()
    return {"commit": {"cid": _cid(rev.encode(), 0x71), "rev": rev}}, _ratelimit(user["did"])


def get_record(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    user = _user_by(str(request.GET.get("repo") or "").lower())
    collection, rkey = request.GET.get("collection"), str(request.GET.get("rkey") or "")
    post = _store().get(f"posts:{user['did']}", rkey) if user and collection == POST else None
    if post is None:
        repo = request.GET.get("repo")
        raise XrpcError(400, "RecordNotFound", f"Could not locate record: at://{repo}/{collection}/{rkey}")
    return {"uri": post["uri"], "cid": post["cid"], "value": post["value"]}, {}


# --- the video service ------------------------------------------------------------------------


def upload_video(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    service = _store().token(bearer_token(request))
    if service is None or service.get("kind") != "service":
        raise XrpcError(401, "Unauthorized", "Service auth token is missing or invalid")
    did = service["account_id"]
    data = request.body
    if sniff_mime(data) != "video/mp4":
        raise XrpcError(400, "InvalidMimeType", "Unsupported video format")
    if (problem := media_checks.refusal(Platform.BLUESKY, "FEED", data)) is not None:
        raise XrpcError(400, "InvalidRequest", problem)
    job_id = hashlib.sha256(did.encode() + data).hexdigest()[:20]
    cid = _cid(data, 0x55)
    job = {"jobId": job_id, "did": did, "cid": cid, "size": len(data), "ready_at": time.time() + VIDEO_READY_AFTER}
    _, created = _store().create_once("videojob", job_id, job)
    if not created:
        raise XrpcError(409, "already_exists", "Video already processed")
    return {"jobStatus": {"jobId": job_id, "did": did, "state": "JOB_STATE_CREATED", "progress": 0}}, {}


def get_job_status(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    user = _auth(request)
    job = _store().get("videojob", str(request.GET.get("jobId") or ""))
    if job is None or job["did"] != user["did"]:
        raise XrpcError(400, "InvalidRequest", "Job not found")
    status: dict[str, Any] = {"jobId": job["jobId"], "did": job["did"]}
    if job["ready_at"] > time.time():
        status.update(state="JOB_STATE_ENCODING", progress=50)
    else:
        _store().put("blob", job["cid"], {"did": job["did"], "mimeType": "video/mp4", "size": job["size"]})
        status.update(
            state="JOB_STATE_COMPLETED",
            progress=100,
            blob={"$type": "blob", "ref": {"$link": job["cid"]}, "mimeType": "video/mp4", "size": job["size"]},
        )
    return {"jobStatus": status}, {}


# --- dispatch -------------------------------------------------------------------------------

PROCEDURES = {
    "com.atproto.server.createSession": create_session,
    "com.atproto.server.refreshSession": refresh_session,
    "com.atproto.repo.uploadBlob": upload_blob,
    "com.atproto.repo.createRecord": create_record,
    "com.atproto.repo.deleteRecord": delete_record,
}
QUERIES = {
    "com.atproto.server.getSession": get_session,
    "com.atproto.server.getServiceAuth": get_service_auth,
    "com.atproto.identity.resolveHandle": resolve_handle,
    "com.atproto.repo.getRecord": get_record,
    "app.bsky.actor.getProfile": get_profile,
    "app.bsky.feed.getAuthorFeed": get_author_feed,
    "app.bsky.feed.getPosts": get_posts,
}
VIDEO = {"app.bsky.video.uploadVideo": ("POST", upload_video), "app.bsky.video.getJobStatus": ("GET", get_job_status)}


def _answer(request: HttpRequest, handler: Any, method: str) -> HttpResponse:
    if handler is None:
        return json_response({"error": "MethodNotImplemented", "message": "Method Not Implemented"}, 501)
    if request.method != method:
        return json_response({"error": "InvalidRequest", "message": f"Incorrect HTTP method ({request.method})"}, 400)
    try:
        body, headers = handler(request)
    except XrpcError as exc:
        return json_response({"error": exc.name, "message": exc.message}, exc.status)
    return json_response(body, headers=headers)


@simulator_view(SLUG)
def xrpc(request: HttpRequest, nsid: str) -> HttpResponse:
    if nsid in PROCEDURES:
        return _answer(request, PROCEDURES[nsid], "POST")
    return _answer(request, QUERIES.get(nsid), "GET")


@simulator_view(SLUG)
def video_xrpc(request: HttpRequest, nsid: str) -> HttpResponse:
    method, handler = VIDEO.get(nsid, ("GET", None))
    return _answer(request, handler, method)


def post_page(request: HttpRequest, handle: str, rkey: str) -> HttpResponse:
    """The post's page on bsky.app, as the post's link opens it."""
    user = _user_by(handle.lower())
    post = _store().get(f"posts:{user['did']}", rkey) if user else None
    if user is None or post is None:
        return pages.not_found_page("Bluesky")
    return pages.post_page(
        platform="Bluesky",
        author=_profile_basic(user)["displayName"],
        handle=f"@{user['handle']}",
        text=str(post["value"].get("text") or ""),
        avatar=pages.avatar_url(SLUG, user["did"]),
    )


urlpatterns = [
    *pages.urlpatterns,
    path("profile/<str:handle>/post/<str:rkey>", post_page),
    path("xrpc/<str:nsid>", xrpc),
    path("video/xrpc/<str:nsid>", video_xrpc),
]


# --- armed faults (platforms.sandbox.faults) ---------------------------------------------------


def _rate_limit_exceeded(*, window: int, limit: int) -> HttpResponse:
    headers = {
        "ratelimit-limit": str(limit),
        "ratelimit-remaining": "0",
        "ratelimit-reset": str(int(time.time()) + min(window, 300)),
        "ratelimit-policy": f"{limit};w={window}",
    }
    return json_response({"error": "RateLimitExceeded", "message": "Rate Limit Exceeded"}, 429, headers=headers)


FAULTS = {
    "rate_limited": lambda request: _rate_limit_exceeded(window=3600, limit=5000),
    "quota_exhausted": lambda request: _rate_limit_exceeded(window=86400, limit=35000),  # the daily write points
    "server_error": lambda request: json_response(
        {"error": "InternalServerError", "message": "Internal Server Error"}, 500
    ),
}
