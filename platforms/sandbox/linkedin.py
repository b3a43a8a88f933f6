"""LinkedIn versioned REST API simulator: OAuth (authorization, accessToken with refresh),
OpenID userinfo, Images / Videos / Documents upload flows (initializeUpload → PUT → finalize →
PROCESSING then AVAILABLE), the Posts API (201 + ``x-restli-id``, duplicate detection, the
author finder), socialActions, memberCreatorPostAnalytics, memberFollowersCount, and LinkedIn's
error envelope ``{status, serviceErrorCode, code, message}``.

Engagement: the audience (:mod:`platforms.sandbox.audience`) comments on each of the member's
posts, with comment URNs ``urn:li:comment:(<post urn>,<id>)`` whose id carries the comment's key.
``/rest/socialActions/{post urn}/comments`` lists the first-level comments and
``/rest/socialActions/{comment urn}/comments`` the replies under one (``start``/``count`` paging,
oldest first); a reply names its ``parentComment`` (one level only, as on LinkedIn); ``GET`` and
``DELETE .../comments/{id}`` read and delete one (the member's own only); ``POST /rest/reactions``
likes one."""

from __future__ import annotations

import re
import secrets
import time
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path

from platforms.base import Platform
from platforms.sandbox import audience, audience_ids, media_checks, pages
from platforms.sandbox.common import as_dict, bearer_token, digest, grown, redirect_with, sniff_kind
from platforms.sandbox.scenarios import marker
from platforms.sandbox.store import SandboxStore
from platforms.sandbox.views import json_body, simulator_view

SLUG = "linkedin"
store = SandboxStore(SLUG)
view = simulator_view(SLUG)

ACCESS_TTL = 60 * 86400
REFRESH_TTL = 365 * 86400
PART_SIZE = 4 * 1024 * 1024
VERSION = re.compile(r"^20\d{4}(\.\d{2})?$")
ENTITY = re.compile(r"^\((share|ugcPost):(urn:li:(?:share|ugcPost):[0-9]+)\)$")
COMMENT_URN = re.compile(r"^urn:li:comment:\((urn:li:(?:share|ugcPost|activity):[0-9]+),([0-9]+)\)$")
AUDIENCE_COMMENT_IDS = 7_000_000_000_000_000_000  # the audience's comment ids: this plus the key's number
REACTIONS = {"LIKE", "PRAISE", "EMPATHY", "INTEREST", "APPRECIATION", "ENTERTAINMENT"}
ASSET_KINDS = {"images": "image", "videos": "video", "documents": "document"}
DUPLICATE_WINDOW = 600


def _error(status: int, code: str, message: str, service_code: int = 100) -> JsonResponse:
    return JsonResponse(
        {"status": status, "serviceErrorCode": service_code, "code": code, "message": message}, status=status
    )


def _unauthorized() -> JsonResponse:
    return _error(401, "INVALID_ACCESS_TOKEN", "Invalid access token", 65600)


def _member(request: HttpRequest, *, versioned: bool = True) -> tuple[dict[str, Any] | None, JsonResponse | None]:
    token = store.token(bearer_token(request))
    if not token or token.get("kind") != "access" or store.is_revoked(token["account_id"]):
        return None, _unauthorized()
    if versioned and not VERSION.match(request.headers.get("LinkedIn-Version", "")):
        return None, _error(
            426, "NONEXISTENT_VERSION", f"Requested version {request.headers.get('LinkedIn-Version', '')} is not active"
        )
    return store.get("member", token["account_id"]), None


# --- OAuth and profile ---------------------------------------------------------------------
@view
def authorization(request: HttpRequest) -> HttpResponse:
    redirect_uri = request.GET.get("redirect_uri", "")
    if not request.GET.get("client_id") or not redirect_uri or request.GET.get("response_type") != "code":
        return JsonResponse({"error": "invalid_request", "error_description": "missing parameters"}, status=400)
    member_id = secrets.token_urlsafe(8).replace("-", "x").replace("_", "y")
    store.put("member", member_id, {"id": member_id, "name": f"Sandbox Member {member_id[:4]}", "created": time.time()})
    code = store.issue_token(
        member_id, kind="code", ttl=600, redirect_uri=redirect_uri, scope=request.GET.get("scope", "")
    )
    return redirect_with(redirect_uri, code=code, state=request.GET.get("state", ""))


