"""Threads through the Threads API (graph.threads.net).

Connect: threads.net/oauth/authorize → ``POST /oauth/access_token`` (short-lived token and user
id) → ``GET /access_token?grant_type=th_exchange_token`` (60-day token); refresh with
``GET /refresh_access_token?grant_type=th_refresh_token``.
Publish (``options``: ``replyControl`` everyone | accounts_you_follow | mentioned_only):
check ``threads_publishing_limit`` → container(s) on ``/{user}/threads`` (carousel: item
containers, then a CAROUSEL container once they are FINISHED) → poll ``status`` →
``threads_publish``. The flow is shared with Instagram (:class:`ContainerFlow`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from platforms._meta_common import (
    COMMENT_PAGE_SIZE,
    ContainerFlow,
    GraphApi,
    check_publishing_limit,
    delete_object,
    find_recent_post,
    insight_values,
    list_edge,
    next_after,
    parse_time,
    read_object,
)
from platforms.base import (
    AccountProfile,
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
from platforms.http import dialog_url, token_credentials

LIVE_BASE_URL = "https://graph.threads.net"
AUTHORIZE_HOST = "https://threads.net"
VERSION = "v1.0"
SCOPES = (
    "threads_basic",
    "threads_content_publish",
    "threads_manage_insights",
    "threads_read_replies",  # the replies under the account's threads
    "threads_manage_replies",  # hiding them
)
TEXT_POLL_SECONDS = 3.0
VIDEO_POLL_SECONDS = 10.0
PROFILE_FIELDS = "id,username,name,threads_profile_picture_url"
THREAD_FIELDS = "id,text,media_type,media_url,thumbnail_url,permalink,timestamp"
REPLY_FIELDS = "id,text,timestamp,username,permalink,hide_status,replied_to,root_post,is_reply_owned_by_me"
HIDDEN_STATUSES = {"HIDDEN", "COVERED"}


def remote_post_of(node: dict[str, Any]) -> RemotePost:
    return RemotePost(
        platform_post_id=str(node["id"]),
        published_at=parse_time(node.get("timestamp")),
        text=str(node.get("text") or ""),
        permalink=str(node.get("permalink") or ""),
        thumbnail_url=str(node.get("thumbnail_url") or node.get("media_url") or ""),
    )


def metrics_of(body: dict[str, Any]) -> Metrics:
    values = insight_values(body)
    shares = None
    if "reposts" in values or "quotes" in values:
        shares = values.get("reposts", 0) + values.get("quotes", 0)
    return Metrics(views=values.get("views"), likes=values.get("likes"), comments=values.get("replies"), shares=shares)


def remote_reply_of(node: dict[str, Any], *, root_id: str) -> RemoteComment:
    """A reply node read with :data:`REPLY_FIELDS`; a reply to the root post is a top-level one.
    The Threads API reports neither the authors' ids nor likes and reply counts on replies."""
    replied_to = node.get("replied_to") if isinstance(node.get("replied_to"), dict) else {}
    assert isinstance(replied_to, dict)
    parent = str(replied_to.get("id") or "")
    username = str(node.get("username") or "")
    return RemoteComment(
        platform_comment_id=str(node["id"]),
        platform_post_id=root_id,
        text=str(node.get("text") or ""),
        created_at=parse_time(node.get("timestamp")),
        author=CommentAuthor(id=username, name=username, handle=username),
        parent_id="" if parent == root_id else parent,
        hidden=str(node.get("hide_status") or "") in HIDDEN_STATUSES,
        permalink=str(node.get("permalink") or ""),
        from_account=node.get("is_reply_owned_by_me") is True,
    )


