"""Simulator of a Bluesky PDS (plus the AppView reads and the video service) over XRPC under
``/sandbox/bluesky/xrpc/<nsid>``: sessions with real-shaped JWTs (any handle, password
``sandbox``; unknown handles become new users), uploadBlob, createRecord/getRecord with record-key
uniqueness, getProfile/getAuthorFeed/getPosts with counts that grow (``replyCount``: the replies
the thread shows), the video service's uploadVideo/getJobStatus under
``/sandbox/bluesky/video/xrpc/``, the ``{error, message}`` envelope and the ``ratelimit-*`` headers.

Engagement: the audience (:mod:`platforms.sandbox.audience`) replies under each of the user's
posts from accounts of its own (at-uris with content ids, resolvable through getPosts);
``app.bsky.feed.getPostThread`` shows the reply tree (``depth``), with the post's threadgate; a
reply record of the user's under a post joins its thread; ``app.bsky.feed.like`` records like a
reply; a threadgate written with ``com.atproto.repo.putRecord`` hides the replies its
``hiddenReplies`` names (at most 300)."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import math
import re
import secrets
import time
from typing import Any

import grapheme
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import path

from platforms.base import Platform
from platforms.sandbox import audience, audience_ids, media_checks, pages
from platforms.sandbox.common import as_dict, bearer_token, grown, iso, json_response, sniff_mime
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
LIKE = "app.bsky.feed.like"
THREADGATE = "app.bsky.feed.threadgate"
HIDDEN_REPLIES_MAX = 300
# where each collection's records are kept, per repo (``<kind>:<did>``)
RECORDS = {POST: "posts", LIKE: "likes", THREADGATE: "threadgates"}


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


def _reply_counts(posts: list[dict[str, Any]]) -> dict[str, int]:
    """``replyCount`` of each of the user's posts, by uri: the replies whose parent is that very
    post, as getPostThread shows them (a reply to a reply counts under its own parent; one the
    threadgate hides still counts, as it is still a reply); every thread's read in the same three
    store reads."""
    roots = {p["uri"]: p for p in posts if "reply" not in p["value"]}
    for post in posts:
        root_uri = str(as_dict(as_dict(post["value"].get("reply")).get("root")).get("uri") or post["uri"])
        if root_uri not in roots and (found := _root_post(root_uri)) is not None:
            roots[root_uri] = found[1]
    shown = audience.threads(_store(), SLUG, [(r["uri"], r["indexed"]) for r in roots.values()])
    counts: dict[str, int] = {}
    for post in posts:
        if post["uri"] in roots:
            counts[post["uri"]] = audience.comment_count(shown[post["uri"]], direct_only=True)
            continue
        root_uri = str(as_dict(as_dict(post["value"].get("reply")).get("root")).get("uri") or "")
        mine = audience.comment_id(root_uri, audience_ids.own_key(post["uri"].rsplit("/", 1)[-1]))
        counts[post["uri"]] = next((c["replyCount"] for c in shown.get(root_uri, []) if c["id"] == mine), 0)
    return counts


def _post_view(
    request: HttpRequest, user: dict[str, Any], post: dict[str, Any], replies: int | None = None
) -> dict[str, Any]:
    """A postView of one of the user's posts; ``replies`` its reply count when already counted."""
    view = {
        "uri": post["uri"],
        "cid": post["cid"],
        "author": _profile_basic(user),
        "record": post["value"],
        "replyCount": _reply_counts([post])[post["uri"]] if replies is None else replies,
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
    counts = _reply_counts(page)
    body: dict[str, Any] = {"feed": [{"post": _post_view(request, user, p, counts[p["uri"]])} for p in page]}
    if offset + limit < len(posts):
        body["cursor"] = str(offset + limit)
    return body, _ratelimit(viewer["did"])


def get_posts(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    viewer = _auth(request)
    uris = request.GET.getlist("uris")
    if len(uris) > 25:
        raise XrpcError(400, "InvalidRequest", "uris must not have more than 25 elements")
    own: list[tuple[dict[str, Any], dict[str, Any]] | None] = []
    for uri in uris:
        match = re.fullmatch(r"at://([^/]+)/([^/]+)/([^/]+)", uri)
        user = _user_by(match.group(1)) if match else None
        post = _store().get(f"posts:{user['did']}", match.group(3)) if user and match else None
        own.append((user, post) if user and post else None)
    counts = _reply_counts([found[1] for found in own if found is not None])
    views = []
    for uri, found in zip(uris, own, strict=True):
        if found is not None:
            views.append(_post_view(request, found[0], found[1], counts[found[1]["uri"]]))
        elif (reply := _thread_reply(uri)) is not None:
            views.append(_reply_view(*reply))
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
        if post is None and (reply := _thread_reply(ref["uri"])) is not None:
            post = {"cid": _reply_cid(reply[0], reply[2])}
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
    if body.get("collection") == LIKE:
        return _create_like(request, user, rkey, record)
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
    _join_thread(user, rkey, record)
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
    if body.get("collection") not in (POST, LIKE) or not rkey:
        raise XrpcError(400, "InvalidRequest", "Input must have the properties collection and rkey")
    _leave_thread(user, str(body["collection"]), rkey)
    if not _store().delete(f"{RECORDS[str(body['collection'])]}:{user['did']}", rkey):
        # deleteRecord of a record that is not there succeeds too; the log says so (tests tell a
        # delete that removed the post from one that found it gone)
        request.sandbox_log["alreadyGone"] = True  # type: ignore[attr-defined]
    rev = _tid()
    return {"commit": {"cid": _cid(rev.encode(), 0x71), "rev": rev}}, _ratelimit(user["did"])


def get_record(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    user = _user_by(str(request.GET.get("repo") or "").lower())
    collection, rkey = request.GET.get("collection"), str(request.GET.get("rkey") or "")
    kind = RECORDS.get(str(collection))
    post = _store().get(f"{kind}:{user['did']}", rkey) if user and kind else None
    if post is None:
        repo = request.GET.get("repo")
        raise XrpcError(400, "RecordNotFound", f"Could not locate record: at://{repo}/{collection}/{rkey}")
    return {"uri": post["uri"], "cid": post["cid"], "value": post["value"]}, {}


# --- the audience: replies under the user's posts ------------------------------------------------


def _split_uri(uri: str) -> tuple[str, str, str]:
    """(repo, collection, rkey) of an at:// uri ("" for the parts it lacks)."""
    repo, _, rest = str(uri).removeprefix("at://").partition("/")
    collection, _, rkey = rest.partition("/")
    return repo, collection, rkey


def _fan_did(person_id: str) -> str:
    return "did:plc:" + base64.b32encode(hashlib.sha256(f"fan:{person_id}".encode()).digest()).decode().lower()[:24]


def _audience_rkey(comment: dict[str, Any]) -> str:
    """The record key of an audience reply: a TID of when it was written, made unique by its id."""
    noise = int.from_bytes(hashlib.sha256(comment["id"].encode()).digest()[:2], "big") & 0x3FF
    value = (int(comment["createdAt"] * 1_000_000) << 10) | noise
    alphabet = "234567abcdefghijklmnopqrstuvwxyz"
    return "".join(alphabet[(value >> (5 * (12 - i))) & 31] for i in range(13))


def comment_uri(comment: dict[str, Any]) -> str:
    """The at:// uri of a reply in a thread (an audience document of
    :func:`platforms.sandbox.audience.thread`): the user's own reply is its record in the user's
    repo; the audience's, a post in its author's repo."""
    post_uri, key = audience.split_id(comment["id"])
    own = audience_ids.own_platform_id(key)
    if own is not None:
        return f"at://{_split_uri(post_uri)[0]}/{POST}/{own}"
    return f"at://{_fan_did(comment['author']['id'])}/{POST}/{_audience_rkey(comment)}"


def platform_comment_id(neutral: str, parent: str = "") -> str:
    """The at:// uri this simulator gives the audience comment ``neutral`` (an id of
    :mod:`platforms.sandbox.audience`; ``parent`` its parent's, "" for one under the post), so a
    test predicts the ids a sync must find (and can act on one before any listing showed it)."""
    post_uri, key = audience.split_id(neutral)
    own = audience_ids.own_platform_id(key)
    if own is not None:
        return f"at://{_split_uri(post_uri)[0]}/{POST}/{own}"
    root = _root_post(post_uri)
    published = root[1]["indexed"] if root else 0.0
    written = audience.expected(SLUG, post_uri, published, now=math.inf)
    found = next((c for c in written if c["id"] == neutral), None)
    if found is None:
        raise KeyError(f"the audience writes no comment {neutral}")
    comment = {**found, "author": found["author"].__dict__, "fromAccount": False}
    _remember([comment])
    return comment_uri(comment)


def _remember(comments: list[dict[str, Any]]) -> None:
    """Note which audience document each shown reply's uri names (a uri is all a client has)."""
    pipe = _store().redis.pipeline()
    for comment in comments:
        if not comment["fromAccount"]:
            uri = comment_uri(comment)
            pipe.hset(_store()._key("reply-uri"), uri, str(comment["id"]))
            # its page on bsky.app: /profile/<handle>/post/<rkey>
            pipe.hset(
                _store()._key("reply-page"), f"{comment['author']['handle']}.bsky.social/{uri.rsplit('/', 1)[-1]}", uri
            )
    pipe.execute()


def _root_post(uri: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(author, post) of a post that starts a thread (a post of the user's that replies to none)."""
    did, collection, rkey = _split_uri(uri)
    user = _store().get("user", did) if collection == POST and rkey else None
    post = _store().get(f"posts:{did}", rkey) if user else None
    if user is None or post is None or "reply" in post["value"]:
        return None
    return user, post


def _audience_id(uri: str) -> str | None:
    """The audience document a reply's uri names (None: no reply under a post of the sandbox)."""
    known = _store().redis.hget(_store()._key("reply-uri"), uri)
    if known:
        return known.decode() if isinstance(known, bytes) else str(known)
    did, collection, rkey = _split_uri(uri)
    post = _store().get(f"posts:{did}", rkey) if collection == POST and rkey else None
    root = as_dict(as_dict(as_dict(post["value"] if post else {}).get("reply")).get("root")).get("uri")
    return audience.comment_id(str(root), audience_ids.own_key(rkey)) if root and root != uri else None


def _thread_reply(
    uri: str,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, dict[str, Any]]] | None:
    """(the post's author, the post, the reply as the thread shows it, every shown reply by id)
    for a reply under one of the user's posts; None when there is none (or it was deleted)."""
    comment_id = _audience_id(uri)
    root = _root_post(audience.split_id(comment_id)[0]) if comment_id else None
    if comment_id is None or root is None:
        return None
    user, post = root
    shown = {c["id"]: c for c in audience.thread(_store(), SLUG, post["uri"], post["indexed"])}
    return (user, post, shown[comment_id], shown) if comment_id in shown else None


def _reply_cid(user: dict[str, Any], comment: dict[str, Any]) -> str:
    own = audience_ids.own_platform_id(audience.split_id(comment["id"])[1])
    if own is not None:
        record = _store().get(f"posts:{user['did']}", own)
        return str(record["cid"]) if record else ""
    return _cid(f"{comment['id']}|{comment['text']}".encode(), 0x71)


def _ref(user: dict[str, Any], post: dict[str, Any], comment: dict[str, Any] | None) -> dict[str, str]:
    """The strong reference to ``comment`` (the post itself when None)."""
    if comment is None:
        return {"uri": post["uri"], "cid": post["cid"]}
    return {"uri": comment_uri(comment), "cid": _reply_cid(user, comment)}


def _reply_view(
    user: dict[str, Any], post: dict[str, Any], comment: dict[str, Any], shown: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """A reply as a postView (app.bsky.feed.defs)."""
    own = audience_ids.own_platform_id(audience.split_id(comment["id"])[1])
    stored = _store().get(f"posts:{user['did']}", own) if own is not None else None
    if stored is not None:
        record, author = stored["value"], _profile_basic(user)
    else:
        person = comment["author"]
        record = {
            "$type": POST,
            "text": comment["text"],
            "createdAt": iso(comment["createdAt"], millis=True),
            "langs": ["en"],
            "reply": {"root": _ref(user, post, None), "parent": _ref(user, post, shown.get(comment["parentId"]))},
        }
        author = {
            "did": _fan_did(person["id"]),
            "handle": f"{person['handle']}.bsky.social",
            "displayName": person["name"],
            "avatar": person["avatar_url"],
            "labels": [],
            "createdAt": iso(comment["createdAt"], millis=True),
        }
    uri = comment_uri(comment)
    viewer: dict[str, Any] = {"threadMuted": False, "replyDisabled": False, "embeddingDisabled": False}
    like = _store().redis.hget(_store()._key("like-of", user["did"]), uri)
    if comment["liked"] and like:
        viewer["like"] = like.decode() if isinstance(like, bytes) else str(like)
    return {
        "uri": uri,
        "cid": _reply_cid(user, comment),
        "author": author,
        "record": record,
        "replyCount": comment["replyCount"],
        "repostCount": 0,
        "likeCount": comment["likeCount"],
        "quoteCount": 0,
        "indexedAt": iso(comment["createdAt"], millis=True),
        "viewer": viewer,
        "labels": [],
    }


def _threadgate_view(did: str, rkey: str) -> dict[str, Any] | None:
    gate = _store().get(f"threadgates:{did}", rkey)
    return {"uri": gate["uri"], "cid": gate["cid"], "record": gate["value"], "lists": []} if gate else None


def _depth(request: HttpRequest, name: str, default: int) -> int:
    try:
        value = int(request.GET.get(name, default))
    except ValueError:
        raise XrpcError(400, "InvalidRequest", f"{name} must be an integer")
    if not 0 <= value <= 1000:
        raise XrpcError(400, "InvalidRequest", f"{name} must be between 0 and 1000")
    return value


def get_post_thread(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    """``app.bsky.feed.getPostThread``: the post at ``uri`` with its replies ``depth`` levels down
    (oldest first) and its parents ``parentHeight`` levels up, and the thread's threadgate; a post
    that does not exist answers the ``NotFound`` error."""
    viewer = _auth(request)
    uri = str(request.GET.get("uri") or "")
    depth, height = _depth(request, "depth", 6), _depth(request, "parentHeight", 80)
    root = _root_post(uri)
    reply = None if root is not None else _thread_reply(uri)
    if root is None and reply is None:
        raise XrpcError(400, "NotFound", f"Post not found: {uri}")
    user, post = root if root is not None else (reply[0], reply[1])  # type: ignore[index]
    shown = {c["id"]: c for c in audience.thread(_store(), SLUG, post["uri"], post["indexed"])}
    _remember(list(shown.values()))
    children: dict[str, list[dict[str, Any]]] = {}
    for comment in shown.values():
        children.setdefault(comment["parentId"], []).append(comment)
    gate = _threadgate_view(user["did"], post["uri"].rsplit("/", 1)[-1])
    replies = audience.comment_count(list(shown.values()), direct_only=True)
    root_view = {**_post_view(request, user, post, replies), **({"threadgate": gate} if gate else {})}

    def view(comment_id: str) -> dict[str, Any]:
        return root_view if not comment_id else _reply_view(user, post, shown[comment_id], shown)

    def down(comment_id: str, level: int) -> dict[str, Any]:
        node: dict[str, Any] = {"$type": "app.bsky.feed.defs#threadViewPost", "post": view(comment_id)}
        if level < depth:
            node["replies"] = [down(c["id"], level + 1) for c in children.get(comment_id, [])]
        return node

    anchor = reply[2]["id"] if reply is not None else ""
    thread = down(anchor, 0)
    node, parent_id = thread, shown[anchor]["parentId"] if anchor else None
    for _ in range(height):
        if parent_id is None:
            break
        node["parent"] = {"$type": "app.bsky.feed.defs#threadViewPost", "post": view(parent_id)}
        node, parent_id = node["parent"], (shown[parent_id]["parentId"] if parent_id else None)
    body: dict[str, Any] = {"thread": thread}
    if gate:
        body["threadgate"] = gate
    return body, _ratelimit(viewer["did"])


def _join_thread(user: dict[str, Any], rkey: str, record: dict[str, Any]) -> None:
    """The user's new reply record under one of their posts joins that post's thread."""
    reply = as_dict(record.get("reply"))
    root_uri = str(as_dict(reply.get("root")).get("uri") or "")
    parent_uri = str(as_dict(reply.get("parent")).get("uri") or "")
    if not reply or _root_post(root_uri) is None:
        return
    parent_doc = "" if parent_uri == root_uri else (_audience_id(parent_uri) or "")
    me = _profile_basic(user)
    audience.add_reply(
        _store(),
        root_uri,
        parent_doc,
        str(record.get("text") or ""),
        author=audience.Person(user["did"], me["displayName"], user["handle"], me["avatar"]),
        reply_id=audience.comment_id(root_uri, audience_ids.own_key(rkey)),
    )


def _leave_thread(user: dict[str, Any], collection: str, rkey: str) -> None:
    """A deleted reply of the user's leaves its thread; a deleted like unlikes its reply."""
    if collection == LIKE:
        like = _store().get(f"likes:{user['did']}", rkey)
        subject = str(as_dict(as_dict(like["value"] if like else {}).get("subject")).get("uri") or "")
        if subject and (comment_id := _audience_id(subject)) is not None:
            audience.set_state(_store(), comment_id, liked=False)
            _store().redis.hdel(_store()._key("like-of", user["did"]), subject)
        return
    comment_id = _audience_id(f"at://{user['did']}/{POST}/{rkey}")
    if comment_id is not None:
        audience.set_state(_store(), comment_id, deleted=True)


def _create_like(
    request: HttpRequest, user: dict[str, Any], rkey: str, record: dict[str, Any]
) -> tuple[Any, dict[str, str]]:
    """createRecord of an ``app.bsky.feed.like``: its ``subject`` (a strong reference) is liked."""
    subject = as_dict(record.get("subject"))
    request.sandbox_log = {"like": True, "remoteId": subject.get("uri"), "marker": rkey or None}  # type: ignore[attr-defined]
    invalid = "Invalid app.bsky.feed.like record: "
    if (
        record.get("$type") != LIKE
        or not isinstance(subject.get("uri"), str)
        or not isinstance(subject.get("cid"), str)
    ):
        raise XrpcError(400, "InvalidRequest", invalid + 'Record/subject must have the properties "uri", "cid"')
    if rkey and not TID.match(rkey):
        raise XrpcError(400, "InvalidRequest", f"Invalid record key for {LIKE}: {rkey}")
    rkey = rkey or _tid()
    uri = f"at://{user['did']}/{LIKE}/{rkey}"
    cid = _cid(json.dumps(record, sort_keys=True).encode(), 0x71)
    _, created = _store().create_once(f"likes:{user['did']}", rkey, {"uri": uri, "cid": cid, "value": record})
    if not created:
        request.sandbox_log["repeat"] = True  # type: ignore[attr-defined]
        raise XrpcError(400, "InvalidRequest", f"Record already exists: {uri}")
    _store().redis.hset(_store()._key("like-of", user["did"]), subject["uri"], uri)
    comment_id = _audience_id(subject["uri"])
    if comment_id is not None:
        audience.set_state(_store(), comment_id, liked=True)
    rev = _tid()
    return {
        "uri": uri,
        "cid": cid,
        "commit": {"cid": _cid(rev.encode(), 0x71), "rev": rev},
        "validationStatus": "valid",
    }, _ratelimit(user["did"])


def put_record(request: HttpRequest) -> tuple[Any, dict[str, str]]:
    """``com.atproto.repo.putRecord`` of a post's ``app.bsky.feed.threadgate`` (the only record the
    sandbox lets a client replace): under the post's own rkey, ``hiddenReplies`` at most 300;
    ``swapRecord`` compares with the cid the record has now. The replies it names are hidden, the
    ones it no longer names shown again."""
    user = _auth(request)
    body = json_body(request)
    record = as_dict(body.get("record"))
    rkey = str(body.get("rkey") or "")
    post_uri = f"at://{user['did']}/{POST}/{rkey}"
    request.sandbox_log = {"threadgate": True, "remoteId": post_uri}  # type: ignore[attr-defined]
    if str(body.get("repo")) not in {user["did"], user["handle"]}:
        raise XrpcError(400, "InvalidRequest", "Invalid repo")
    if body.get("collection") != THREADGATE:
        raise XrpcError(400, "InvalidRequest", f"Unsupported collection: {body.get('collection')}")
    invalid = "Invalid app.bsky.feed.threadgate record: "
    hidden = record.get("hiddenReplies", [])
    allow = record.get("allow", [])
    if record.get("$type") != THREADGATE or record.get("post") != post_uri:
        raise XrpcError(400, "InvalidRequest", invalid + "Record/post must be the post with the same record key")
    if not isinstance(hidden, list) or not all(isinstance(u, str) for u in hidden):
        raise XrpcError(400, "InvalidRequest", invalid + "Record/hiddenReplies must be an array of at-uris")
    if len(hidden) > HIDDEN_REPLIES_MAX:
        raise XrpcError(400, "InvalidRequest", invalid + "Record/hiddenReplies must not have more than 300 elements")
    if not isinstance(allow, list) or len(allow) > 5:
        raise XrpcError(400, "InvalidRequest", invalid + "Record/allow must not have more than 5 elements")
    try:
        dt.datetime.fromisoformat(str(record.get("createdAt")).replace("Z", "+00:00"))
    except ValueError:
        raise XrpcError(400, "InvalidRequest", invalid + "Record/createdAt must be an valid atproto datetime")
    if _root_post(post_uri) is None:
        raise XrpcError(400, "InvalidRequest", f"Could not find post: {post_uri}")
    current = _store().get(f"threadgates:{user['did']}", rkey)
    if "swapRecord" in body and body["swapRecord"] != (current["cid"] if current else None):
        raise XrpcError(400, "InvalidSwap", f"Record was at {current['cid'] if current else 'null'}")
    uri = f"at://{user['did']}/{THREADGATE}/{rkey}"
    cid = _cid(json.dumps(record, sort_keys=True).encode(), 0x71)
    _store().put(f"threadgates:{user['did']}", rkey, {"uri": uri, "cid": cid, "value": record})
    before = set(as_dict(current["value"]).get("hiddenReplies") or []) if current else set()
    for reply_uri in before | set(hidden):
        comment_id = _audience_id(reply_uri)
        if comment_id is not None and audience.split_id(comment_id)[0] == post_uri:
            audience.set_state(_store(), comment_id, hidden=reply_uri in hidden)
    rev = _tid()
    return {
        "uri": uri,
        "cid": cid,
        "commit": {"cid": _cid(rev.encode(), 0x71), "rev": rev},
        "validationStatus": "valid",
    }, _ratelimit(user["did"])


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
    "com.atproto.repo.putRecord": put_record,
}
QUERIES = {
    "com.atproto.server.getSession": get_session,
    "com.atproto.server.getServiceAuth": get_service_auth,
    "com.atproto.identity.resolveHandle": resolve_handle,
    "com.atproto.repo.getRecord": get_record,
    "app.bsky.actor.getProfile": get_profile,
    "app.bsky.feed.getAuthorFeed": get_author_feed,
    "app.bsky.feed.getPosts": get_posts,
    "app.bsky.feed.getPostThread": get_post_thread,
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
        fan = _store().redis.hget(_store()._key("reply-page"), f"{handle.lower()}/{rkey}")
        reply = _thread_reply(fan.decode() if isinstance(fan, bytes) else str(fan)) if fan else None
        if reply is None:
            return pages.not_found_page("Bluesky")
        person = reply[2]["author"]
        return pages.post_page(
            platform="Bluesky",
            author=person["name"],
            handle=f"@{handle}",
            text=reply[2]["text"],
            avatar=person["avatar_url"],
        )
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