@view
def access_token(request: HttpRequest) -> HttpResponse:
    def refused(error: str, description: str) -> JsonResponse:
        return JsonResponse({"error": error, "error_description": description}, status=400)

    if request.method != "POST" or not request.POST.get("client_id") or not request.POST.get("client_secret"):
        return JsonResponse(
            {"error": "invalid_client", "error_description": "Client authentication failed"}, status=401
        )
    grant = request.POST.get("grant_type")
    if grant == "authorization_code":
        code = store.token(request.POST.get("code", ""))
        if not code or code.get("kind") != "code" or code.get("redirect_uri") != request.POST.get("redirect_uri"):
            return refused("invalid_request", "Unable to retrieve access token: authorization code not found")
        store.revoke_token(request.POST["code"])
        member_id, scope = code["account_id"], code.get("scope", "")
    elif grant == "refresh_token":
        old = store.token(request.POST.get("refresh_token", ""))
        if not old or old.get("kind") != "refresh" or store.is_revoked(old["account_id"]):
            return refused("invalid_request", "The provided refresh token is invalid or has expired")
        member_id, scope = old["account_id"], old.get("scope", "")
    else:
        return refused("unsupported_grant_type", "grant_type is not supported")
    return JsonResponse(
        {
            "access_token": store.issue_token(member_id, ttl=ACCESS_TTL),
            "expires_in": ACCESS_TTL,
            "refresh_token": store.issue_token(member_id, kind="refresh", ttl=REFRESH_TTL, scope=scope),
            "refresh_token_expires_in": REFRESH_TTL,
            "scope": scope.replace(" ", ","),
        }
    )


@view
def userinfo(request: HttpRequest) -> HttpResponse:
    member, problem = _member(request, versioned=False)
    if member is None:
        return problem or _unauthorized()
    return JsonResponse(
        {
            "sub": member["id"],
            "email_verified": True,
            "name": member["name"],
            "locale": "en-US",
            "given_name": "Sandbox",
            "family_name": f"Member {member['id'][:4]}",
            "email": f"{member['id']}@example.com",
            "picture": pages.avatar_url(SLUG, member["id"]),
        }
    )


@view
def followers_count(request: HttpRequest) -> HttpResponse:
    member, problem = _member(request)
    if member is None:
        return problem or _unauthorized()
    if request.GET.get("q") != "me":
        return _error(400, "ILLEGAL_ARGUMENT", "q=me is required")
    return JsonResponse(
        {
            "paging": {"start": 0, "count": 10, "links": []},
            "elements": [{"memberFollowersCount": grown(member["created"], 15, base=500)}],
        }
    )


