"""Instagram professional accounts through the Instagram Graph API with Facebook Login.

Connect: Facebook Login → long-lived user token → ``/me/accounts`` → each page's linked
``instagram_business_account`` becomes one account (the user token acts for it).
Publish (``options``: ``postType`` POST | REEL | STORY, ``audio`` (audio id from the audio
search, sent as ``audio_id`` on the REELS container), ``trialGraduation`` MANUAL |
SS_PERFORMANCE (``trial_params``), ``shareToFeed``): check the content publishing limit →
create the container(s) (carousel: item containers, then a CAROUSEL container once the items
are FINISHED) → poll ``status_code`` (``done=False`` with the container ids in ``state``) →
``media_publish``. Never sleeps.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from platforms._meta_common import (
    COMMENT_PAGE_SIZE,
    FACEBOOK_DIALOG_HOST,
    GRAPH_VERSION,
    ContainerFlow,
    GraphApi,
    check_publishing_limit,
    delete_object,
    facebook_login_token,
    find_recent_post,
    insight_values,
    list_edge,
    long_lived_token,
    next_after,
    parse_time,
    post_comment,
    read_object,
    reply_to_comment,
    revoke_login,
)
from platforms.base import (
    AccountProfile,
    AudioItem,
    CommentAuthor,
    CommentPage,
    ConnectedIdentity,
    Credentials,
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
from platforms.http import dialog_url

LIVE_BASE_URL = "https://graph.facebook.com"
SCOPES = (
    "instagram_basic",
    "instagram_content_publish",
    "instagram_manage_insights",
    "pages_show_list",
    "pages_read_engagement",
    "business_management",
    "instagram_manage_comments",  # reading, replying to, hiding and deleting comments
)
IMAGE_POLL_SECONDS = 3.0
VIDEO_POLL_SECONDS = 10.0
INSIGHT_METRICS = "views,reach,likes,comments,shares,saved"
MEDIA_FIELDS = "id,caption,media_type,media_url,thumbnail_url,permalink,timestamp,like_count,comments_count"
AUDIO_QUERY_LIMIT = 100
_COMMENT = "id,text,timestamp,username,from{id,username},like_count,hidden,parent_id"
COMMENT_FIELDS = f"{_COMMENT},replies{{{_COMMENT}}}"


def remote_post_of(node: dict[str, Any]) -> RemotePost:
    return RemotePost(
        platform_post_id=str(node["id"]),
        published_at=parse_time(node.get("timestamp")),
        text=str(node.get("caption") or ""),
        permalink=str(node.get("permalink") or ""),
        thumbnail_url=str(node.get("thumbnail_url") or node.get("media_url") or ""),
        metrics=Metrics(likes=node.get("like_count"), comments=node.get("comments_count")),
    )


def audio_item_of(node: dict[str, Any]) -> AudioItem:
    duration = node.get("duration_in_ms")
    return AudioItem(
        audio_id=str(node["audio_id"]),
        title=str(node.get("title") or ""),
        artist=str(node.get("display_artist") or node.get("ig_username") or ""),
        duration_ms=int(duration) if isinstance(duration, int | float) else None,
        cover_url=str(node.get("cover_artwork_thumbnail_url") or node.get("profile_picture_url") or ""),
        audio_type=str(node.get("audio_type") or "music"),
    )


def remote_comment_of(
    node: dict[str, Any], *, media_id: str, account_id: str, reply_count: int | None = None
) -> RemoteComment:
    """A comment (or reply) node read with :data:`COMMENT_FIELDS`."""
    author = node.get("from") if isinstance(node.get("from"), dict) else {}
    assert isinstance(author, dict)
    username = str(author.get("username") or node.get("username") or "")
    author_id = str(author.get("id") or "")
    return RemoteComment(
        platform_comment_id=str(node["id"]),
        platform_post_id=media_id,
        text=str(node.get("text") or ""),
        created_at=parse_time(node.get("timestamp")),
        author=CommentAuthor(id=author_id or username, name=username, handle=username),
        parent_id=str(node.get("parent_id") or ""),
        like_count=node.get("like_count") if isinstance(node.get("like_count"), int) else None,
        reply_count=reply_count,
        hidden=node.get("hidden") is True,
        from_account=bool(author_id) and author_id == account_id,
    )


class Client(PlatformClient):
    platform = Platform.INSTAGRAM
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
            "scope": ",".join(SCOPES),
            "response_type": "code",
        }
        return dialog_url(
            api_base_url=self.base_url,
            live_host=LIVE_BASE_URL,
            dialog_host=FACEBOOK_DIALOG_HOST,
            path=f"{self.version}/dialog/oauth",
            query=query,
        )

    def exchange_code(self, *, code: str, redirect_uri: str, code_verifier: str = "") -> list[ConnectedIdentity]:
        token, expires_at = facebook_login_token(self.graph, self.app, code=code, redirect_uri=redirect_uri)
        fields = "id,name,instagram_business_account{id,username,name,profile_picture_url}"
        identities = []
        for page in self.graph.pages("me/accounts", token=token, params={"fields": fields, "limit": 100}):
            account = page.get("instagram_business_account")
            if not isinstance(account, dict) or not account.get("id"):
                continue  # a page without a linked professional account has nothing to publish to
            ig_id = str(account["id"])
            profile = AccountProfile(
                external_id=ig_id,
                display_name=str(account.get("name") or account.get("username") or ig_id),
                username=str(account.get("username") or ""),
                avatar_url=str(account.get("profile_picture_url") or ""),
                supports_instagram_audio=True,  # the Audio API serves every professional account via Facebook Login
            )
            credentials = Credentials(
                access_token=token, external_id=ig_id, expires_at=expires_at, extra={"page_id": str(page["id"])}
            )
            identities.append(ConnectedIdentity(profile=profile, credentials=credentials, scopes=SCOPES))
        return identities

    def check_token(self, creds: Credentials) -> AccountProfile:
        node = self.graph.call(
            "GET",
            creds.external_id,
            token=creds.access_token,
            params={"fields": "id,username,name,profile_picture_url"},
        )
        return AccountProfile(
            external_id=str(node["id"]),
            display_name=str(node.get("name") or node.get("username") or ""),
            username=str(node.get("username") or ""),
            avatar_url=str(node.get("profile_picture_url") or ""),
            supports_instagram_audio=True,
        )

    def refresh_token(self, creds: Credentials) -> Credentials:
        """A valid long-lived user token exchanged for a fresh 60-day one."""
        token, expires_at = long_lived_token(self.graph, self.app, creds.access_token)
        return Credentials(
            access_token=token,
            external_id=creds.external_id,
            refresh_token=creds.refresh_token,
            expires_at=expires_at,
            extra=dict(creds.extra),
        )

    # --- publish ----------------------------------------------------------------------
    def comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        return post_comment(self.graph, creds, request)

    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        flow = ContainerFlow(
            self.graph,
            token=creds.access_token,
            user_id=creds.external_id,
            create_edge="media",
            publish_edge="media_publish",
            status_field="status_code",
            message_field="status",
            poll_after=VIDEO_POLL_SECONDS if any(m.kind == "video" for m in request.media) else IMAGE_POLL_SECONDS,
        )

        def create_containers() -> dict[str, Any]:
            check_publishing_limit(
                self.graph,
                token=creds.access_token,
                path=f"{creds.external_id}/content_publishing_limit",
                platform_name="Instagram content",
            )
            if not request.media:
                raise Permanent("Instagram requires an image or a video", error_code=ErrorCode.INVALID_REQUEST)
            if len(request.media) == 1:
                return {"step": "container", "container_id": flow.create(self._single_params(request))}
            children = []
            for item in request.media:
                params = {"is_carousel_item": "true"}
                if item.kind == "video":
                    params.update(media_type="VIDEO", video_url=item.url)
                else:
                    params.update(image_url=item.url, alt_text=item.alt_text)
                children.append(flow.create(params))
            return {"step": "children", "children": children}

        def carousel_params(children: list[str]) -> dict[str, Any]:
            return {"media_type": "CAROUSEL", "children": ",".join(children), "caption": request.text}

        return flow.advance(state, create_containers=create_containers, carousel_params=carousel_params)

    @staticmethod
    def _single_params(request: PublishRequest) -> dict[str, Any]:
        item = request.media[0]
        options = request.options
        post_type = str(options.get("postType") or "").upper()
        if post_type == "STORY":
            key = "video_url" if item.kind == "video" else "image_url"
            return {"media_type": "STORIES", key: item.url}
        if item.kind == "image":
            return {"image_url": item.url, "caption": request.text, "alt_text": item.alt_text}
        params: dict[str, Any] = {
            "media_type": "REELS",
            "video_url": item.url,
            "caption": request.text,
            "share_to_feed": "false" if options.get("shareToFeed") is False else "true",
            "cover_url": request.thumbnail_url,
            "audio_id": options.get("audio") or options.get("audioId"),
        }
        if options.get("trialGraduation"):
            params["trial_params"] = json.dumps({"graduation_strategy": str(options["trialGraduation"]).upper()})
        return params

    def lookup(self, creds: Credentials, request: PublishRequest) -> PublishResult | None:
        """A post from the last day whose caption is exactly ours; stories and empty captions
        cannot be matched."""
        if not request.text or str(request.options.get("postType") or "").upper() == "STORY":
            raise NotSupported
        return find_recent_post(
            self.graph,
            token=creds.access_token,
            edge=f"{creds.external_id}/media",
            text_field="caption",
            text=request.text,
        )

    # --- engagement ------------------------------------------------------------------------
    def list_comments(
        self, creds: Credentials, platform_post_id: str, *, since: dt.datetime | None = None, cursor: str = ""
    ) -> CommentPage:
        """``GET /{ig-media-id}/comments`` with each comment's ``replies`` expanded (their further
        pages followed): the top-level comments come newest first, but a new reply can sit under an
        old comment, so ``since`` drops older ones without ending the listing."""
        params = {"fields": COMMENT_FIELDS, "limit": self.comment_page_size}
        body = list_edge(self.graph, creds, f"{platform_post_id}/comments", params, cursor)
        found: list[RemoteComment] = []
        for node in body.get("data") or []:
            if not isinstance(node, dict) or not node.get("id"):
                continue
            replies = [
                remote_comment_of(
                    {"parent_id": node["id"], **reply}, media_id=platform_post_id, account_id=creds.external_id
                )
                for reply in self._replies(creds, node)
            ]
            top = remote_comment_of(
                node, media_id=platform_post_id, account_id=creds.external_id, reply_count=len(replies)
            )
            found.extend(c for c in (top, *replies) if since is None or c.created_at >= since)
        return CommentPage(tuple(found), next_after(body))

    def _replies(self, creds: Credentials, node: dict[str, Any]) -> list[dict[str, Any]]:
        """The replies expanded on a comment node, with the pages its ``paging.next`` leads to."""
        edge = node.get("replies") if isinstance(node.get("replies"), dict) else {}
        assert isinstance(edge, dict)
        replies = [r for r in edge.get("data") or [] if isinstance(r, dict) and r.get("id")]
        for _ in range(20):  # bounded: a runaway "next" link must not loop forever
            next_url = (edge.get("paging") or {}).get("next")
            if not next_url or not edge.get("data"):
                break
            edge = self.graph.call("GET", "", token=creds.access_token, absolute_url=str(next_url))
            replies.extend(r for r in edge.get("data") or [] if isinstance(r, dict) and r.get("id"))
        return replies

    def reply_comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """``POST /{ig-comment-id}/replies`` with ``message`` (a reply to a reply joins its thread)."""
        return reply_to_comment(self.graph, creds, request, "replies")

    def set_comment_hidden(self, creds: Credentials, platform_comment_id: str, hidden: bool) -> None:
        """``POST /{ig-comment-id}`` with ``hide``: ``{"success": true}``."""
        data = {"hide": "true" if hidden else "false"}
        self.graph.call("POST", platform_comment_id, token=creds.access_token, data=data)

    def delete_comment(self, creds: Credentials, platform_comment_id: str, *, parent_id: str = "") -> None:
        """``DELETE /{ig-comment-id}``: any comment on the account's media; gone counts."""
        delete_object(self.graph, creds, platform_comment_id)

    # Instagram has no comment like through the API: ``like_comment`` stays NotSupported.

    # --- analytics and helpers ------------------------------------------------------------
    # --- after publishing ----------------------------------------------------------------
    # The Instagram Graph API changes only ``comment_enabled`` of a published media (no caption
    # edit) and documents no delete: ``edit`` and ``delete`` stay NotSupported.
    def revoke_token(self, creds: Credentials) -> None:
        """``DELETE /me/permissions`` with the account's token (a Facebook Login user token): the
        login ends, and every Instagram account connected through it stops working."""
        revoke_login(self.graph, user_id="me", token=creds.access_token, users_own_token=True)

    def fetch_post(self, creds: Credentials, platform_post_id: str) -> RemotePost | None:
        """``GET /{ig-media-id}`` (code 100, subcode 33: gone)."""
        node = read_object(self.graph, creds, platform_post_id, MEDIA_FIELDS)
        return None if node is None else remote_post_of(node)

    def list_recent_posts(self, creds: Credentials, since: dt.datetime) -> list[RemotePost]:
        params = {"fields": MEDIA_FIELDS, "since": int(since.timestamp()), "limit": 100}
        posts = [
            remote_post_of(n)
            for n in self.graph.pages(f"{creds.external_id}/media", token=creds.access_token, params=params)
        ]
        return [p for p in posts if p.published_at >= since]

    def fetch_post_metrics(self, creds: Credentials, platform_post_ids: list[str]) -> dict[str, Metrics]:
        found: dict[str, Metrics] = {}
        for media_id in platform_post_ids:
            try:
                body = self.graph.call(
                    "GET", f"{media_id}/insights", token=creds.access_token, params={"metric": INSIGHT_METRICS}
                )
            except Permanent:
                continue  # deleted media, or a kind without these insights
            values = insight_values(body)
            found[media_id] = Metrics(
                views=values.get("views"),
                likes=values.get("likes"),
                comments=values.get("comments"),
                shares=values.get("shares"),
                saves=values.get("saved"),
                reach=values.get("reach"),
            )
        return found

    def fetch_followers(self, creds: Credentials) -> int | None:
        node = self.graph.call("GET", creds.external_id, token=creds.access_token, params={"fields": "followers_count"})
        value = node.get("followers_count")
        return int(value) if value is not None else None

    def search_audio(self, creds: Credentials, *, audio_type: str, query: str = "") -> list[AudioItem]:
        """Audio cleared for Reels; an empty query returns what is trending."""
        if audio_type not in {"music", "original_sound"}:
            raise Permanent("audio_type must be music or original_sound", error_code=ErrorCode.INVALID_REQUEST)
        if len(query) > AUDIO_QUERY_LIMIT:
            raise Permanent(
                f"searchQuery is limited to {AUDIO_QUERY_LIMIT} characters", error_code=ErrorCode.INVALID_REQUEST
            )
        params = {"audio_type": audio_type, "user_id": creds.external_id}
        if query:
            params["search_query"] = query
        body = self.graph.call("GET", "ig_audio", token=creds.access_token, params=params)
        return [audio_item_of(n) for n in body.get("data") or [] if isinstance(n, dict) and n.get("audio_id")]
