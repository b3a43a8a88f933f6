"""YouTube Data API v3: Google OAuth, the channel (channels.list mine=true), resumable video
upload (session → PUT bytes, resuming from the offset the session reports), playlist insertion,
the uploads playlist as the listing and videos.list statistics as the metrics.

Publishing steps, each persisted in ``state`` so an interrupted flow resumes without a second
video: ``session_uri`` (upload session opened) → ``video_id`` (bytes complete, the video exists)
→ done (after adding it to ``playlistId`` when one is set). The upload PUT is answered by the
session itself on retry (``Content-Range: bytes */<size>`` tells what arrived, and a finished
session answers with the video), so a timeout there is safely retryable, not an unknown outcome."""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from typing import Any

from platforms._google_common import GoogleClient, google_error
from platforms.base import (
    AccountProfile,
    CommentAuthor,
    CommentPage,
    ConnectedIdentity,
    Credentials,
    EditRequest,
    EditResult,
    ErrorCode,
    Metrics,
    Permanent,
    Platform,
    PublishRequest,
    PublishResult,
    RemoteComment,
    RemotePost,
    Transient,
)
from platforms.capabilities import CAPABILITIES
from platforms.capabilities import title_limit as platform_title_limit
from platforms.http import (
    as_int,
    download_media,
    json_or_empty,
    parse_instant,
    refuse_edit_fields,
    send,
    utcnow,
    web_url,
)

LIVE_BASE_URL = "https://www.googleapis.com"
API = "/youtube/v3"
UPLOAD = "/upload/youtube/v3/videos"
SHORTS_TAG = "#Shorts"
MAX_TAGS = 20
PAGE_SIZE = 50
COMMENT_PAGE_SIZE = 100  # commentThreads.list and comments.list take maxResults up to 100
# The thread listings a comment read walks through, in order: what is public, then what the
# channel holds for review (our "hidden"; the default listing leaves it out).
MODERATION_LISTINGS = ("published", "heldForReview")

logger = logging.getLogger(__name__)


