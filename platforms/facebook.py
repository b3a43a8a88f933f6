"""Facebook Pages through the Graph API.

Connect: Facebook Login dialog → code → user token → long-lived user token → ``/me/accounts``;
every managed page becomes one account holding the page's own access token.
Publish (``options``: ``postType`` POST | REEL | STORY, ``videoTitle``, ``link``):
text/link → ``/{page}/feed``; one image → ``/{page}/photos``; several images → each uploaded
unpublished, then ``/{page}/feed`` with ``attached_media``; video → ``/{page}/videos`` (then a
status poll); reels and video stories → ``video_reels`` / ``video_stories`` phases start →
rupload (``file_url`` header) → finish → status poll; photo stories → unpublished photo →
``/{page}/photo_stories``. Each step that creates something remote returns its ids in ``state``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from platforms._meta_common import (
    COMMENT_PAGE_SIZE,
    FACEBOOK_DIALOG_HOST,
    GRAPH_VERSION,
    GraphApi,
    delete_object,
    facebook_login_token,
    insight_values,
    list_edge,
    next_after,
    parse_time,
    post_comment,
    read_object,
    reply_to_comment,
    revoke_login,
)
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
    NotSupported,
    Permanent,
    Platform,
    PlatformClient,
    PublishRequest,
    PublishResult,
    RemoteComment,
    RemotePost,
)
from platforms.capabilities import CAPABILITIES
from platforms.http import dialog_url, refuse_edit_fields, utcnow, web_url

LIVE_BASE_URL = "https://graph.facebook.com"
WEB_URL = "https://www.facebook.com"
SCOPES = (
    "pages_show_list",
    "pages_read_engagement",
    "pages_manage_posts",
    "read_insights",
    "business_management",
    "pages_read_user_content",  # the comments (and their authors) under the page's posts
    "pages_manage_engagement",  # replying to, hiding, deleting and liking them
)
VIDEO_POLL_SECONDS = 10.0
METRIC_FIELDS = (
    "reactions.summary(total_count).limit(0),comments.summary(total_count).limit(0),shares,"
    "insights.metric(post_impressions,post_impressions_unique)"
)
POST_FIELDS = f"id,message,created_time,permalink_url,full_picture,{METRIC_FIELDS}"
COMMENT_FIELDS = (
    "id,message,created_time,from{id,name,picture},like_count,comment_count,is_hidden,permalink_url,parent{id}"
)


def metrics_of(node: dict[str, Any]) -> Metrics:
    """Metrics from a post node read with :data:`METRIC_FIELDS`."""
    insights = insight_values(node.get("insights") or {})
    views = insights.get("post_impressions")
    reactions = ((node.get("reactions") or {}).get("summary") or {}).get("total_count")
    comments = ((node.get("comments") or {}).get("summary") or {}).get("total_count")
    shares = (node.get("shares") or {}).get("count", 0)
    return Metrics(
        views=views,
        likes=reactions,
        comments=comments,
        shares=shares,
        impressions=views,
        reach=insights.get("post_impressions_unique"),
    )


def remote_post_of(node: dict[str, Any]) -> RemotePost:
    return RemotePost(
        platform_post_id=str(node["id"]),
        published_at=parse_time(node.get("created_time")),
        text=str(node.get("message") or ""),
        permalink=str(node.get("permalink_url") or ""),
        thumbnail_url=str(node.get("full_picture") or ""),
        metrics=metrics_of(node),
    )


def remote_comment_of(node: dict[str, Any], *, post_id: str, page_id: str) -> RemoteComment:
    """A comment node read with :data:`COMMENT_FIELDS` (``from`` is the page itself on its own
    replies)."""
    author = node.get("from") if isinstance(node.get("from"), dict) else {}
    assert isinstance(author, dict)
    picture = ((author.get("picture") or {}).get("data") or {}).get("url") or ""
    parent = node.get("parent") if isinstance(node.get("parent"), dict) else {}
    assert isinstance(parent, dict)
    return RemoteComment(
        platform_comment_id=str(node["id"]),
        platform_post_id=post_id,
        text=str(node.get("message") or ""),
        created_at=parse_time(node.get("created_time")),
        author=CommentAuthor(id=str(author.get("id") or ""), name=str(author.get("name") or ""), avatar_url=picture),
        parent_id=str(parent.get("id") or ""),
        like_count=node.get("like_count") if isinstance(node.get("like_count"), int) else None,
        reply_count=node.get("comment_count") if isinstance(node.get("comment_count"), int) else None,
        hidden=node.get("is_hidden") is True,
        permalink=str(node.get("permalink_url") or ""),
        from_account=bool(page_id) and str(author.get("id") or "") == page_id,
    )


class Client(PlatformClient):
    platform = Platform.FACEBOOK
    version = GRAPH_VERSION
    comment_page_size = COMMENT_PAGE_SIZE

    @property
    def graph(self) -> GraphApi:
        return GraphApi(base_url=self.base_url, version=self.version, session=self.session, timeout=self.timeout)

    # --- connect ----------------------------------------------------------------------
    def authorize_url(self, *, redirect_uri: str, state: str, code_challenge: str = "") -> str:
        query = {
            "client_id": self.app.client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "scope": ",".join(self.scopes()),
            "response_type": "code",
        }
        return dialog_url(
            api_base_url=self.base_url,
            live_host=LIVE_BASE_URL,
            dialog_host=FACEBOOK_DIALOG_HOST,
            path=f"{self.version}/dialog/oauth",
            query=query,
        )

    def scopes(self) -> tuple[str, ...]:
        return SCOPES

    def exchange_code(self, *, code: str, redirect_uri: str, code_verifier: str = "") -> list[ConnectedIdentity]:
        user_token, _ = facebook_login_token(self.graph, self.app, code=code, redirect_uri=redirect_uri)
        me = self.graph.call("GET", "me", token=user_token, params={"fields": "id,name"})
        identities = []
        for page in self.graph.pages(
            "me/accounts",
            token=user_token,
            params={"fields": "id,name,username,access_token,tasks,picture{url}", "limit": 100},
        ):
            page_id = str(page["id"])
            profile = AccountProfile(
                external_id=page_id,
                display_name=str(page.get("name") or page_id),
                username=str(page.get("username") or ""),
                avatar_url=str(((page.get("picture") or {}).get("data") or {}).get("url") or ""),
                page_id=page_id,
            )
            credentials = Credentials(
                access_token=str(page["access_token"]), external_id=page_id, extra={"user_id": str(me.get("id", ""))}
            )
            identities.append(ConnectedIdentity(profile=profile, credentials=credentials, scopes=SCOPES))
        return identities

    def check_token(self, creds: Credentials) -> AccountProfile:
        page = self.graph.call(
            "GET",
            creds.external_id,
            token=creds.access_token,
            params={"fields": "id,name,username,followers_count,picture{url}"},
        )
        return AccountProfile(
            external_id=str(page["id"]),
            display_name=str(page.get("name") or ""),
            username=str(page.get("username") or ""),
            avatar_url=str(((page.get("picture") or {}).get("data") or {}).get("url") or ""),
            page_id=str(page["id"]),
        )

    # --- publish ----------------------------------------------------------------------
    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        step = state.get("step") or self._first_step(request)
        handler = getattr(self, f"_step_{step}", None)
        if handler is None:
            raise Permanent(f"Unknown publishing step {step!r}", error_code=ErrorCode.INVALID_REQUEST)
        result: PublishResult = handler(creds, request, state)
        return result

    @staticmethod
    def _first_step(request: PublishRequest) -> str:
        post_type = str(request.options.get("postType") or "POST").upper()
        images = [m for m in request.media if m.kind == "image"]
        videos = [m for m in request.media if m.kind == "video"]
        if videos:
            return {"REEL": "reel_start", "STORY": "video_story_start"}.get(post_type, "video_upload")
        if images:
            if post_type == "STORY":
                return "story_photo_upload"
            return "single_photo" if len(images) == 1 else "photos_upload"
        return "feed"

    def comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        return post_comment(self.graph, creds, request)

    def web_url(self, path: str) -> str:
        """``path`` on www.facebook.com (the simulator's page of it in sandbox mode)."""
        return web_url(self.base_url, LIVE_BASE_URL, f"{WEB_URL}{path}", path)

    def _done(self, post_id: str) -> PublishResult:
        return PublishResult(
            done=True, platform_post_id=post_id, url=self.web_url(f"/{post_id}"), published_at=utcnow()
        )

    def _step_feed(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        data: dict[str, Any] = {"message": request.text}
        if request.options.get("link"):
            data["link"] = request.options["link"]
        for index, photo_id in enumerate(state.get("photo_ids") or []):
            data[f"attached_media[{index}]"] = f'{{"media_fbid":"{photo_id}"}}'
        body = self.graph.call("POST", f"{creds.external_id}/feed", token=creds.access_token, data=data, creates=True)
        return self._done(str(body["id"]))

    def _upload_photo(self, creds: Credentials, url: str, *, published: bool, caption: str = "") -> dict[str, Any]:
        data = {"url": url, "published": "true" if published else "false"}
        if caption:
            data["caption"] = caption
        return self.graph.call(
            "POST", f"{creds.external_id}/photos", token=creds.access_token, data=data, creates=published
        )

    def _step_single_photo(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        body = self._upload_photo(creds, request.media[0].url, published=True, caption=request.text)
        return self._done(str(body.get("post_id") or body["id"]))

    def _step_photos_upload(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        photo_ids = [
            str(self._upload_photo(creds, m.url, published=False)["id"]) for m in request.media if m.kind == "image"
        ]
        return PublishResult(done=False, state={"step": "feed", "photo_ids": photo_ids}, poll_after=0)

    def _step_story_photo_upload(
        self, creds: Credentials, request: PublishRequest, state: dict[str, Any]
    ) -> PublishResult:
        photo_id = str(self._upload_photo(creds, request.media[0].url, published=False)["id"])
        return PublishResult(done=False, state={"step": "photo_story", "photo_id": photo_id}, poll_after=0)

    def _step_photo_story(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        body = self.graph.call(
            "POST",
            f"{creds.external_id}/photo_stories",
            token=creds.access_token,
            data={"photo_id": state["photo_id"]},
            creates=True,
        )
        return self._done(str(body["post_id"]))

    def _step_video_upload(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        video = next(m for m in request.media if m.kind == "video")
        data = {"file_url": video.url, "description": request.text}
        if request.options.get("videoTitle"):
            data["title"] = str(request.options["videoTitle"])
        if request.thumbnail_url:
            data["thumb"] = request.thumbnail_url
        body = self.graph.call("POST", f"{creds.external_id}/videos", token=creds.access_token, data=data, creates=True)
        return PublishResult(
            done=False, state={"step": "video_status", "video_id": str(body["id"])}, poll_after=VIDEO_POLL_SECONDS
        )

    def _phase_start(self, creds: Credentials, edge: str, next_step: str) -> PublishResult:
        body = self.graph.call(
            "POST", f"{creds.external_id}/{edge}", token=creds.access_token, data={"upload_phase": "start"}
        )
        new_state = {
            "step": next_step,
            "edge": edge,
            "video_id": str(body["video_id"]),
            "upload_url": body["upload_url"],
        }
        return PublishResult(done=False, state=new_state, poll_after=0)

    def _step_reel_start(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        return self._phase_start(creds, "video_reels", "phase_upload")

    def _step_video_story_start(
        self, creds: Credentials, request: PublishRequest, state: dict[str, Any]
    ) -> PublishResult:
        return self._phase_start(creds, "video_stories", "phase_upload")

    def _step_phase_upload(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        video = next(m for m in request.media if m.kind == "video")
        self.graph.call(
            "POST",
            "",
            absolute_url=str(state["upload_url"]),
            # ``file_url`` is the documented header; many proxies and WSGI servers drop header names
            # with underscores, so the hyphenated twin travels too (unknown headers are ignored).
            headers={"Authorization": f"OAuth {creds.access_token}", "file_url": video.url, "file-url": video.url},
        )
        return PublishResult(done=False, state={**state, "step": "phase_finish"}, poll_after=0)

    def _step_phase_finish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        data = {"upload_phase": "finish", "video_id": state["video_id"], "video_state": "PUBLISHED"}
        if request.text:
            data["description"] = request.text
        self.graph.call(
            "POST", f"{creds.external_id}/{state['edge']}", token=creds.access_token, data=data, creates=True
        )
        return PublishResult(
            done=False, state={"step": "video_status", "video_id": state["video_id"]}, poll_after=VIDEO_POLL_SECONDS
        )

    def _step_video_status(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        body = self.graph.call(
            "GET", state["video_id"], token=creds.access_token, params={"fields": "status,post_id,permalink_url"}
        )
        status = body.get("status") or {}
        if status.get("video_status") == "error":
            message = str((status.get("processing_phase") or {}).get("error", {}).get("message") or "processing failed")
            raise Permanent(f"Facebook could not process the video: {message}", error_code=ErrorCode.MEDIA_REJECTED)
        if status.get("video_status") != "ready" or not body.get("post_id"):
            return PublishResult(done=False, state=state, poll_after=VIDEO_POLL_SECONDS)
        result = self._done(str(body["post_id"]))
        permalink = str(body.get("permalink_url") or "")
        if permalink:
            url = permalink if permalink.startswith("http") else self.web_url(permalink)
            return PublishResult(done=True, platform_post_id=result.platform_post_id, url=url, published_at=utcnow())
        return result

    def lookup(self, creds: Credentials, request: PublishRequest) -> PublishResult | None:
        """A page post from the last day whose message is exactly ours (Pages have no
        idempotency key); an empty text cannot be matched."""
        if not request.text:
            raise NotSupported
        since = utcnow() - dt.timedelta(days=1)
        # The whole day (bounded by since), not the latest few hundred: a busy page can publish more
        # than that between a lost attempt and the recovery that looks for its post.
        for post in self._posts(creds, since, fields="id,message,created_time,permalink_url"):
            if post.get("message") == request.text:
                return PublishResult(
                    done=True,
                    platform_post_id=str(post["id"]),
                    url=str(post.get("permalink_url") or ""),
                    published_at=parse_time(post.get("created_time")),
                )
        return None

    # --- after publishing ----------------------------------------------------------------
    def edit(self, creds: Credentials, request: EditRequest) -> EditResult:
        """``POST /{post-id}`` with ``message``: a page post's text, in place (its photos, video
        and link stay; Pages have no edit window). Answers ``{"success": true}``."""
        refuse_edit_fields("FACEBOOK", request, CAPABILITIES[Platform.FACEBOOK].edit_fields)
        if request.text is None:
            return EditResult(url=self.web_url(f"/{request.platform_post_id}"))
        self.graph.call(
            "POST", request.platform_post_id, token=creds.access_token, data={"message": request.text}, creates=True
        )
        return EditResult(url=self.web_url(f"/{request.platform_post_id}"), edited_at=utcnow())

    def fetch_post(self, creds: Credentials, platform_post_id: str) -> RemotePost | None:
        """``GET /{post-id}`` with the page token (code 100, subcode 33: gone)."""
        node = read_object(self.graph, creds, platform_post_id, "id,message,created_time,permalink_url")
        if node is None:
            return None
        return RemotePost(
            platform_post_id=str(node.get("id") or platform_post_id),
            published_at=parse_time(node.get("created_time")),
            text=str(node.get("message") or ""),
            permalink=str(node.get("permalink_url") or ""),
        )

    def delete(self, creds: Credentials, platform_post_id: str) -> None:
        """``DELETE /{post-id}`` with the page token."""
        delete_object(self.graph, creds, platform_post_id)

    def revoke_token(self, creds: Credentials) -> None:
        """``DELETE /{user-id}/permissions`` with the app's token: a page token cannot revoke the
        login it came from, the app can. This ends the whole Facebook Login of the person who
        connected the page, so every page connected through it stops working too."""
        user_id = creds.extra.get("user_id", "")
        if not user_id:
            raise Permanent("the account has no Facebook user id to revoke", error_code=ErrorCode.INVALID_REQUEST)
        app_token = f"{self.app.client_id}|{self.app.client_secret}"
        revoke_login(self.graph, user_id=user_id, token=app_token, users_own_token=False)

    # --- engagement ------------------------------------------------------------------------
    def list_comments(
        self, creds: Credentials, platform_post_id: str, *, since: dt.datetime | None = None, cursor: str = ""
    ) -> CommentPage:
        """``GET /{post-id}/comments?filter=stream&order=reverse_chronological``: every comment of
        the post, replies flattened (each naming its ``parent``), newest first, so a page that
        reaches ``since`` is the last one."""
        params = {
            "fields": COMMENT_FIELDS,
            "filter": "stream",
            "order": "reverse_chronological",
            "limit": self.comment_page_size,
        }
        body = list_edge(self.graph, creds, f"{platform_post_id}/comments", params, cursor)
        found: list[RemoteComment] = []
        for node in body.get("data") or []:
            if not isinstance(node, dict) or not node.get("id"):
                continue
            comment = remote_comment_of(node, post_id=platform_post_id, page_id=creds.external_id)
            if since is not None and comment.created_at < since:
                return CommentPage(tuple(found))  # the rest is older still
            found.append(comment)
        return CommentPage(tuple(found), next_after(body))

    def reply_comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """``POST /{comment-id}/comments`` with ``message`` (a reply to a reply joins its thread)."""
        return reply_to_comment(self.graph, creds, request, "comments")

    def set_comment_hidden(self, creds: Credentials, platform_comment_id: str, hidden: bool) -> None:
        """``POST /{comment-id}`` with ``is_hidden``: ``{"success": true}`` (the same state again is
        harmless, so a retry may send it twice)."""
        data = {"is_hidden": "true" if hidden else "false"}
        self.graph.call("POST", platform_comment_id, token=creds.access_token, data=data)

    def delete_comment(self, creds: Credentials, platform_comment_id: str, *, parent_id: str = "") -> None:
        """``DELETE /{comment-id}``: the page removes any comment under its posts; gone counts."""
        delete_object(self.graph, creds, platform_comment_id)

    def like_comment(self, creds: Credentials, platform_comment_id: str) -> None:
        """``POST /{comment-id}/likes``: the page likes the comment (again: harmless)."""
        self.graph.call("POST", f"{platform_comment_id}/likes", token=creds.access_token)

    # --- analytics --------------------------------------------------------------------
    def _posts(
        self, creds: Credentials, since: dt.datetime, *, fields: str, limit_pages: int = 50
    ) -> list[dict[str, Any]]:
        params = {"fields": fields, "since": int(since.timestamp()), "limit": 100}
        return list(
            self.graph.pages(
                f"{creds.external_id}/published_posts", token=creds.access_token, params=params, limit_pages=limit_pages
            )
        )

    def list_recent_posts(self, creds: Credentials, since: dt.datetime) -> list[RemotePost]:
        posts = [remote_post_of(p) for p in self._posts(creds, since, fields=POST_FIELDS)]
        return [p for p in posts if p.published_at >= since]

    def fetch_post_metrics(self, creds: Credentials, platform_post_ids: list[str]) -> dict[str, Metrics]:
        found: dict[str, Metrics] = {}
        for start in range(0, len(platform_post_ids), 50):
            chunk = platform_post_ids[start : start + 50]
            try:
                body = self.graph.call(
                    "GET", "", token=creds.access_token, params={"ids": ",".join(chunk), "fields": METRIC_FIELDS}
                )
            except Permanent:
                body = {}
                for post_id in chunk:  # one missing post fails the whole batch: ask one by one
                    try:
                        body[post_id] = self.graph.call(
                            "GET", post_id, token=creds.access_token, params={"fields": METRIC_FIELDS}
                        )
                    except Permanent:
                        continue
            for post_id, node in body.items():
                if isinstance(node, dict):
                    found[post_id] = metrics_of(node)
        return found

    def fetch_followers(self, creds: Credentials) -> int | None:
        page = self.graph.call(
            "GET", creds.external_id, token=creds.access_token, params={"fields": "followers_count,fan_count"}
        )
        value = page.get("followers_count", page.get("fan_count"))
        return int(value) if value is not None else None