# --- media assets --------------------------------------------------------------------------
@view
def assets(request: HttpRequest, collection: str) -> HttpResponse:
    member, problem = _member(request)
    if member is None:
        return problem or _unauthorized()
    kind = ASSET_KINDS.get(collection)
    action = request.GET.get("action")
    if kind is None or request.method != "POST" or action not in {"initializeUpload", "finalizeUpload"}:
        return _error(400, "ILLEGAL_ARGUMENT", "Unsupported action")
    body = json_body(request)
    if action == "finalizeUpload":
        return _finalize(member, body.get("finalizeUploadRequest") or {})
    init = body.get("initializeUploadRequest") or {}
    if init.get("owner") != f"urn:li:person:{member['id']}":
        return _error(403, "ACCESS_DENIED", f"Not enough permissions to upload as {init.get('owner')}")
    urn = f"urn:li:{kind}:D{store.new_id()}"
    size = int(init.get("fileSizeBytes") or 0)
    if kind == "video" and not 75 <= size <= 500 * 1024 * 1024:
        return _error(400, "ILLEGAL_ARGUMENT", "fileSizeBytes must be between 75 bytes and 500 MB for a video")
    parts = max(1, -(-size // PART_SIZE)) if kind == "video" else 1
    asset = {
        "urn": urn,
        "kind": kind,
        "owner": member["id"],
        "status": "WAITING_UPLOAD",
        "size": size,
        "parts": parts,
        "etags": {},
        "polls": 0,
        "token": digest("token", urn) if kind == "video" else "",
    }
    store.put("asset", urn, asset)
    base = request.build_absolute_uri(f"/sandbox/{SLUG}/_upload/{urn}")
    if kind == "video":
        instructions = [
            {"uploadUrl": f"{base}/{i}", "firstByte": i * PART_SIZE, "lastByte": min(size, (i + 1) * PART_SIZE) - 1}
            for i in range(parts)
        ]
        value: dict[str, Any] = {
            "uploadUrlsExpireAt": int(time.time() * 1000) + 86_400_000,
            "video": urn,
            "uploadInstructions": instructions,
            "uploadToken": asset["token"],
        }
    else:
        value = {"uploadUrlExpiresAt": int(time.time() * 1000) + 86_400_000, "uploadUrl": f"{base}/0", kind: urn}
    return JsonResponse({"value": value})


def _finalize(member: dict[str, Any], request_body: dict[str, Any]) -> JsonResponse:
    asset = store.get("asset", str(request_body.get("video") or ""))
    if asset is None or asset["owner"] != member["id"]:
        return _error(404, "NOT_FOUND", "Video not found")
    expected = [asset["etags"].get(str(i)) for i in range(asset["parts"])]
    if request_body.get("uploadToken", "") != asset["token"] or request_body.get("uploadedPartIds") != expected:
        return _error(400, "ILLEGAL_ARGUMENT", "uploadedPartIds do not match the uploaded video parts")
    store.update("asset", asset["urn"], status="PROCESSING")
    return JsonResponse({})


@view
def upload(request: HttpRequest, urn: str, part: int) -> HttpResponse:
    """Stands in for LinkedIn's upload host (the ``uploadUrl`` values)."""
    asset = store.get("asset", urn)
    token = store.token(bearer_token(request))
    if asset is None or not token or token["account_id"] != asset["owner"] or request.method != "PUT":
        return _error(401, "INVALID_ACCESS_TOKEN", "Invalid upload credentials", 65600)
    data = request.body
    if part >= asset["parts"] or (part == 0 and sniff_kind(data) != asset["kind"]):
        store.update("asset", urn, status="PROCESSING_FAILED" if asset["kind"] != "image" else "WAITING_UPLOAD")
        return _error(400, "BAD_REQUEST", f"The uploaded file is not a valid {asset['kind']}")
    if asset["parts"] == 1 and (problem := media_checks.refusal(Platform.LINKEDIN, "FEED", data)) is not None:
        store.update("asset", urn, status="PROCESSING_FAILED" if asset["kind"] != "image" else "WAITING_UPLOAD")
        return _error(400, "BAD_REQUEST", problem)
    etag = f"/ambry-video/signedId/{digest(urn, part, len(data))}"
    asset["etags"][str(part)] = etag
    if asset["kind"] == "image":
        asset["status"] = "AVAILABLE"
    elif asset["kind"] == "document":
        asset["status"] = "PROCESSING"
    store.put("asset", urn, asset)
    return HttpResponse(status=201, headers={"ETag": etag})


@view
def asset_status(request: HttpRequest, collection: str, urn: str) -> HttpResponse:
    member, problem = _member(request)
    if member is None:
        return problem or _unauthorized()
    asset = store.get("asset", urn)
    if asset is None or asset["owner"] != member["id"] or ASSET_KINDS.get(collection) != asset["kind"]:
        return _error(404, "NOT_FOUND", f"{collection[:-1].title()} not found")
    if asset["status"] == "PROCESSING":  # available from the second status read on
        asset = (
            store.update("asset", urn, polls=asset["polls"] + 1, status="AVAILABLE" if asset["polls"] else "PROCESSING")
            or asset
        )
    return JsonResponse({"id": urn, "owner": f"urn:li:person:{member['id']}", "status": asset["status"]})


# --- posts ---------------------------------------------------------------------------------
def _content_problem(content: dict[str, Any], member: dict[str, Any]) -> str | None:
    ids = [str((content.get("media") or {}).get("id") or "")] if "media" in content else []
    if "multiImage" in content:
        ids = [str(i.get("id") or "") for i in (content["multiImage"].get("images") or [])]
        if not 2 <= len(ids) <= 20:
            return "multiImage needs 2 to 20 images"
    for urn in ids:
        asset = store.get("asset", urn)
        if asset is None or asset["owner"] != member["id"] or asset["status"] != "AVAILABLE":
            return f"Media {urn} is not available"
    return None


def _post_view(post: dict[str, Any]) -> dict[str, Any]:
    return {
        **{k: v for k, v in post.items() if k not in {"member", "created", "edited"}},
        "createdAt": int(post["created"] * 1000),
        "publishedAt": int(post["created"] * 1000),
        "lastModifiedAt": int((post.get("edited") or post["created"]) * 1000),
        "lifecycleStateInfo": {"isEditedByAuthor": bool(post.get("edited"))},
    }


@view
def posts(request: HttpRequest) -> HttpResponse:
    member, problem = _member(request)
    if member is None:
        return problem or _unauthorized()
    author = f"urn:li:person:{member['id']}"
    if request.method == "GET":
        if request.GET.get("q") != "author" or request.GET.get("author") != author:
            return _error(
                403, "ACCESS_DENIED", "Not enough permissions to access: partnerApiPostsExternal.FINDER-author"
            )
        mine = sorted((p for p in store.all("post") if p["member"] == member["id"]), key=lambda p: -p["created"])
        start, count = int(request.GET.get("start") or 0), min(int(request.GET.get("count") or 10), 100)
        return JsonResponse(
            {
                "paging": {"start": start, "count": count, "total": len(mine), "links": []},
                "elements": [_post_view(p) for p in mine[start : start + count]],
            }
        )
    body = json_body(request)
    commentary = str(body.get("commentary") or "")
    scenario = marker(commentary)
    if scenario == "unauthorized":
        return _unauthorized()
    request.sandbox_log = {"publish": True, "marker": None}  # type: ignore[attr-defined]
    if scenario == "flaky" and store.first_time(digest("flaky", member["id"], commentary)):
        return _error(500, "INTERNAL_SERVER_ERROR", "Internal Server Error", 0)
    if scenario == "fail":
        return _error(422, "UNPROCESSABLE_ENTITY", "Commentary violates the professional community policies")
    if body.get("author") != author:
        return _error(403, "ACCESS_DENIED", f"Not enough permissions to post as {body.get('author')}")
    if (
        len(commentary) > 3000
        or body.get("lifecycleState") != "PUBLISHED"
        or not body.get("distribution")
        or body.get("visibility") not in {"PUBLIC", "CONNECTIONS", "LOGGED_IN"}
    ):
        return _error(
            422,
            "UNPROCESSABLE_ENTITY",
            "commentary ≤ 3000, visibility, distribution and lifecycleState=PUBLISHED are required",
        )
    content = body.get("content") or {}
    media_problem = _content_problem(content, member)
    if media_problem:
        return _error(400, "ILLEGAL_ARGUMENT", media_problem)
    fingerprint = digest(member["id"], commentary, content)
    duplicate = store.get("fingerprint", fingerprint)
    if duplicate and time.time() - duplicate["at"] < DUPLICATE_WINDOW:
        return _error(422, "DUPLICATE_POST", f"Content is a duplicate of {duplicate['urn']}", 0)
    urn = f"urn:li:share:{store.new_id()}"
    store.put(
        "post",
        urn,
        {
            "id": urn,
            "member": member["id"],
            "author": author,
            "commentary": commentary,
            "visibility": body["visibility"],
            "distribution": body["distribution"],
            "lifecycleState": "PUBLISHED",
            "content": content,
            "created": time.time(),
            "isReshareDisabledByAuthor": bool(body.get("isReshareDisabledByAuthor")),
        },
    )
    store.put("fingerprint", fingerprint, {"urn": urn, "at": time.time()})
    request.sandbox_log["remoteId"] = urn  # type: ignore[attr-defined]
    return HttpResponse(status=201, headers={"x-restli-id": urn, "x-linkedin-id": urn})


@view
def post_detail(request: HttpRequest, urn: str) -> HttpResponse:
    """``GET /rest/posts/{urn}``; ``POST`` with ``X-RestLi-Method: PARTIAL_UPDATE`` and
    ``{"patch": {"$set": {"commentary": …}}}`` (204; only the commentary may change);
    ``DELETE`` (204, for a post already deleted as well: LinkedIn's deletes are idempotent)."""
    member, problem = _member(request)
    if member is None:
        return problem or _unauthorized()
    method = request.headers.get("X-RestLi-Method", "").upper()
    post = store.get("post", urn)
    if request.method == "DELETE":
        request.sandbox_log = {"delete": True, "remoteId": urn}  # type: ignore[attr-defined]
        if post is not None and post["member"] != member["id"]:
            return _error(403, "ACCESS_DENIED", f"Not enough permissions to delete {urn}")
        store.delete("post", urn)
        return HttpResponse(status=204)
    if post is None or post["member"] != member["id"]:
        if request.method == "POST":
            request.sandbox_log = {"edit": True, "remoteId": urn}  # type: ignore[attr-defined]
        return _error(404, "NOT_FOUND", f"Post {urn} does not exist")
    if request.method == "GET":
        return JsonResponse(_post_view(post))
    if request.method != "POST" or method != "PARTIAL_UPDATE":
        return _error(400, "ILLEGAL_ARGUMENT", "Only PARTIAL_UPDATE is supported on a post")
    request.sandbox_log = {"edit": True, "remoteId": urn}  # type: ignore[attr-defined]
    changes = as_dict(as_dict(json_body(request).get("patch")).get("$set"))
    unknown = sorted(set(changes) - {"commentary", "contentCallToActionLabel", "contentLandingPage", "adContext"})
    if not changes or unknown:
        return _error(422, "UNPROCESSABLE_ENTITY", f"Field(s) cannot be updated: {', '.join(unknown) or 'none given'}")
    commentary = str(changes.get("commentary", post["commentary"]))
    request.sandbox_log["text"] = commentary[:80]  # type: ignore[attr-defined]
    scenario = marker(commentary)
    if scenario == "unauthorized":
        return _unauthorized()
    if scenario == "fail":
        return _error(422, "UNPROCESSABLE_ENTITY", "Commentary violates the professional community policies")
    if len(commentary) > 3000:
        return _error(422, "UNPROCESSABLE_ENTITY", "commentary must be at most 3000 characters")
    store.update("post", urn, commentary=commentary, edited=time.time())
    return HttpResponse(status=204)


@view
def revoke(request: HttpRequest) -> HttpResponse:
    """``POST /oauth/v2/revoke`` with the app's credentials: the token stops working (200, for a
    token already revoked as well)."""
    request.sandbox_log = {"revoke": True}  # type: ignore[attr-defined]
    if request.method != "POST" or not request.POST.get("client_id") or not request.POST.get("client_secret"):
        return JsonResponse(
            {"error": "invalid_client", "error_description": "Client authentication failed"}, status=401
        )
    if not request.POST.get("token"):
        return JsonResponse({"error": "invalid_request", "error_description": "token is required"}, status=400)
    store.revoke_token(request.POST["token"])
    return HttpResponse(status=200)


def _own_post(member: dict[str, Any], urn: str) -> dict[str, Any] | None:
    post = store.get("post", urn)
    return post if post and post["member"] == member["id"] else None


# --- comments: the member's own and the audience's ----------------------------------------------


def comment_urn(comment: dict[str, Any]) -> str:
    """The URN of a comment under one of the member's posts (an audience document of
    :func:`platforms.sandbox.audience.thread`): the member's own keeps its id; the audience's id
    carries its key."""
    post_urn, key = audience.split_id(comment["id"])
    own = audience_ids.own_platform_id(key)
    number = own if own is not None else str(AUDIENCE_COMMENT_IDS + (audience_ids.key_number(key) or 0))
    return f"urn:li:comment:({post_urn},{number})"


def platform_comment_id(neutral: str, parent: str = "") -> str:
    """The id this simulator gives the audience comment ``neutral`` (an id of
    :mod:`platforms.sandbox.audience`; ``parent`` its parent's, "" for one under the post), so a
    test predicts the ids a sync must find."""
    return comment_urn({"id": neutral})


def _audience_id(post_urn: str, number: str) -> str | None:
    """The audience document comment ``number`` of ``post_urn`` is (None: no such comment)."""
    stored = store.get("comment", number)
    if stored is not None:
        return audience.comment_id(post_urn, audience_ids.own_key(number)) if stored["object"] == post_urn else None
    offset = int(number) - AUDIENCE_COMMENT_IDS
    key = audience_ids.key_of_number(offset) if 0 <= offset < 10**audience_ids.KEY_DIGITS else None
    return audience.comment_id(post_urn, key) if key else None


def _thread(post: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in audience.thread(store, SLUG, post["id"], post["created"])}


def _thread_comment(
    member: dict[str, Any], urn: str
) -> tuple[dict[str, Any], dict[str, Any], dict[str, dict[str, Any]]] | None:
    """(the post, the comment as LinkedIn shows it now, every shown comment by id) for a comment on
    one of the member's posts; None when there is none (never written, not yet, or deleted)."""
    match = COMMENT_URN.match(urn)
    post = _own_post(member, match.group(1)) if match else None
    comment_id = _audience_id(match.group(1), match.group(2)) if match and post else None
    if post is None or comment_id is None:
        return None
    shown = _thread(post)
    return (post, shown[comment_id], shown) if comment_id in shown else None


def _comment_json(member: dict[str, Any], comment: dict[str, Any], shown: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A comment entity of the Comments API."""
    urn = comment_urn(comment)
    post_urn = audience.split_id(comment["id"])[0]
    actor = f"urn:li:person:{comment['author']['id']}"
    at = int(comment["createdAt"] * 1000)
    entity: dict[str, Any] = {
        "actor": actor,
        "agent": actor,
        "commentUrn": urn,
        "$URN": urn,
        "id": urn.rsplit(",", 1)[-1].rstrip(")"),
        "created": {"actor": actor, "time": at},
        "lastModified": {"actor": actor, "time": at},
        "object": post_urn,
        "message": {"text": comment["text"], "attributes": []},
        "likesSummary": {
            "selectedLikes": [],
            "aggregatedTotalLikes": comment["likeCount"],
            "likedByCurrentUser": comment["liked"],
            "totalLikes": comment["likeCount"],
        },
        "commentsSummary": {
            "selectedComments": [],
            "totalFirstLevelComments": comment["replyCount"],
            "aggregatedTotalComments": comment["replyCount"],
        },
    }
    parent = shown.get(comment["parentId"])
    if parent is not None:
        entity["parentComment"] = comment_urn(parent)
    return entity


def _paged(request: HttpRequest, elements: list[dict[str, Any]]) -> HttpResponse:
    try:
        start, count = int(request.GET.get("start") or 0), int(request.GET.get("count") or 10)
    except ValueError:
        return _error(400, "ILLEGAL_ARGUMENT", "start and count must be integers")
    if start < 0 or not 0 < count <= 100:
        return _error(400, "ILLEGAL_ARGUMENT", "start must be at least 0 and count within 1..100")
    size = audience_ids.page_size(count)
    links = []
    if start + size < len(elements):
        query = f"start={start + size}&count={count}"
        links.append({"rel": "next", "type": "application/json", "href": f"{request.path}?{query}"})
    return JsonResponse(
        {
            "paging": {"start": start, "count": size, "total": len(elements), "links": links},
            "elements": elements[start : start + size],
        }
    )


@view
def social_action_comments(request: HttpRequest, urn: str) -> HttpResponse:
    """``/rest/socialActions/{target}/comments``. ``GET``: the first-level comments of a post of
    the member's (target: the post) or the replies to one (target: the comment), oldest first,
    paged. ``POST``: a comment by ``actor`` (the member) on their own post, or a reply when the
    target is a first-level comment (``parentComment`` names it, ``object`` is the post), answered
    201 with the comment entity; the body recorded."""
    member, problem = _member(request)
    if member is None:
        return problem or _unauthorized()
    if request.method not in ("GET", "POST"):
        return _error(405, "METHOD_NOT_ALLOWED", "Method not allowed")
    post = _own_post(member, urn)
    parent = _thread_comment(member, urn) if post is None else None
    if post is None and parent is None:
        return _error(404, "NOT_FOUND", f"Not Found: {urn}")
    if request.method == "GET":
        if post is not None:
            shown = _thread(post)
            under = ""
        else:
            assert parent is not None
            post, under, shown = parent[0], parent[1]["id"], parent[2]
        elements = [_comment_json(member, c, shown) for c in shown.values() if c["parentId"] == under]
        return _paged(request, elements)
    body = json_body(request)
    text = str((body.get("message") or {}).get("text") or "") if isinstance(body.get("message"), dict) else ""
    actor = f"urn:li:person:{member['id']}"
    post_urn = urn if post is not None else parent[0]["id"]  # type: ignore[index]
    if body.get("actor") != actor or body.get("object") != post_urn or not text.strip():
        return _error(422, "UNPROCESSABLE_ENTITY", "actor, object and message.text are required", 101)
    parent_doc = ""
    if parent is not None:
        if body.get("parentComment") != urn:
            return _error(422, "UNPROCESSABLE_ENTITY", "parentComment must be the comment replied to", 101)
        if parent[1]["parentId"]:
            return _error(400, "ILLEGAL_ARGUMENT", "A reply can only be made to a first-level comment")
        parent_doc = parent[1]["id"]
    comment_id = store.new_id()
    comment_urn_ = f"urn:li:comment:({post_urn},{comment_id})"
    store.put(
        "comment",
        comment_id,
        {"id": comment_id, "urn": comment_urn_, "object": post_urn, "text": text, "member": member["id"]},
    )
    me = audience.Person(member["id"], member["name"], "", pages.avatar_url(SLUG, member["id"]))
    audience.add_reply(
        store,
        post_urn,
        parent_doc,
        text,
        author=me,
        reply_id=audience.comment_id(post_urn, audience_ids.own_key(comment_id)),
    )
    log = {"comment": True, "on": urn, "remoteId": comment_urn_, "body": body}
    if parent is not None:
        log["replyTo"] = urn
    request.sandbox_log = log  # type: ignore[attr-defined]
    entity = {"id": comment_id, "$URN": comment_urn_, "actor": actor, "object": post_urn, "message": {"text": text}}
    if parent is not None:
        entity["parentComment"] = urn
    response = JsonResponse(entity, status=201)
    response["x-restli-id"] = comment_urn_
    return response


@view
def social_action_comment(request: HttpRequest, urn: str, comment_id: str) -> HttpResponse:
    """``/rest/socialActions/{target}/comments/{commentId}`` (target: the post, or the comment a
    reply answers). ``GET``: the comment. ``DELETE`` (``actor`` the member): 204 for the member's
    own comment, which goes with its replies; another member's is refused; one that is not there
    answers 404."""
    member, problem = _member(request)
    if member is None:
        return problem or _unauthorized()
    if request.method not in ("GET", "DELETE"):
        return _error(405, "METHOD_NOT_ALLOWED", "Method not allowed")
    target = COMMENT_URN.match(urn)
    post_urn = target.group(1) if target else urn
    found = _thread_comment(member, f"urn:li:comment:({post_urn},{comment_id})")
    if request.method == "DELETE":
        request.sandbox_log = {"delete": True, "remoteId": f"urn:li:comment:({post_urn},{comment_id})"}  # type: ignore[attr-defined]
        actor = request.GET.get("actor")
        if actor is not None and actor != f"urn:li:person:{member['id']}":
            return _error(403, "ACCESS_DENIED", f"Not enough permissions to act as {actor}")
    if found is None:
        return _error(404, "NOT_FOUND", f"Comment {comment_id} of {post_urn} does not exist")
    _post, comment, shown = found
    if request.method == "GET":
        return JsonResponse(_comment_json(member, comment, shown))
    if not comment["fromAccount"]:
        return _error(403, "ACCESS_DENIED", f"Not enough permissions to delete comment {comment_id}")
    audience.set_state(store, comment["id"], deleted=True)
    store.delete("comment", comment_id)
    return HttpResponse(status=204)


@view
def reactions(request: HttpRequest) -> HttpResponse:
    """``POST /rest/reactions?actor=<member urn>`` ``{"root", "reactionType"}``: the member reacts
    to a comment on one of their posts (or to the post), 201; reacting again replaces the
    reaction."""
    member, problem = _member(request)
    if member is None:
        return problem or _unauthorized()
    if request.method != "POST":
        return _error(405, "METHOD_NOT_ALLOWED", "Method not allowed")
    actor = f"urn:li:person:{member['id']}"
    body = json_body(request)
    root = str(body.get("root") or "")
    request.sandbox_log = {"reaction": body.get("reactionType"), "remoteId": root}  # type: ignore[attr-defined]
    if request.GET.get("actor") != actor:
        return _error(403, "ACCESS_DENIED", f"Not enough permissions to react as {request.GET.get('actor')}")
    if body.get("reactionType") not in REACTIONS:
        return _error(400, "ILLEGAL_ARGUMENT", f"reactionType must be one of {', '.join(sorted(REACTIONS))}")
    found = _thread_comment(member, root)
    if found is not None:
        audience.set_state(store, found[1]["id"], liked=True)
    elif _own_post(member, root) is None:
        return _error(404, "NOT_FOUND", f"Not Found: {root}")
    reaction_urn = f"urn:li:reaction:({actor},{root})"
    now = int(time.time() * 1000)
    entity = {
        "id": reaction_urn,
        "root": root,
        "reactionType": body["reactionType"],
        "created": {"actor": actor, "time": now},
        "lastModified": {"actor": actor, "time": now},
    }
    response = JsonResponse(entity, status=201)
    response["x-restli-id"] = reaction_urn
    return response


@view
def social_actions(request: HttpRequest, urn: str) -> HttpResponse:
    """``GET /rest/socialActions/{post urn}``: the post's likes (growing with time) and its
    ``commentsSummary`` counted from the comments the Comments API lists:
    ``totalFirstLevelComments`` those on the post itself, ``aggregatedTotalComments`` those and
    their replies."""
    member, problem = _member(request)
    if member is None:
        return problem or _unauthorized()
    post = _own_post(member, urn)
    if post is None:
        return _error(404, "NOT_FOUND", f"Not Found: {urn}")
    likes = grown(post["created"], 30)
    shown = list(_thread(post).values())
    return JsonResponse(
        {
            "target": urn,
            "$URN": f"urn:li:socialActions:{urn}",
            "likesSummary": {
                "selectedLikes": [],
                "totalLikes": likes,
                "likedByCurrentUser": False,
                "aggregatedTotalLikes": likes,
            },
            "commentsSummary": {
                "selectedComments": [],
                "totalFirstLevelComments": audience.comment_count(shown, direct_only=True),
                "commentsState": "OPEN",
                "aggregatedTotalComments": audience.comment_count(shown),
            },
        }
    )


@view
def creator_analytics(request: HttpRequest) -> HttpResponse:
    member, problem = _member(request)
    if member is None:
        return problem or _unauthorized()
    match = ENTITY.match(request.GET.get("entity", ""))
    rates = {"IMPRESSION": 240, "MEMBERS_REACHED": 150, "RESHARE": 3, "REACTION": 30, "COMMENT": 6}
    query_type = request.GET.get("queryType", "")
    if request.GET.get("q") != "entity" or match is None or query_type not in rates:
        return _error(400, "ILLEGAL_ARGUMENT", "q=entity, entity=(share:urn) and a valid queryType are required")
    post = _own_post(member, match.group(2))
    if post is None:
        return _error(404, "NOT_FOUND", f"Not Found: {match.group(2)}")
    metric = {"com.linkedin.adsexternalapi.memberanalytics.v1.CreatorPostAnalyticsMetricTypeV1": query_type}
    if query_type == "COMMENT":  # the comments and replies the Comments API lists, as socialActions counts them
        count = audience.comment_count(list(_thread(post).values()))
    else:
        count = grown(post["created"], rates[query_type])
    return JsonResponse(
        {
            "paging": {"start": 0, "count": 10, "links": []},
            "elements": [
                {
                    "count": count,
                    "metricType": metric,
                    "targetEntity": {match.group(1): match.group(2)},
                }
            ],
        }
    )


def post_page(request: HttpRequest, urn: str) -> HttpResponse:
    """The post's page on linkedin.com (``/feed/update/{urn}/``)."""
    post = store.get("post", urn)
    member = store.get("member", post["member"]) if post else None
    if post is None or member is None:
        return pages.not_found_page("LinkedIn")
    return pages.post_page(
        platform="LinkedIn",
        author=member["name"],
        text=post["commentary"],
        avatar=pages.avatar_url(SLUG, member["id"]),
    )


urlpatterns = [
    *pages.urlpatterns,
    path("feed/update/<str:urn>/", post_page),
    path("oauth/v2/authorization", authorization),
    path("oauth/v2/accessToken", access_token),
    path("v2/userinfo", userinfo),
    path("rest/memberFollowersCount", followers_count),
    path("oauth/v2/revoke", revoke),
    path("rest/posts", posts),
    path("rest/posts/<str:urn>", post_detail),
    path("rest/socialActions/<str:urn>/comments", social_action_comments),
    path("rest/socialActions/<str:urn>/comments/<str:comment_id>", social_action_comment),
    path("rest/reactions", reactions),
    path("rest/socialActions/<str:urn>", social_actions),
    path("rest/memberCreatorPostAnalytics", creator_analytics),
    path("rest/<str:collection>", assets),
    path("rest/<str:collection>/<str:urn>", asset_status),
    path("_upload/<str:urn>/<int:part>", upload),
]


# --- armed faults (platforms.sandbox.faults): LinkedIn's limits are daily throttles answered
# with 429 and reset at midnight UTC; it has no separate quota answer -------------------------
FAULTS = {
    "rate_limited": lambda request: _error(
        429,
        "TOO_MANY_REQUESTS",
        "Resource level throttle APPLICATION DAY limit for calls to this resource is reached.",
        101,
    ),
    "server_error": lambda request: _error(500, "INTERNAL_SERVER_ERROR", "Internal Server Error", 0),
}