class Client(GoogleClient):
    platform = Platform.YOUTUBE
    live_base_url = LIVE_BASE_URL
    scopes = (
        "https://www.googleapis.com/auth/youtube.upload",
        "https://www.googleapis.com/auth/youtube.readonly",
        "https://www.googleapis.com/auth/youtube",
        "https://www.googleapis.com/auth/youtube.force-ssl",  # comments: insert, moderate, delete
    )
    comment_page_size = COMMENT_PAGE_SIZE

    # --- account -------------------------------------------------------------------------
    def _channel(self, creds: Credentials) -> dict[str, Any]:
        body = self._json(
            "GET", f"{API}/channels", creds, params={"part": "snippet,statistics,contentDetails", "mine": "true"}
        )
        items = body.get("items") or []
        if not items:
            raise Permanent("this Google account has no YouTube channel", error_code=ErrorCode.PERMISSION_MISSING)
        return dict(items[0])

    def check_token(self, creds: Credentials) -> AccountProfile:
        return _profile(self._channel(creds))

    def exchange_code(self, *, code: str, redirect_uri: str, code_verifier: str = "") -> list[ConnectedIdentity]:
        creds, scopes = self.exchange_tokens(code=code, redirect_uri=redirect_uri, code_verifier=code_verifier)
        profile = self.check_token(creds)
        return [
            ConnectedIdentity(
                profile=profile,
                credentials=Credentials(
                    access_token=creds.access_token,
                    refresh_token=creds.refresh_token,
                    expires_at=creds.expires_at,
                    external_id=profile.external_id,
                ),
                scopes=scopes,
            )
        ]

    def fetch_followers(self, creds: Credentials) -> int | None:
        statistics = self._channel(creds).get("statistics") or {}
        if statistics.get("hiddenSubscriberCount"):
            return None
        return as_int(statistics.get("subscriberCount"))

    # --- publishing ----------------------------------------------------------------------
    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        videos = [m for m in request.media if m.kind == "video"]
        if len(videos) != 1:
            raise Permanent("a YouTube upload takes exactly one video", error_code=ErrorCode.INVALID_REQUEST)
        if state.get("video_id"):
            return self._finish(creds, request, state)
        if not state.get("session_uri"):
            return PublishResult(done=False, state={"session_uri": self._open_session(creds, request)})
        return self._upload(creds, request, state)

    def comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """``commentThreads.insert``: a top-level comment under the video. No idempotency key, so the
        pipeline never re-sends one whose outcome is unknown."""
        if request.reply_to is None:
            raise Permanent("A comment needs the video it goes under", error_code=ErrorCode.INVALID_REQUEST)
        body = {
            "snippet": {
                "videoId": request.reply_to.parent.platform_post_id,
                "topLevelComment": {"snippet": {"textOriginal": request.text}},
            }
        }
        created = self._json(
            "POST", f"{API}/commentThreads", creds, params={"part": "snippet"}, json=body, creates=True
        )
        return PublishResult(done=True, platform_post_id=str(created["id"]))

    def _metadata(self, request: PublishRequest) -> dict[str, Any]:
        options = request.options
        title_limit = platform_title_limit(Platform.YOUTUBE)
        text = request.text.strip()
        first_line = text.splitlines()[0] if text else ""
        title = str(options.get("videoTitle") or first_line).strip()[:title_limit] or "Untitled"
        description = request.text
        if options.get("postType") == "SHORTS" and SHORTS_TAG.lower() not in f"{title} {description}".lower():
            if len(title) + len(SHORTS_TAG) + 1 <= title_limit:
                title = f"{title} {SHORTS_TAG}"
            else:
                description = f"{description}\n\n{SHORTS_TAG}".strip()
        snippet: dict[str, Any] = {"title": title, "description": description}
        tags = [str(t) for t in options.get("tags") or []][:MAX_TAGS]
        if tags:
            snippet["tags"] = tags
        if options.get("categoryId"):
            snippet["categoryId"] = str(options["categoryId"])
        status: dict[str, Any] = {
            "privacyStatus": str(options.get("privacyStatus") or "public"),
            "license": str(options.get("license") or "youtube"),
            "embeddable": bool(options.get("allowEmbedding", True)),
            "selfDeclaredMadeForKids": bool(options.get("madeForKids", False)),
        }
        return {"snippet": snippet, "status": status}

    def _open_session(self, creds: Credentials, request: PublishRequest) -> str:
        video = next(m for m in request.media if m.kind == "video")
        headers = {"X-Upload-Content-Type": video.mime_type or "video/*"}
        if video.size:
            headers["X-Upload-Content-Length"] = str(video.size)
        notify = request.options.get("notifySubscribers", True)
        params = {"uploadType": "resumable", "part": "snippet,status", "notifySubscribers": str(bool(notify)).lower()}
        response = self._call("POST", UPLOAD, creds, params=params, json=self._metadata(request), headers=headers)
        location = response.headers.get("Location")
        if not location:
            raise Transient("YouTube opened no upload session (no Location header)")
        return location

    def _upload(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        video = next(m for m in request.media if m.kind == "video")
        data, mime = download_media(self.session, video.url, timeout=self.timeout)
        session_uri = str(state["session_uri"])
        size = len(data)
        probe = send(
            self.session,
            "PUT",
            session_uri,
            timeout=self.timeout,
            headers={
                "Authorization": f"Bearer {creds.access_token}",
                "Content-Range": f"bytes */{size}",
                "Content-Length": "0",
            },
        )
        if probe.status_code == 404:  # the session expired before any video was made: open a new one
            return PublishResult(done=False, state={}, poll_after=0.0)
        if probe.status_code in (200, 201):
            return self._uploaded(creds, request, state, json_or_empty(probe))
        if probe.status_code != 308:
            raise google_error(probe)
        offset = _next_offset(probe.headers.get("Range", ""))
        response = send(
            self.session,
            "PUT",
            session_uri,
            timeout=self.timeout,
            data=data[offset:],
            headers={
                "Authorization": f"Bearer {creds.access_token}",
                "Content-Type": mime or video.mime_type,
                "Content-Range": f"bytes {offset}-{size - 1}/{size}",
            },
        )
        if response.status_code == 308:  # the platform kept only part: the next call resumes from there
            return PublishResult(done=False, state=state, poll_after=1.0)
        if response.status_code not in (200, 201):
            raise google_error(response)
        return self._uploaded(creds, request, state, json_or_empty(response))

    def _uploaded(
        self, creds: Credentials, request: PublishRequest, state: dict[str, Any], video: dict[str, Any]
    ) -> PublishResult:
        state = {
            **state,
            "video_id": str(video["id"]),
            "published_at": str((video.get("snippet") or {}).get("publishedAt") or ""),
        }
        return self._finish(creds, request, state)

    def _finish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        video_id = str(state["video_id"])
        playlist_id = str(request.options.get("playlistId") or "")
        if playlist_id:
            body = {
                "snippet": {"playlistId": playlist_id, "resourceId": {"kind": "youtube#video", "videoId": video_id}}
            }
            try:
                self._call("POST", f"{API}/playlistItems", creds, params={"part": "snippet"}, json=body)
            except Permanent as exc:  # the video is live; a refused playlist must not fail the post
                logger.warning("youtube playlist insert refused for %s: %s", video_id, exc.message)
        shorts = request.options.get("postType") == "SHORTS"
        return PublishResult(
            done=True,
            platform_post_id=video_id,
            url=video_url(self.base_url, video_id, shorts=shorts),
            published_at=parse_instant(state.get("published_at")) or dt.datetime.now(dt.UTC),
        )

    # --- engagement ------------------------------------------------------------------------
    def list_comments(
        self, creds: Credentials, platform_post_id: str, *, since: dt.datetime | None = None, cursor: str = ""
    ) -> CommentPage:
        """``commentThreads.list?videoId=…&order=time`` (part snippet and replies), published
        threads first, then those held for review (hidden); a thread whose ``totalReplyCount``
        exceeds the replies it carries has them read with ``comments.list?parentId=…``. The cursor
        is ``<moderation status>:<pageToken>``. A new reply can sit under an old thread, so
        ``since`` drops older comments without ending the listing. A video that is gone
        (``videoNotFound``) has no comments."""
        status, _, page_token = (cursor or f"{MODERATION_LISTINGS[0]}:").partition(":")
        if status not in MODERATION_LISTINGS:
            raise Permanent(f"Unknown comment cursor {cursor!r}", error_code=ErrorCode.INVALID_REQUEST)
        params: dict[str, Any] = {
            "part": "snippet,replies",
            "videoId": platform_post_id,
            "maxResults": self.comment_page_size,
            "order": "time",
            "textFormat": "plainText",
            "moderationStatus": status,
        }
        if page_token:
            params["pageToken"] = page_token
        try:
            body = self._json("GET", f"{API}/commentThreads", creds, params=params)
        except Permanent as exc:
            if exc.http_status == 404:
                return CommentPage(())
            raise
        found: list[RemoteComment] = []
        for thread in body.get("items") or []:
            found.extend(self._thread_comments(creds, thread, platform_post_id, hidden=status != "published"))
        if since is not None:
            found = [c for c in found if c.created_at >= since]
        next_token = str(body.get("nextPageToken") or "")
        if next_token:
            return CommentPage(tuple(found), f"{status}:{next_token}")
        later = MODERATION_LISTINGS.index(status) + 1
        return CommentPage(tuple(found), f"{MODERATION_LISTINGS[later]}:" if later < len(MODERATION_LISTINGS) else "")

    def _thread_comments(
        self, creds: Credentials, thread: dict[str, Any], video_id: str, *, hidden: bool
    ) -> list[RemoteComment]:
        snippet = thread.get("snippet") or {}
        top = snippet.get("topLevelComment") or {}
        if not top.get("id"):
            return []
        total = as_int(snippet.get("totalReplyCount")) or 0
        replies = [r for r in (thread.get("replies") or {}).get("comments") or [] if isinstance(r, dict)]
        if total > len(replies):
            replies = self._replies(creds, str(top["id"]))
        channel_id = creds.external_id
        comments = [comment_of(top, video_id, self.base_url, channel_id, reply_count=total, hidden=hidden)]
        comments.extend(comment_of(r, video_id, self.base_url, channel_id) for r in replies if r.get("id"))
        return comments

    def _replies(self, creds: Credentials, parent_id: str) -> list[dict[str, Any]]:
        """Every published reply of a thread: ``comments.list?parentId=…``, page by page."""
        replies: list[dict[str, Any]] = []
        page_token = ""
        for _ in range(100):  # bounded: a runaway nextPageToken must not loop forever
            params: dict[str, Any] = {
                "part": "snippet",
                "parentId": parent_id,
                "maxResults": self.comment_page_size,
                "textFormat": "plainText",
            }
            if page_token:
                params["pageToken"] = page_token
            body = self._json("GET", f"{API}/comments", creds, params=params)
            replies.extend(r for r in body.get("items") or [] if isinstance(r, dict))
            page_token = str(body.get("nextPageToken") or "")
            if not page_token:
                break
        return replies

    def reply_comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """``comments.insert`` with ``snippet.parentId``: YouTube nests one level, so a reply to a
        reply (``<thread id>.<reply>``) goes to its thread. No idempotency key: sent as one that
        ``creates``."""
        if request.reply_to is None:
            raise Permanent("A reply needs the comment it answers", error_code=ErrorCode.INVALID_REQUEST)
        parent_id = request.reply_to.parent.platform_post_id.split(".", 1)[0]
        body = {"snippet": {"parentId": parent_id, "textOriginal": request.text}}
        created = self._json("POST", f"{API}/comments", creds, params={"part": "snippet"}, json=body, creates=True)
        return PublishResult(done=True, platform_post_id=str(created["id"]))

    def set_comment_hidden(self, creds: Credentials, platform_comment_id: str, hidden: bool) -> None:
        """``comments.setModerationStatus``: ``heldForReview`` takes a comment off the video (until
        it is ``published`` again), 204. The same status again is harmless."""
        params = {"id": platform_comment_id, "moderationStatus": "heldForReview" if hidden else "published"}
        self._call("POST", f"{API}/comments/setModerationStatus", creds, params=params)

    def delete_comment(self, creds: Credentials, platform_comment_id: str, *, parent_id: str = "") -> None:
        """The comment is read first (``comments.list?id=…``; none: gone, done). The channel's own
        is deleted (``comments.delete``, only its author may); another person's is rejected
        (``setModerationStatus`` ``rejected``: off the video for good, with its replies)."""
        found = (
            self._json("GET", f"{API}/comments", creds, params={"part": "snippet", "id": platform_comment_id}).get(
                "items"
            )
            or []
        )
        if not found:
            return
        author = ((found[0].get("snippet") or {}).get("authorChannelId") or {}).get("value")
        if author == creds.external_id:
            self.delete_resource(f"{API}/comments", creds, params={"id": platform_comment_id})
            return
        params = {"id": platform_comment_id, "moderationStatus": "rejected"}
        try:
            self._call("POST", f"{API}/comments/setModerationStatus", creds, creates=True, params=params)
        except Permanent as exc:
            if exc.http_status != 404:
                raise

    # YouTube has no comment like through the API (comments.rate is gone): NotSupported.

    # --- analytics -----------------------------------------------------------------------
    # --- after publishing ----------------------------------------------------------------
    def edit(self, creds: Credentials, request: EditRequest) -> EditResult:
        """``videos.update`` (``PUT /youtube/v3/videos?part=snippet``): the snippet is replaced
        whole (title and categoryId are required), so the current one is read first
        (``videos.list``) and sent back with the new title and description (our text)."""
        refuse_edit_fields("YOUTUBE", request, CAPABILITIES[Platform.YOUTUBE].edit_fields)
        video_id = request.platform_post_id
        if request.text is None and request.title is None:
            return EditResult(url=video_url(self.base_url, video_id))
        found = self._json("GET", f"{API}/videos", creds, params={"part": "snippet", "id": video_id})
        items = found.get("items") or []
        if not items:
            raise Permanent(
                f"The video {video_id} cannot be found.", error_code=ErrorCode.INVALID_REQUEST, http_status=404
            )
        current = items[0].get("snippet") or {}
        snippet = {
            key: current[key]
            for key in ("title", "description", "tags", "categoryId", "defaultLanguage")
            if key in current
        }
        if request.title is not None:
            snippet["title"] = request.title
        if request.text is not None:
            snippet["description"] = request.text
        self._json(
            "PUT",
            f"{API}/videos",
            creds,
            params={"part": "snippet"},
            json={"id": video_id, "snippet": snippet},
            creates=True,
        )
        return EditResult(url=video_url(self.base_url, video_id), edited_at=utcnow())

    def fetch_post(self, creds: Credentials, platform_post_id: str) -> RemotePost | None:
        """``videos.list`` by id (``part=snippet``): no item is a video that does not exist (any
        more). The post's text is the description, its title the video's."""
        found = self._json("GET", f"{API}/videos", creds, params={"part": "snippet", "id": platform_post_id})
        items = found.get("items") or []
        if not items:
            return None
        snippet = items[0].get("snippet") or {}
        return RemotePost(
            platform_post_id=platform_post_id,
            published_at=parse_instant(snippet.get("publishedAt")) or dt.datetime.now(dt.UTC),
            text=str(snippet.get("description") or ""),
            title=str(snippet.get("title") or ""),
            permalink=video_url(self.base_url, platform_post_id),
        )

    def delete(self, creds: Credentials, platform_post_id: str) -> None:
        """``videos.delete`` (``DELETE /youtube/v3/videos?id=…``): 204; ``videoNotFound`` (404)
        counts as deleted."""
        self.delete_resource(f"{API}/videos", creds, params={"id": platform_post_id})

    def fetch_post_metrics(self, creds: Credentials, platform_post_ids: list[str]) -> dict[str, Metrics]:
        result: dict[str, Metrics] = {}
        for start in range(0, len(platform_post_ids), PAGE_SIZE):
            ids = ",".join(platform_post_ids[start : start + PAGE_SIZE])
            body = self._json("GET", f"{API}/videos", creds, params={"part": "statistics", "id": ids})
            for item in body.get("items") or []:
                result[str(item["id"])] = metrics_of(item.get("statistics") or {})
        return result

    def list_recent_posts(self, creds: Credentials, since: dt.datetime) -> list[RemotePost]:
        uploads = ((self._channel(creds).get("contentDetails") or {}).get("relatedPlaylists") or {}).get("uploads")
        if not uploads:
            return []
        found: list[RemotePost] = []
        page_token = ""
        while True:
            params = {"part": "snippet,contentDetails", "playlistId": uploads, "maxResults": PAGE_SIZE}
            if page_token:
                params["pageToken"] = page_token
            body = self._json("GET", f"{API}/playlistItems", creds, params=params)
            reached_older = False
            for item in body.get("items") or []:
                post = _remote_post(item, self.base_url)
                if post is None or post.published_at < since:
                    reached_older = True
                    continue
                found.append(post)
            page_token = str(body.get("nextPageToken") or "")
            if not page_token or reached_older:
                break
        metrics = self.fetch_post_metrics(creds, [p.platform_post_id for p in found]) if found else {}
        return [dataclasses.replace(p, metrics=metrics.get(p.platform_post_id, Metrics())) for p in found]


def comment_of(
    node: dict[str, Any],
    video_id: str,
    base_url: str,
    channel_id: str,
    *,
    reply_count: int | None = None,
    hidden: bool = False,
) -> RemoteComment:
    """A ``youtube#comment`` (a thread's top-level comment, or a reply naming ``parentId``)."""
    snippet = node.get("snippet") or {}
    author_id = str((snippet.get("authorChannelId") or {}).get("value") or "")
    channel_url = str(snippet.get("authorChannelUrl") or "")
    handle = channel_url.rsplit("/@", 1)[1] if "/@" in channel_url else ""
    comment_id = str(node["id"])
    status = str(snippet.get("moderationStatus") or "published")
    return RemoteComment(
        platform_comment_id=comment_id,
        platform_post_id=video_id,
        text=str(snippet.get("textOriginal") or snippet.get("textDisplay") or ""),
        created_at=parse_instant(snippet.get("publishedAt")) or utcnow(),
        author=CommentAuthor(
            id=author_id,
            name=str(snippet.get("authorDisplayName") or ""),
            handle=handle,
            avatar_url=str(snippet.get("authorProfileImageUrl") or ""),
        ),
        parent_id=str(snippet.get("parentId") or ""),
        like_count=as_int(snippet.get("likeCount")),
        reply_count=reply_count,
        hidden=hidden or status != "published",
        permalink=f"{video_url(base_url, video_id)}&lc={comment_id}",
        from_account=bool(author_id) and author_id == channel_id,
    )


def metrics_of(statistics: dict[str, Any]) -> Metrics:
    """videos.list ``statistics`` (counts are strings); YouTube reports no share count."""
    return Metrics(
        views=as_int(statistics.get("viewCount")),
        likes=as_int(statistics.get("likeCount")),
        comments=as_int(statistics.get("commentCount")),
    )


def _profile(channel: dict[str, Any]) -> AccountProfile:
    snippet = channel.get("snippet") or {}
    thumbnail = ((snippet.get("thumbnails") or {}).get("default") or {}).get("url") or ""
    return AccountProfile(
        external_id=str(channel["id"]),
        display_name=str(snippet.get("title") or ""),
        username=str(snippet.get("customUrl") or ""),
        avatar_url=str(thumbnail),
    )


def video_url(base_url: str, video_id: str, *, shorts: bool = False) -> str:
    """The video's page on youtube.com (the simulator's in sandbox mode)."""
    path = f"/shorts/{video_id}" if shorts else f"/watch?v={video_id}"
    return web_url(base_url, LIVE_BASE_URL, f"https://www.youtube.com{path}", path)


def _remote_post(item: dict[str, Any], base_url: str) -> RemotePost | None:
    snippet = item.get("snippet") or {}
    details = item.get("contentDetails") or {}
    video_id = details.get("videoId") or (snippet.get("resourceId") or {}).get("videoId")
    published = parse_instant(details.get("videoPublishedAt") or snippet.get("publishedAt"))
    if not video_id or published is None:
        return None
    thumbnails = snippet.get("thumbnails") or {}
    thumb = (thumbnails.get("high") or thumbnails.get("medium") or thumbnails.get("default") or {}).get("url", "")
    return RemotePost(
        platform_post_id=str(video_id),
        published_at=published,
        text=str(snippet.get("title") or ""),
        title=str(snippet.get("title") or ""),
        permalink=video_url(base_url, str(video_id)),
        thumbnail_url=str(thumb),
    )


def _next_offset(range_header: str) -> int:
    """``Range: bytes=0-<last>`` → the first byte still to send (0 when nothing arrived)."""
    if not range_header.startswith("bytes=") or "-" not in range_header:
        return 0
    last = as_int(range_header.split("-", 1)[1])
    return (last or 0) + 1 if last is not None else 0