class Client(PlatformClient):
    platform = Platform.THREADS
    comment_page_size = COMMENT_PAGE_SIZE

    @property
    def graph(self) -> GraphApi:
        return GraphApi(base_url=self.base_url, version=VERSION, session=self.session, timeout=self.timeout)

    # --- connect ----------------------------------------------------------------------
    def authorize_url(self, *, redirect_uri: str, state: str, code_challenge: str = "") -> str:
        query = {
            "client_id": self.app.client_id,
            "redirect_uri": redirect_uri,
            "scope": ",".join(SCOPES),
            "response_type": "code",
            "state": state,
        }
        return dialog_url(
            api_base_url=self.base_url,
            live_host=LIVE_BASE_URL,
            dialog_host=AUTHORIZE_HOST,
            path="oauth/authorize",
            query=query,
        )

    def _long_lived(self, body: dict[str, Any], creds_extra: dict[str, str], user_id: str) -> Credentials:
        return token_credentials(body, external_id=user_id, extra=creds_extra)

    def exchange_code(self, *, code: str, redirect_uri: str, code_verifier: str = "") -> list[ConnectedIdentity]:
        short = self.graph.call(
            "POST",
            "oauth/access_token",
            versioned=False,
            data={
                "client_id": self.app.client_id,
                "client_secret": self.app.client_secret,
                "code": code,
                "grant_type": "authorization_code",
                "redirect_uri": redirect_uri,
            },
        )
        long = self.graph.call(
            "GET",
            "access_token",
            versioned=False,
            params={
                "grant_type": "th_exchange_token",
                "client_secret": self.app.client_secret,
                "access_token": short["access_token"],
            },
        )
        credentials = self._long_lived(long, {}, str(short["user_id"]))
        profile = self.check_token(credentials)
        return [ConnectedIdentity(profile=profile, credentials=credentials, scopes=SCOPES)]

    def check_token(self, creds: Credentials) -> AccountProfile:
        node = self.graph.call("GET", "me", token=creds.access_token, params={"fields": PROFILE_FIELDS})
        return AccountProfile(
            external_id=str(node["id"]),
            display_name=str(node.get("name") or node.get("username") or ""),
            username=str(node.get("username") or ""),
            avatar_url=str(node.get("threads_profile_picture_url") or ""),
        )

    def refresh_token(self, creds: Credentials) -> Credentials:
        """A long-lived token (at least a day old, not expired) refreshed for another 60 days."""
        body = self.graph.call(
            "GET",
            "refresh_access_token",
            versioned=False,
            params={"grant_type": "th_refresh_token", "access_token": creds.access_token},
        )
        return self._long_lived(body, dict(creds.extra), creds.external_id)

    # --- publish ----------------------------------------------------------------------
    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        has_video = any(m.kind == "video" for m in request.media)
        flow = ContainerFlow(
            self.graph,
            token=creds.access_token,
            user_id=creds.external_id,
            create_edge="threads",
            publish_edge="threads_publish",
            status_field="status",
            message_field="error_message",
            poll_after=VIDEO_POLL_SECONDS if has_video else TEXT_POLL_SECONDS,
        )
        common = {"reply_control": request.options.get("replyControl")}
        if request.reply_to is not None:
            common["reply_to_id"] = request.reply_to.parent.platform_post_id

        def create_containers() -> dict[str, Any]:
            check_publishing_limit(
                self.graph,
                token=creds.access_token,
                path=f"{creds.external_id}/threads_publishing_limit",
                platform_name="Threads",
            )
            if not request.media:
                if not request.text:
                    raise Permanent("A Threads text post needs text", error_code=ErrorCode.INVALID_REQUEST)
                params = {"media_type": "TEXT", "text": request.text, **common}
                return {"step": "container", "container_id": flow.create(params)}
            if len(request.media) == 1:
                params = {**self._item_params(request.media[0].kind, request.media[0].url), "text": request.text}
                return {"step": "container", "container_id": flow.create({**params, **common})}
            children = [
                flow.create({**self._item_params(m.kind, m.url), "is_carousel_item": "true"}) for m in request.media
            ]
            return {"step": "children", "children": children}

        def carousel_params(children: list[str]) -> dict[str, Any]:
            return {"media_type": "CAROUSEL", "children": ",".join(children), "text": request.text, **common}

        return flow.advance(state, create_containers=create_containers, carousel_params=carousel_params)

    def comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """A reply container (``reply_to_id``) then its publish: the thread items' flow."""
        return self.publish(creds, request, state)

    @staticmethod
    def _item_params(kind: str, url: str) -> dict[str, str]:
        if kind == "video":
            return {"media_type": "VIDEO", "video_url": url}
        return {"media_type": "IMAGE", "image_url": url}

    def lookup(self, creds: Credentials, request: PublishRequest) -> PublishResult | None:
        """A thread from the last day whose text is exactly ours; an empty text cannot be matched,
        nor a reply (the user's threads edge lists no replies)."""
        if not request.text or request.reply_to is not None:
            raise NotSupported
        return find_recent_post(
            self.graph,
            token=creds.access_token,
            edge=f"{creds.external_id}/threads",
            text_field="text",
            text=request.text,
        )

    # --- engagement ------------------------------------------------------------------------
    def list_comments(
        self, creds: Credentials, platform_post_id: str, *, since: dt.datetime | None = None, cursor: str = ""
    ) -> CommentPage:
        """``GET /{threads-media-id}/conversation``: every reply below the post at any depth,
        flattened (each naming ``replied_to``), newest first (``reverse=true``), so a page that
        reaches ``since`` is the last one."""
        params = {"fields": REPLY_FIELDS, "reverse": "true", "limit": self.comment_page_size}
        body = list_edge(self.graph, creds, f"{platform_post_id}/conversation", params, cursor)
        found: list[RemoteComment] = []
        for node in body.get("data") or []:
            if not isinstance(node, dict) or not node.get("id"):
                continue
            reply = remote_reply_of(node, root_id=platform_post_id)
            if since is not None and reply.created_at < since:
                return CommentPage(tuple(found))
            found.append(reply)
        return CommentPage(tuple(found), next_after(body))

    def reply_comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """A reply container (``reply_to_id`` the reply answered) then its publish: the thread
        items' flow, resumed from ``state``. Threads takes no idempotency key: a container found
        already published when resumed is UnknownOutcome, never published twice."""
        return self.publish(creds, request, state)

    def set_comment_hidden(self, creds: Credentials, platform_comment_id: str, hidden: bool) -> None:
        """``POST /{threads-reply-id}/manage_reply`` with ``hide``: top-level replies only (their
        nested replies follow them); ``{"success": true}``."""
        data = {"hide": "true" if hidden else "false"}
        self.graph.call("POST", f"{platform_comment_id}/manage_reply", token=creds.access_token, data=data)

    def delete_comment(self, creds: Credentials, platform_comment_id: str, *, parent_id: str = "") -> None:
        """``DELETE /{threads-media-id}``: the account's own replies only (others' can be hidden);
        gone counts as deleted."""
        delete_object(self.graph, creds, platform_comment_id)

    # Threads has no like through the API: ``like_comment`` stays NotSupported.

    # --- analytics --------------------------------------------------------------------
    # --- after publishing ----------------------------------------------------------------
    def fetch_post(self, creds: Credentials, platform_post_id: str) -> RemotePost | None:
        """``GET /{threads-media-id}`` (code 100, subcode 33: gone)."""
        node = read_object(self.graph, creds, platform_post_id, THREAD_FIELDS)
        return None if node is None else remote_post_of(node)

    def delete(self, creds: Credentials, platform_post_id: str) -> None:
        """``DELETE /{threads-media-id}`` (``threads_delete``; 100 deletes a day per account):
        ``{"success": true, "deleted_id": …}``. The Threads API has no edit and no revoke call."""
        delete_object(self.graph, creds, platform_post_id)

    def list_recent_posts(self, creds: Credentials, since: dt.datetime) -> list[RemotePost]:
        params = {"fields": THREAD_FIELDS, "since": int(since.timestamp()), "limit": 100}
        nodes = self.graph.pages(f"{creds.external_id}/threads", token=creds.access_token, params=params)
        return [p for p in (remote_post_of(n) for n in nodes) if p.published_at >= since]

    def fetch_post_metrics(self, creds: Credentials, platform_post_ids: list[str]) -> dict[str, Metrics]:
        found: dict[str, Metrics] = {}
        for media_id in platform_post_ids:
            try:
                body = self.graph.call(
                    "GET",
                    f"{media_id}/insights",
                    token=creds.access_token,
                    params={"metric": "views,likes,replies,reposts,quotes"},
                )
            except Permanent:
                continue  # deleted thread
            found[media_id] = metrics_of(body)
        return found

    def fetch_followers(self, creds: Credentials) -> int | None:
        body = self.graph.call(
            "GET",
            f"{creds.external_id}/threads_insights",
            token=creds.access_token,
            params={"metric": "followers_count"},
        )
        return insight_values(body).get("followers_count")
