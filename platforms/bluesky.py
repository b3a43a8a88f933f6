"""BLUESKY: the AT Protocol XRPC API of the account's PDS (docs.bsky.app).

Connect by credentials: handle + app password → ``com.atproto.server.createSession`` (the access
JWT is short-lived; ``refreshSession`` with the refresh JWT renews both). Publish: images go up
with ``com.atproto.repo.uploadBlob``; a video goes to the video service (``getServiceAuth`` →
``app.bsky.video.uploadVideo`` → poll ``getJobStatus`` until the job holds the processed blob),
then ``com.atproto.repo.createRecord`` writes the ``app.bsky.feed.post`` with rich-text facets
(links, mentions, hashtags; UTF-8 byte offsets) under a record key derived from our target id.
The key makes publishing exactly-once: a repeated create with the same key is refused by the PDS
and read back as the post it already is, and ``lookup`` finds the post by key after an unknown
outcome. Metrics from ``app.bsky.feed.getPosts`` (no views), followers from ``getProfile``.

Engagement: ``app.bsky.feed.getPostThread`` gives a post's replies as a tree (flattened here, each
naming its parent; one page, the thread has no cursor). A reply is a post record whose
``reply`` names the thread's root and the parent by strong reference (uri and cid, read with
``getPosts`` when the caller lacks them), under a record key minted from the request's key as
for first comments, so a re-sent reply finds the first. Hiding writes the post's threadgate
(``app.bsky.feed.threadgate``, same rkey as the post) with the reply in ``hiddenReplies`` (at most
300 per thread), read-modify-write with ``swapRecord``: the app then shows it only behind "hidden
replies". Deleting is ``deleteRecord`` in the account's own repo (another account's reply cannot
be deleted); a like is an ``app.bsky.feed.like`` record, its key minted from the reply's uri.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import hashlib
import json
import re
from typing import Any
from urllib.parse import urlsplit

import requests
from django.conf import settings

from platforms.base import (
    AccountProfile,
    AuthError,
    CommentAuthor,
    CommentPage,
    ConnectedIdentity,
    Credentials,
    ErrorCode,
    Metrics,
    Permanent,
    Platform,
    PlatformClient,
    PlatformError,
    PostRef,
    PublishRequest,
    PublishResult,
    QuotaExhausted,
    RateLimited,
    RemoteComment,
    RemotePost,
    ReplyTo,
    Transient,
)
from platforms.http import as_int, download_media, json_or_empty, parse_instant, retry_at_from, send, web_url

LIVE_BASE_URL = "https://bsky.social"
LIVE_VIDEO_SERVICE = "https://video.bsky.app"
POST = "app.bsky.feed.post"
LIKE = "app.bsky.feed.like"
THREADGATE = "app.bsky.feed.threadgate"
THREAD_DEPTH = 100  # reply levels read under a post
HIDDEN_REPLIES_MAX = 300  # app.bsky.feed.threadgate hiddenReplies maxLength
VIDEO_POLL_SECONDS = 2.0
_AUTH_ERRORS = {
    "ExpiredToken",
    "InvalidToken",
    "AuthenticationRequired",
    "AuthMissing",
    "AccountTakedown",
    "AccountDeactivated",
    "InvalidIdentifier",
}
_MEDIA_ERRORS = {"BlobTooLarge", "InvalidMimeType", "BlobNotFound"}
_TID_ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"
_TID_EPOCH_US = 1_704_067_200_000_000  # 2024-01-01: record keys of our posts are minted from here
_TID_SPAN_US = 366 * 24 * 3600 * 1_000_000

_URL = re.compile(r"https?://[^\s<>\"']+")
_MENTION = re.compile(r"(?<![\w@/])@((?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z][a-zA-Z0-9-]{0,61})")
_HASHTAG = re.compile(r"(?<![\w#&/])#([^\s#]*[^\d\s#][^\s#]*)")
_TRAILING = ".,;:!?)]}'\""
_RECORD_INVALID = re.compile(r"Invalid [\w.]+ record")


def record_key(target_id: str) -> str:
    """A valid TID (13 base32-sortable chars) that only ``target_id`` maps to."""
    digest = hashlib.sha256(target_id.encode()).digest()
    micros = _TID_EPOCH_US + int.from_bytes(digest[:8], "big") % _TID_SPAN_US
    value = (micros << 10) | (int.from_bytes(digest[8:10], "big") & 0x3FF)
    return "".join(_TID_ALPHABET[(value >> (5 * (12 - i))) & 31] for i in range(13))


def _byte_span(text: str, start: int, end: int) -> dict[str, int]:
    return {"byteStart": len(text[:start].encode()), "byteEnd": len(text[:end].encode())}


def detect_facets(text: str, resolve_handle: Any = None) -> list[dict[str, Any]]:
    """Rich-text facets of ``text``: links, hashtags, and mentions whose handle resolves to a DID
    (``resolve_handle(handle) -> did | None``). Offsets are UTF-8 byte positions."""
    facets: list[dict[str, Any]] = []
    for match in _URL.finditer(text):
        url = match.group(0).rstrip(_TRAILING)
        end = match.start() + len(url)
        facets.append(
            {
                "index": _byte_span(text, match.start(), end),
                "features": [{"$type": "app.bsky.richtext.facet#link", "uri": url}],
            }
        )
    for match in _HASHTAG.finditer(text):
        tag = match.group(1).rstrip(_TRAILING)
        if not tag or len(tag) > 64:
            continue
        end = match.start() + 1 + len(tag)
        facets.append(
            {
                "index": _byte_span(text, match.start(), end),
                "features": [{"$type": "app.bsky.richtext.facet#tag", "tag": tag}],
            }
        )
    for match in _MENTION.finditer(text):
        did = resolve_handle(match.group(1)) if resolve_handle else None
        if did:
            facets.append(
                {
                    "index": _byte_span(text, match.start(), match.end()),
                    "features": [{"$type": "app.bsky.richtext.facet#mention", "did": did}],
                }
            )
    return sorted(facets, key=lambda f: f["index"]["byteStart"])


def jwt_expiry(token: str) -> dt.datetime | None:
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return dt.datetime.fromtimestamp(int(claims["exp"]), dt.UTC)
    except (IndexError, ValueError, KeyError, TypeError):
        return None


def post_url(base_url: str, handle: str, uri: str) -> str:
    """The post's page on bsky.app (the simulator's in sandbox mode)."""
    path = f"/profile/{handle}/post/{uri.rsplit('/', 1)[-1]}"
    return web_url(base_url, LIVE_BASE_URL, f"https://bsky.app{path}", path)


class Client(PlatformClient):
    platform = Platform.BLUESKY
    connect_method = "credentials"
    credential_fields = ("handle", "appPassword")

    # --- plumbing -----------------------------------------------------------------------
    def xrpc(
        self,
        method: str,
        nsid: str,
        *,
        token: str = "",
        base: str = "",
        creates: bool = False,
        params: Any = None,
        body: Any = None,
        data: bytes | None = None,
        content_type: str = "",
    ) -> Any:
        response = self._xrpc_response(
            method,
            nsid,
            token=token,
            base=base,
            creates=creates,
            params=params,
            body=body,
            data=data,
            content_type=content_type,
        )
        if response.status_code != 200:
            raise self.error_from(response)
        return json_or_empty(response)

    def _xrpc_response(
        self,
        method: str,
        nsid: str,
        *,
        token: str = "",
        base: str = "",
        creates: bool = False,
        params: Any = None,
        body: Any = None,
        data: bytes | None = None,
        content_type: str = "",
    ) -> requests.Response:
        """One XRPC call, its answer as it came (for a caller that reads the error's name)."""
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if content_type:
            headers["Content-Type"] = content_type
        return send(
            self.session,
            method,
            f"{base or self.base_url}/xrpc/{nsid}",
            timeout=self.timeout,
            creates=creates,
            headers=headers,
            params=params,
            json=body,
            data=data,
        )

    @staticmethod
    def error_from(response: requests.Response) -> PlatformError:
        """The XRPC error envelope ``{"error": <name>, "message": <text>}``."""
        body = json_or_empty(response)
        body = body if isinstance(body, dict) else {}
        name = str(body.get("error") or "")
        message = str(body.get("message") or name or f"HTTP {response.status_code}")
        status = response.status_code
        if name in _AUTH_ERRORS or status == 401:
            return AuthError(message, http_status=status)
        if name == "RateLimitExceeded" or status == 429:
            retry_at = retry_at_from(response.headers, "ratelimit-reset", "Retry-After")
            policy = str(response.headers.get("ratelimit-policy") or "")
            window = re.search(r"w=(\d+)", policy)
            if window and int(window.group(1)) >= 86400:
                return QuotaExhausted(message, http_status=status, retry_at=retry_at)
            return RateLimited(message, http_status=status, retry_at=retry_at)
        if status >= 500:
            return Transient(message, http_status=status)
        if name in _MEDIA_ERRORS or status == 413:
            return Permanent(message, error_code=ErrorCode.MEDIA_REJECTED, http_status=status)
        if name == "InvalidRecord" or _RECORD_INVALID.search(message):
            return Permanent(message, error_code=ErrorCode.CONTENT_REJECTED, http_status=status)
        if status == 403:
            return Permanent(message, error_code=ErrorCode.PERMISSION_MISSING, http_status=status)
        return Permanent(message, error_code=ErrorCode.INVALID_REQUEST, http_status=status)

    # --- sessions -----------------------------------------------------------------------
    def _credentials(self, session: dict[str, Any]) -> Credentials:
        access = str(session["accessJwt"])
        return Credentials(
            access_token=access,
            refresh_token=str(session["refreshJwt"]),
            external_id=str(session["did"]),
            expires_at=jwt_expiry(access),
            extra={"handle": str(session["handle"])},
        )

    def connect_with_credentials(self, fields: dict[str, str]) -> list[ConnectedIdentity]:
        identifier = (fields.get("handle") or "").strip().lstrip("@")
        password = (fields.get("appPassword") or "").strip()
        if not identifier or not password:
            raise Permanent("handle and appPassword are required", error_code=ErrorCode.INVALID_REQUEST)
        session = self.xrpc(
            "POST", "com.atproto.server.createSession", body={"identifier": identifier, "password": password}
        )
        creds = self._credentials(session)
        return [ConnectedIdentity(profile=self.check_token(creds), credentials=creds)]

    def sandbox_credentials(self) -> dict[str, str]:
        """A handle the simulator has never seen (it becomes a new user) and its password."""
        suffix = hashlib.sha256(str(dt.datetime.now(dt.UTC).timestamp()).encode()).hexdigest()[:10]
        return {"handle": f"sandbox-{suffix}.bsky.social", "appPassword": "sandbox"}

    def refresh_token(self, creds: Credentials) -> Credentials:
        return self._credentials(self.xrpc("POST", "com.atproto.server.refreshSession", token=creds.refresh_token))

    def _profile(self, creds: Credentials) -> dict[str, Any]:
        profile = self.xrpc(
            "GET", "app.bsky.actor.getProfile", token=creds.access_token, params={"actor": creds.external_id}
        )
        return profile if isinstance(profile, dict) else {}

    def check_token(self, creds: Credentials) -> AccountProfile:
        session = self.xrpc("GET", "com.atproto.server.getSession", token=creds.access_token)
        profile = self._profile(creds)
        return AccountProfile(
            external_id=str(session["did"]),
            display_name=str(profile.get("displayName") or session["handle"]),
            username=str(session["handle"]),
            avatar_url=str(profile.get("avatar") or ""),
        )

    def fetch_followers(self, creds: Credentials) -> int | None:
        count = self._profile(creds).get("followersCount")
        return int(count) if isinstance(count, int) else None

    # --- publish ------------------------------------------------------------------------
    def _video_service(self) -> str:
        configured = self.app.extra.get("video_service_url")
        if configured:
            return configured.rstrip("/")
        return f"{self.base_url}/video" if settings.SANDBOX else LIVE_VIDEO_SERVICE

    def _upload_blob(self, creds: Credentials, url: str) -> dict[str, Any]:
        data, mime = download_media(self.session, url, timeout=self.timeout)
        body = self.xrpc("POST", "com.atproto.repo.uploadBlob", token=creds.access_token, data=data, content_type=mime)
        return dict(body["blob"])

    def _start_video(self, creds: Credentials, url: str) -> str:
        data, mime = download_media(self.session, url, timeout=self.timeout)
        pds_host = urlsplit(self.base_url).netloc.replace(":", "%3A")
        service = self.xrpc(
            "GET",
            "com.atproto.server.getServiceAuth",
            token=creds.access_token,
            params={"aud": f"did:web:{pds_host}", "lxm": "com.atproto.repo.uploadBlob"},
        )
        name = url.rsplit("/", 1)[-1] or "video.mp4"
        response = send(
            self.session,
            "POST",
            f"{self._video_service()}/xrpc/app.bsky.video.uploadVideo",
            timeout=self.timeout,
            params={"did": creds.external_id, "name": name},
            headers={"Authorization": f"Bearer {service['token']}", "Content-Type": mime},
            data=data,
        )
        body = json_or_empty(response)
        if response.status_code == 409 and isinstance(body, dict) and body.get("jobId"):
            return str(body["jobId"])  # this exact video was uploaded before: reuse its job
        if response.status_code != 200:
            raise self.error_from(response)
        return str(body["jobStatus"]["jobId"])

    def _video_blob(self, creds: Credentials, job_id: str) -> dict[str, Any] | None:
        status = self.xrpc(
            "GET",
            "app.bsky.video.getJobStatus",
            token=creds.access_token,
            base=self._video_service(),
            params={"jobId": job_id},
        )["jobStatus"]
        if status.get("state") == "JOB_STATE_FAILED":
            raise Permanent(
                str(status.get("message") or status.get("error") or "video processing failed"),
                error_code=ErrorCode.MEDIA_REJECTED,
            )
        if status.get("state") == "JOB_STATE_COMPLETED" and status.get("blob"):
            return dict(status["blob"])
        return None

    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        videos = [m for m in request.media if m.kind == "video"]
        embed: dict[str, Any] | None = None
        if videos:
            job_id = state.get("video_job") or self._start_video(creds, videos[0].url)
            blob = self._video_blob(creds, job_id)
            if blob is None:
                return PublishResult(done=False, state={"video_job": job_id}, poll_after=VIDEO_POLL_SECONDS)
            embed = {"$type": "app.bsky.embed.video", "video": blob}
            if videos[0].alt_text:
                embed["alt"] = videos[0].alt_text
        elif request.media:
            images = [{"image": self._upload_blob(creds, item.url), "alt": item.alt_text} for item in request.media]
            embed = {"$type": "app.bsky.embed.images", "images": images}
        return self._create_post(creds, request, embed)

    def comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """A reply record under the post (the thread items' call), its record key minted from the
        request's ``target_id`` so that a re-send finds the first instead of making a second. A
        reply names the post's cid: read from the repo when the caller does not have it."""
        if request.reply_to is None:
            raise Permanent("A comment needs the post it replies to", error_code=ErrorCode.INVALID_REQUEST)
        parent = request.reply_to.parent
        if not parent.cid:
            found = self._get_post(creds, parent.platform_post_id.rsplit("/", 1)[-1])
            if found is None:
                raise Permanent("The post to comment on was not found", error_code=ErrorCode.INVALID_REQUEST)
            parent = PostRef(parent.platform_post_id, found.cid)
            request = dataclasses.replace(request, reply_to=ReplyTo(root=parent, parent=parent))
        return self._create_post(creds, request, None)

    def _resolve_handle(self, handle: str) -> str | None:
        try:
            return str(self.xrpc("GET", "com.atproto.identity.resolveHandle", params={"handle": handle})["did"])
        except (Permanent, KeyError, TypeError):
            return None

    def _create_post(self, creds: Credentials, request: PublishRequest, embed: dict[str, Any] | None) -> PublishResult:
        record: dict[str, Any] = {
            "$type": POST,
            "text": request.text,
            "createdAt": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        }
        facets = detect_facets(request.text, self._resolve_handle)
        if facets:
            record["facets"] = facets
        if embed:
            record["embed"] = embed
        if request.options.get("languages"):
            record["langs"] = list(request.options["languages"])
        if request.reply_to is not None:
            root, parent = request.reply_to.root, request.reply_to.parent
            record["reply"] = {
                "root": {"uri": root.platform_post_id, "cid": root.cid},
                "parent": {"uri": parent.platform_post_id, "cid": parent.cid},
            }
        rkey = record_key(request.target_id)
        try:
            created = self.xrpc(
                "POST",
                "com.atproto.repo.createRecord",
                token=creds.access_token,
                creates=True,
                body={"repo": creds.external_id, "collection": POST, "rkey": rkey, "validate": True, "record": record},
            )
        except Permanent as exc:
            # The PDS refuses a second record under the same key; only this target mints that key,
            # so a record found there is our post from an earlier attempt.
            if exc.error_code != ErrorCode.INVALID_REQUEST:
                raise
            existing = self._get_post(creds, rkey)
            if existing is None:
                raise
            return existing
        return self._result(creds, str(created["uri"]), record["createdAt"], str(created.get("cid") or ""))

    def _result(self, creds: Credentials, uri: str, created_at: Any, cid: str = "") -> PublishResult:
        return PublishResult(
            done=True,
            platform_post_id=uri,
            url=post_url(self.base_url, creds.extra.get("handle") or creds.external_id, uri),
            published_at=parse_instant(created_at),
            cid=cid,
        )

    def _get_post(self, creds: Credentials, rkey: str) -> PublishResult | None:
        try:
            found = self.xrpc(
                "GET",
                "com.atproto.repo.getRecord",
                token=creds.access_token,
                params={"repo": creds.external_id, "collection": POST, "rkey": rkey},
            )
        except Permanent as exc:
            if "RecordNotFound" in exc.message or "Could not locate record" in exc.message:
                return None
            raise
        return self._result(
            creds, str(found["uri"]), (found.get("value") or {}).get("createdAt"), str(found.get("cid") or "")
        )

    # --- after publishing ----------------------------------------------------------------
    # A post is a record: the app shows no edited post, so ``edit`` stays NotSupported; an app
    # password is revoked only by its owner in the app's settings (no ``revoke_token``).
    def delete(self, creds: Credentials, platform_post_id: str) -> None:
        """``com.atproto.repo.deleteRecord`` of the post's record (repo, collection and rkey from
        its ``at://`` uri): a record already gone deletes as well (the PDS answers 200)."""
        repo, _, rkey = self._record_of(platform_post_id)
        self.xrpc(
            "POST",
            "com.atproto.repo.deleteRecord",
            token=creds.access_token,
            creates=True,
            body={"repo": repo, "collection": POST, "rkey": rkey},
        )

    def fetch_post(self, creds: Credentials, platform_post_id: str) -> RemotePost | None:
        """``com.atproto.repo.getRecord`` of the post's record (RecordNotFound: gone)."""
        repo, collection, rkey = self._record_of(platform_post_id)
        try:
            found = self.xrpc(
                "GET",
                "com.atproto.repo.getRecord",
                token=creds.access_token,
                params={"repo": repo, "collection": collection, "rkey": rkey},
            )
        except Permanent as exc:
            if "RecordNotFound" in exc.message or "Could not locate record" in exc.message:
                return None
            raise
        record = found.get("value") or {}
        uri = str(found.get("uri") or platform_post_id)
        return RemotePost(
            platform_post_id=uri,
            published_at=parse_instant(record.get("createdAt")) or dt.datetime.now(dt.UTC),
            text=str(record.get("text") or ""),
            permalink=post_url(self.base_url, creds.extra.get("handle") or creds.external_id, uri),
        )

    @staticmethod
    def _record_of(platform_post_id: str) -> tuple[str, str, str]:
        """The repo, collection and rkey of a post's ``at://`` uri."""
        repo, _, rest = platform_post_id.removeprefix("at://").partition("/")
        collection, _, rkey = rest.partition("/")
        if not repo or collection != POST or not rkey:
            raise Permanent(f"{platform_post_id!r} is not a post's at:// uri", error_code=ErrorCode.INVALID_REQUEST)
        return repo, collection, rkey

    def lookup(self, creds: Credentials, request: PublishRequest) -> PublishResult | None:
        return self._get_post(creds, record_key(request.target_id))

    # --- engagement ---------------------------------------------------------------------
    @staticmethod
    def _error_name(response: requests.Response) -> str:
        return str(json_or_empty(response).get("error") or "")

    def list_comments(
        self, creds: Credentials, platform_post_id: str, *, since: dt.datetime | None = None, cursor: str = ""
    ) -> CommentPage:
        """``app.bsky.feed.getPostThread``: every reply of the tree in one page (oldest first under
        each parent), hidden where the thread's threadgate lists it; ``since`` is applied here (the
        call has no such filter). A post that is gone (``NotFound``) has none."""
        response = self._xrpc_response(
            "GET",
            "app.bsky.feed.getPostThread",
            token=creds.access_token,
            params={"uri": platform_post_id, "depth": THREAD_DEPTH, "parentHeight": 0},
        )
        if response.status_code == 400 and self._error_name(response) == "NotFound":
            return CommentPage(())
        if response.status_code != 200:
            raise self.error_from(response)
        body = json_or_empty(response)
        gate = body.get("threadgate") or ((body.get("thread") or {}).get("post") or {}).get("threadgate") or {}
        hidden = set((gate.get("record") or {}).get("hiddenReplies") or [])
        found: list[RemoteComment] = []
        stack = list(reversed((body.get("thread") or {}).get("replies") or []))
        while stack:
            node = stack.pop()
            if not isinstance(node, dict) or node.get("$type", "app.bsky.feed.defs#threadViewPost") != (
                "app.bsky.feed.defs#threadViewPost"
            ):
                continue  # a reply not found, or blocked
            stack.extend(reversed(node.get("replies") or []))
            comment = self._comment_from(creds, platform_post_id, node.get("post") or {}, hidden)
            if comment is not None and (since is None or comment.created_at >= since):
                found.append(comment)
        return CommentPage(tuple(found))

    def _comment_from(
        self, creds: Credentials, post_id: str, post: dict[str, Any], hidden: set[str]
    ) -> RemoteComment | None:
        uri = str(post.get("uri") or "")
        if not uri:
            return None
        record = post.get("record") or {}
        author = post.get("author") or {}
        parent = str(((record.get("reply") or {}).get("parent") or {}).get("uri") or "")
        handle = str(author.get("handle") or "")
        return RemoteComment(
            platform_comment_id=uri,
            platform_post_id=post_id,
            text=str(record.get("text") or ""),
            created_at=parse_instant(record.get("createdAt"))
            or parse_instant(post.get("indexedAt"))
            or dt.datetime.now(dt.UTC),
            author=CommentAuthor(
                id=str(author.get("did") or ""),
                name=str(author.get("displayName") or ""),
                handle=handle,
                avatar_url=str(author.get("avatar") or ""),
            ),
            parent_id="" if parent in ("", post_id) else parent,
            like_count=as_int(post.get("likeCount")),
            reply_count=as_int(post.get("replyCount")),
            hidden=uri in hidden,
            permalink=post_url(self.base_url, handle or str(author.get("did") or ""), uri),
            from_account=author.get("did") == creds.external_id,
        )

    def _views(self, creds: Credentials, uris: list[str]) -> dict[str, dict[str, Any]]:
        """``app.bsky.feed.getPosts``: the postViews of ``uris`` that exist, by uri."""
        body = self.xrpc("GET", "app.bsky.feed.getPosts", token=creds.access_token, params={"uris": uris})
        return {str(p.get("uri")): p for p in body.get("posts") or [] if isinstance(p, dict)}

    def _view(self, creds: Credentials, uri: str) -> dict[str, Any]:
        found = self._views(creds, [uri]).get(uri)
        if found is None:
            raise Permanent(f"Bluesky has no post {uri}", error_code=ErrorCode.INVALID_REQUEST, http_status=404)
        return found

    def reply_comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """A reply record to the comment, in the thread of the comment's root (the post), under the
        record key minted from ``request.target_id``: a re-sent reply finds the first. The strong
        references are read with getPosts when the request lacks a cid."""
        if request.reply_to is None:
            raise Permanent("A reply needs the comment it answers", error_code=ErrorCode.INVALID_REQUEST)
        root, parent = request.reply_to.root, request.reply_to.parent
        if not parent.cid or not root.cid:
            view = self._views(creds, [parent.platform_post_id]).get(parent.platform_post_id)
            if view is None:
                raise Permanent("The comment to reply to was not found", error_code=ErrorCode.INVALID_REQUEST)
            thread_root = ((view.get("record") or {}).get("reply") or {}).get("root") or {}
            parent = PostRef(parent.platform_post_id, str(view.get("cid") or ""))
            root = PostRef(str(thread_root.get("uri") or root.platform_post_id), str(thread_root.get("cid") or ""))
            if not root.cid:
                raise Permanent("The comment to reply to is in no thread", error_code=ErrorCode.INVALID_REQUEST)
        return self._create_post(creds, dataclasses.replace(request, reply_to=ReplyTo(root=root, parent=parent)), None)

    def set_comment_hidden(self, creds: Credentials, platform_comment_id: str, hidden: bool) -> None:
        """Put the reply in (or take it out of) ``hiddenReplies`` of the threadgate of its thread's
        root, which must be the account's own post: read, change, ``putRecord`` with
        ``swapRecord`` (read again when another writer came first). A state it already has is
        left as it is."""
        view = self._view(creds, platform_comment_id)
        root = str((((view.get("record") or {}).get("reply") or {}).get("root") or {}).get("uri") or "")
        if not root:
            raise Permanent("Only a reply can be hidden", error_code=ErrorCode.INVALID_REQUEST)
        repo, _, rkey = self._record_of(root)
        if repo != creds.external_id:
            raise Permanent(
                "Bluesky hides replies only in threads of the account's own posts",
                error_code=ErrorCode.PERMISSION_MISSING,
            )
        for _attempt in range(3):
            current = self._threadgate(creds, rkey)
            record = dict(current["value"]) if current else {"$type": THREADGATE, "post": root}
            listed = [str(u) for u in record.get("hiddenReplies") or []]
            if hidden == (platform_comment_id in listed):
                return
            listed = [*listed, platform_comment_id] if hidden else [u for u in listed if u != platform_comment_id]
            if len(listed) > HIDDEN_REPLIES_MAX:
                raise Permanent(
                    f"Bluesky hides at most {HIDDEN_REPLIES_MAX} replies in a thread",
                    error_code=ErrorCode.CONTENT_REJECTED,
                )
            record["hiddenReplies"] = listed
            record.setdefault(
                "createdAt", dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
            )
            body: dict[str, Any] = {"repo": repo, "collection": THREADGATE, "rkey": rkey, "record": record}
            if current:
                body["swapRecord"] = current["cid"]
            response = self._xrpc_response(
                "POST", "com.atproto.repo.putRecord", token=creds.access_token, creates=True, body=body
            )
            if response.status_code == 200:
                return
            if self._error_name(response) != "InvalidSwap":
                raise self.error_from(response)
        raise Transient("The threadgate kept changing while the reply was being hidden")

    def _threadgate(self, creds: Credentials, rkey: str) -> dict[str, Any] | None:
        response = self._xrpc_response(
            "GET",
            "com.atproto.repo.getRecord",
            token=creds.access_token,
            params={"repo": creds.external_id, "collection": THREADGATE, "rkey": rkey},
        )
        if response.status_code == 400 and self._error_name(response) == "RecordNotFound":
            return None
        if response.status_code != 200:
            raise self.error_from(response)
        return json_or_empty(response)

    def delete_comment(self, creds: Credentials, platform_comment_id: str, *, parent_id: str = "") -> None:
        """``deleteRecord`` of the account's own reply (gone already: deleted as well); a reply in
        another account's repo cannot be deleted (Permanent, nothing sent)."""
        repo, _, _ = self._record_of(platform_comment_id)
        if repo != creds.external_id:
            raise Permanent(
                "Bluesky deletes only the account's own posts; this reply is another account's",
                error_code=ErrorCode.PERMISSION_MISSING,
            )
        self.delete(creds, platform_comment_id)

    def like_comment(self, creds: Credentials, platform_comment_id: str) -> None:
        """An ``app.bsky.feed.like`` record of the reply, its record key minted from the reply's
        uri: liking again finds the like there (or the viewer state already says liked). A like
        is a record in the account's repo, so the PDS refuses a second under the same key."""
        view = self._view(creds, platform_comment_id)
        if (view.get("viewer") or {}).get("like"):
            return
        rkey = record_key(f"like:{platform_comment_id}")
        record = {
            "$type": LIKE,
            "subject": {"uri": platform_comment_id, "cid": str(view.get("cid") or "")},
            "createdAt": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        }
        response = self._xrpc_response(
            "POST",
            "com.atproto.repo.createRecord",
            token=creds.access_token,
            creates=True,
            body={"repo": creds.external_id, "collection": LIKE, "rkey": rkey, "record": record},
        )
        if response.status_code == 200:
            return
        error = self.error_from(response)
        if error.error_code != ErrorCode.INVALID_REQUEST:
            raise error
        existing = self._xrpc_response(
            "GET",
            "com.atproto.repo.getRecord",
            token=creds.access_token,
            params={"repo": creds.external_id, "collection": LIKE, "rkey": rkey},
        )
        if existing.status_code != 200:
            raise error  # not a like written before: the PDS refused this one

    # --- analytics ----------------------------------------------------------------------
    @staticmethod
    def metrics_from(post: dict[str, Any]) -> Metrics:
        return Metrics(
            views=None,
            likes=int(post.get("likeCount") or 0),
            comments=int(post.get("replyCount") or 0),
            shares=int(post.get("repostCount") or 0) + int(post.get("quoteCount") or 0),
        )

    def fetch_post_metrics(self, creds: Credentials, platform_post_ids: list[str]) -> dict[str, Metrics]:
        found: dict[str, Metrics] = {}
        for start in range(0, len(platform_post_ids), 25):
            batch = platform_post_ids[start : start + 25]
            body = self.xrpc("GET", "app.bsky.feed.getPosts", token=creds.access_token, params={"uris": batch})
            for post in body.get("posts", []):
                found[str(post["uri"])] = self.metrics_from(post)
        return found

    @classmethod
    def remote_post_from(cls, post: dict[str, Any], base_url: str = LIVE_BASE_URL) -> RemotePost:
        record = post.get("record") or {}
        author = post.get("author") or {}
        embed = post.get("embed") or {}
        thumbnail = str(embed.get("thumbnail") or "")
        if not thumbnail and embed.get("images"):
            thumbnail = str(embed["images"][0].get("thumb") or "")
        return RemotePost(
            platform_post_id=str(post["uri"]),
            published_at=parse_instant(record.get("createdAt"))
            or parse_instant(post.get("indexedAt"))
            or dt.datetime.now(dt.UTC),
            text=str(record.get("text") or ""),
            permalink=post_url(base_url, str(author.get("handle") or author.get("did") or ""), str(post["uri"])),
            thumbnail_url=thumbnail,
            metrics=cls.metrics_from(post),
        )

    def list_recent_posts(self, creds: Credentials, since: dt.datetime) -> list[RemotePost]:
        posts: list[RemotePost] = []
        params: dict[str, Any] = {"actor": creds.external_id, "limit": 100, "filter": "posts_no_replies"}
        for _page in range(200):
            body = self.xrpc("GET", "app.bsky.feed.getAuthorFeed", token=creds.access_token, params=params)
            for item in body.get("feed", []):
                if item.get("reason"):  # a repost of someone else's post
                    continue
                post = self.remote_post_from(item["post"], self.base_url)
                if post.published_at < since:
                    return posts
                posts.append(post)
            if not body.get("cursor") or not body.get("feed"):
                break
            params["cursor"] = body["cursor"]
        return posts
