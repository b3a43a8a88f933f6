"""LinkedIn versioned REST API (``LinkedIn-Version: YYYYMM``, Rest.li 2.0): OAuth 2.0 with
refresh tokens, OpenID userinfo for the member urn, the Posts API with text, one image, several
images (multiImage), one video or one document, and member analytics.

Media go up first (Images / Videos / Documents API: initializeUpload → PUT → finalize for
video → wait until AVAILABLE); every urn obtained is kept in ``state`` so a resumed call never
uploads twice, and the post is created last.

Metrics: likes and comments from socialActions (likesSummary.totalLikes,
commentsSummary.aggregatedTotalComments); views (IMPRESSION) and shares (RESHARE) from
memberCreatorPostAnalytics (None when the app lacks that product). Followers:
memberFollowersCount?q=me.

Engagement (Comments and Reactions APIs; reading a member's comments needs r_member_social):
``GET /rest/socialActions/{post urn}/comments`` pages the first-level comments (``start``/``count``)
and ``/rest/socialActions/{comment urn}/comments`` the replies of each that has some, fetched with
its page; the call has no time filter, so ``since`` is applied here. A comment names its author
by URN only (the API gives no member names). LinkedIn nests one level: a reply to a reply goes
under the first-level comment (read first with ``GET .../comments/{id}``), naming it as
``parentComment``; there is no idempotency key. ``DELETE .../comments/{id}?actor=`` deletes the
member's own comment; LinkedIn has no hide; ``POST /rest/reactions`` likes one."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from urllib.parse import quote, urlencode

import requests

from platforms.base import (
    AccountProfile,
    AuthError,
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
    PlatformClient,
    PlatformError,
    PublishRequest,
    PublishResult,
    RateLimited,
    RemoteComment,
    RemotePost,
    Transient,
    UnknownOutcome,
)
from platforms.capabilities import CAPABILITIES
from platforms.http import (
    as_int,
    download_media,
    host_url,
    json_or_empty,
    parse_instant,
    refuse_edit_fields,
    retry_at_from,
    send,
    token_credentials,
    utcnow,
    web_url,
)

LIVE_BASE_URL = "https://api.linkedin.com"
LIVE_AUTHORIZE_URL = "https://www.linkedin.com/oauth/v2/authorization"
LIVE_TOKEN_URL = "https://www.linkedin.com/oauth/v2/accessToken"
LIVE_REVOKE_URL = "https://www.linkedin.com/oauth/v2/revoke"
API_VERSION = "202506"
SCOPES = (
    "openid",
    "profile",
    "email",
    "w_member_social",
    "r_member_social",
    "r_member_postAnalytics",
    "r_member_profileAnalytics",
)
PROCESSING_POLL_SECONDS = 3.0
PAGE_SIZE = 50
COMMENT_PAGE = 100  # the Comments API's largest count
_COMMENT_URN = re.compile(r"^urn:li:comment:\((urn:li:[a-zA-Z]+:[^,()]+),([^,()]+)\)$")


def urn_path(urn: str) -> str:
    return quote(urn, safe="")


class Client(PlatformClient):
    platform = Platform.LINKEDIN
    comment_page_size = COMMENT_PAGE

    # --- transport -------------------------------------------------------------------------
    def _call(
        self, method: str, path: str, creds: Credentials, *, creates: bool = False, **kwargs: Any
    ) -> requests.Response:
        headers = {
            "Authorization": f"Bearer {creds.access_token}",
            "LinkedIn-Version": API_VERSION,
            "X-Restli-Protocol-Version": "2.0.0",
            **kwargs.pop("headers", {}),
        }
        url = path if path.startswith("http") else f"{self.base_url}{path}"
        response = send(self.session, method, url, timeout=self.timeout, creates=creates, headers=headers, **kwargs)
        if response.status_code >= 400:
            raise linkedin_error(response)
        return response

    def _json(self, method: str, path: str, creds: Credentials, **kwargs: Any) -> dict[str, Any]:
        return json_or_empty(self._call(method, path, creds, **kwargs))

    # --- OAuth and account -----------------------------------------------------------------
    def authorize_url(self, *, redirect_uri: str, state: str, code_challenge: str = "") -> str:
        base = host_url(self.base_url, LIVE_BASE_URL, LIVE_AUTHORIZE_URL, "/oauth/v2/authorization")
        query = {
            "response_type": "code",
            "client_id": self.app.client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "scope": " ".join(SCOPES),
        }
        return f"{base}?{urlencode(query)}"

    def _token(self, form: dict[str, str]) -> dict[str, Any]:
        url = host_url(self.base_url, LIVE_BASE_URL, LIVE_TOKEN_URL, "/oauth/v2/accessToken")
        data = {**form, "client_id": self.app.client_id, "client_secret": self.app.client_secret}
        response = send(self.session, "POST", url, timeout=self.timeout, data=data)
        if response.status_code >= 500:
            raise Transient(
                f"LinkedIn token endpoint answered {response.status_code}", http_status=response.status_code
            )
        body = json_or_empty(response)
        if response.status_code >= 400 or not body.get("access_token"):
            message = str(body.get("error_description") or body.get("error") or "token request refused")
            raise AuthError(message, http_status=response.status_code)
        return body

    @staticmethod
    def _credentials(token: dict[str, Any], external_id: str, previous_refresh: str = "") -> Credentials:
        return token_credentials(token, external_id=external_id, previous_refresh=previous_refresh)

    def exchange_code(self, *, code: str, redirect_uri: str, code_verifier: str = "") -> list[ConnectedIdentity]:
        token = self._token({"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri})
        profile = self.check_token(self._credentials(token, ""))
        scopes = tuple(s for s in str(token.get("scope") or "").replace(",", " ").split() if s)
        return [
            ConnectedIdentity(profile=profile, credentials=self._credentials(token, profile.external_id), scopes=scopes)
        ]

    def refresh_token(self, creds: Credentials) -> Credentials:
        if not creds.refresh_token:
            raise AuthError("no refresh token was issued for this account")
        token = self._token({"grant_type": "refresh_token", "refresh_token": creds.refresh_token})
        return self._credentials(token, creds.external_id, creds.refresh_token)

    def check_token(self, creds: Credentials) -> AccountProfile:
        info = self._json("GET", "/v2/userinfo", creds)
        return AccountProfile(
            external_id=str(info["sub"]),
            display_name=str(info.get("name") or ""),
            username="",  # LinkedIn gives members no handle through this API; the e-mail is none
            avatar_url=str(info.get("picture") or ""),
        )

    def fetch_followers(self, creds: Credentials) -> int | None:
        body = self._json("GET", "/rest/memberFollowersCount", creds, params={"q": "me"})
        elements = body.get("elements") or [{}]
        return as_int(elements[0].get("memberFollowersCount"))

    # --- publishing ----------------------------------------------------------------------
    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        author = f"urn:li:person:{creds.external_id}"
        kinds = {m.kind for m in request.media}
        if "video" in kinds:
            pending = self._video(creds, request, state, author)
        elif "document" in kinds:
            pending = self._document(creds, request, state, author)
        elif request.media:
            pending = self._images(creds, request, state, author)
        else:
            pending = None
        if pending is not None:
            return pending
        return self._post(creds, request, state, author)

    def _put_bytes(self, url: str, creds: Credentials, data: bytes, mime: str) -> requests.Response:
        response = send(
            self.session,
            "PUT",
            url,
            timeout=self.timeout,
            data=data,
            headers={"Authorization": f"Bearer {creds.access_token}", "Content-Type": mime},
        )
        if response.status_code >= 400:
            raise linkedin_error(response)
        return response

    def _images(
        self, creds: Credentials, request: PublishRequest, state: dict[str, Any], author: str
    ) -> PublishResult | None:
        urns = list(state.get("images") or [])
        if len(urns) == len(request.media):
            return None
        for item in request.media[len(urns) :]:
            init = self._json(
                "POST",
                "/rest/images",
                creds,
                params={"action": "initializeUpload"},
                json={"initializeUploadRequest": {"owner": author}},
            )["value"]
            data, mime = download_media(self.session, item.url, timeout=self.timeout)
            self._put_bytes(str(init["uploadUrl"]), creds, data, mime or item.mime_type)
            urns.append(str(init["image"]))
        return PublishResult(done=False, state={**state, "images": urns}, poll_after=0.0)

    def _video(
        self, creds: Credentials, request: PublishRequest, state: dict[str, Any], author: str
    ) -> PublishResult | None:
        item = next(m for m in request.media if m.kind == "video")
        if not state.get("video"):
            size = item.size or len(download_media(self.session, item.url, timeout=self.timeout)[0])
            init = self._json(
                "POST",
                "/rest/videos",
                creds,
                params={"action": "initializeUpload"},
                json={
                    "initializeUploadRequest": {
                        "owner": author,
                        "fileSizeBytes": size,
                        "uploadCaptions": False,
                        "uploadThumbnail": False,
                    }
                },
            )
            value = init["value"]
            return PublishResult(
                done=False,
                poll_after=0.0,
                state={
                    "video": str(value["video"]),
                    "upload_token": str(value.get("uploadToken") or ""),
                    "instructions": [
                        {"url": i["uploadUrl"], "first": i["firstByte"], "last": i["lastByte"]}
                        for i in value.get("uploadInstructions") or []
                    ],
                },
            )
        if not state.get("finalized"):
            data, _ = download_media(self.session, item.url, timeout=self.timeout)
            etags = []
            for part in state["instructions"]:
                response = self._put_bytes(
                    part["url"], creds, data[part["first"] : part["last"] + 1], "application/octet-stream"
                )
                etags.append(response.headers.get("ETag", ""))
            self._call(
                "POST",
                "/rest/videos",
                creds,
                params={"action": "finalizeUpload"},
                json={
                    "finalizeUploadRequest": {
                        "video": state["video"],
                        "uploadToken": state["upload_token"],
                        "uploadedPartIds": etags,
                    }
                },
            )
            return PublishResult(done=False, state={**state, "finalized": True}, poll_after=PROCESSING_POLL_SECONDS)
        return self._wait_available(creds, "/rest/videos", str(state["video"]), state)

    def _document(
        self, creds: Credentials, request: PublishRequest, state: dict[str, Any], author: str
    ) -> PublishResult | None:
        if not state.get("document"):
            item = next(m for m in request.media if m.kind == "document")
            init = self._json(
                "POST",
                "/rest/documents",
                creds,
                params={"action": "initializeUpload"},
                json={"initializeUploadRequest": {"owner": author}},
            )["value"]
            data, mime = download_media(self.session, item.url, timeout=self.timeout)
            self._put_bytes(str(init["uploadUrl"]), creds, data, mime or item.mime_type)
            return PublishResult(
                done=False, state={**state, "document": str(init["document"])}, poll_after=PROCESSING_POLL_SECONDS
            )
        return self._wait_available(creds, "/rest/documents", str(state["document"]), state)

    def _wait_available(
        self, creds: Credentials, collection: str, urn: str, state: dict[str, Any]
    ) -> PublishResult | None:
        if state.get("available"):
            return None
        status = str(self._json("GET", f"{collection}/{urn_path(urn)}", creds).get("status") or "")
        if status == "AVAILABLE":
            state["available"] = True
            return None
        if status in {"PROCESSING_FAILED", "CLIENT_ERROR"}:
            raise Permanent(f"LinkedIn could not process the media ({status})", error_code=ErrorCode.MEDIA_REJECTED)
        return PublishResult(done=False, state=state, poll_after=PROCESSING_POLL_SECONDS)

    def _post(self, creds: Credentials, request: PublishRequest, state: dict[str, Any], author: str) -> PublishResult:
        body: dict[str, Any] = {
            "author": author,
            "commentary": request.text,
            "visibility": "PUBLIC",
            "distribution": {
                "feedDistribution": "MAIN_FEED",
                "targetEntities": [],
                "thirdPartyDistributionChannels": [],
            },
            "lifecycleState": "PUBLISHED",
            "isReshareDisabledByAuthor": False,
        }
        images = list(state.get("images") or [])
        alts = [m.alt_text for m in request.media]
        if state.get("video"):
            body["content"] = {"media": {"id": state["video"]}}
        elif state.get("document"):
            title = str(request.options.get("documentTitle") or "Document")
            body["content"] = {"media": {"id": state["document"], "title": title}}
        elif len(images) == 1:
            body["content"] = {"media": {"id": images[0], "altText": alts[0]}}
        elif images:
            body["content"] = {
                "multiImage": {"images": [{"id": u, "altText": a} for u, a in zip(images, alts, strict=False)]}
            }
        response = self._call("POST", "/rest/posts", creds, json=body, creates=True)
        urn = response.headers.get("x-restli-id") or response.headers.get("x-linkedin-id") or ""
        if not urn:
            raise Transient("LinkedIn created the post but sent no x-restli-id")
        return PublishResult(
            done=True,
            platform_post_id=urn,
            url=self.post_url(urn),
            published_at=dt.datetime.now(dt.UTC),
        )

    def post_url(self, urn: str) -> str:
        """The post's page on linkedin.com (the simulator's in sandbox mode)."""
        path = f"/feed/update/{urn}/"
        return web_url(self.base_url, LIVE_BASE_URL, f"https://www.linkedin.com{path}", path)

    def comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """``POST /rest/socialActions/{urn}/comments`` as the member: no idempotency key, so the
        pipeline never re-sends one whose outcome is unknown. The comment's URN is its id."""
        if request.reply_to is None:
            raise Permanent("A comment needs the post it replies to", error_code=ErrorCode.INVALID_REQUEST)
        urn = request.reply_to.parent.platform_post_id
        body = {"actor": f"urn:li:person:{creds.external_id}", "object": urn, "message": {"text": request.text}}
        response = self._call(
            "POST", f"/rest/socialActions/{quote(urn, safe='')}/comments", creds, json=body, creates=True
        )
        created = json_or_empty(response)
        comment_urn = str(created.get("$URN") or response.headers.get("x-restli-id") or "")
        if not comment_urn:
            raise UnknownOutcome("LinkedIn answered the comment without its URN")
        return PublishResult(done=True, platform_post_id=comment_urn)

    # --- engagement -------------------------------------------------------------------------
    def _actor(self, creds: Credentials) -> str:
        return f"urn:li:person:{creds.external_id}"

    @staticmethod
    def _split_comment(urn: str) -> tuple[str, str]:
        """(the post's URN, the comment's id) of ``urn:li:comment:(<post urn>,<id>)``."""
        match = _COMMENT_URN.match(urn)
        if match is None:
            raise Permanent(f"{urn!r} is not a LinkedIn comment URN", error_code=ErrorCode.INVALID_REQUEST)
        return match.group(1), match.group(2)

    def _comment_pages(self, creds: Credentials, target: str, start: int) -> tuple[list[dict[str, Any]], int | None]:
        """One page of the comments on ``target`` from ``start``: (elements, the next start or None)."""
        body = self._json(
            "GET",
            f"/rest/socialActions/{urn_path(target)}/comments",
            creds,
            params={"start": start, "count": self.comment_page_size},
        )
        elements = [e for e in body.get("elements") or [] if isinstance(e, dict)]
        paging = body.get("paging") or {}
        total = as_int(paging.get("total"))
        after = start + len(elements)
        more = (
            after < total if total is not None else any(link.get("rel") == "next" for link in paging.get("links") or [])
        )
        return elements, (after if elements and more else None)

    def list_comments(
        self, creds: Credentials, platform_post_id: str, *, since: dt.datetime | None = None, cursor: str = ""
    ) -> CommentPage:
        """A page of first-level comments with every reply of each (their own pages followed to the
        end); the cursor is the next first-level ``start``. A post that is gone (404) has none."""
        try:
            start = int(cursor or 0)
        except ValueError:
            raise Permanent(f"{cursor!r} is not a LinkedIn comment cursor", error_code=ErrorCode.INVALID_REQUEST)
        try:
            elements, following = self._comment_pages(creds, platform_post_id, start)
        except Permanent as exc:
            if exc.http_status == 404:
                return CommentPage(())
            raise
        found: list[dict[str, Any]] = []
        for element in elements:
            found.append(element)
            replies = (element.get("commentsSummary") or {}).get("totalFirstLevelComments")
            urn = str(element.get("commentUrn") or element.get("$URN") or "")
            reply_start: int | None = 0 if urn and (as_int(replies) or 0) > 0 else None
            while reply_start is not None:
                page, reply_start = self._comment_pages(creds, urn, reply_start)
                found.extend(page)
        comments = tuple(
            comment
            for comment in (self._comment_from(creds, platform_post_id, e) for e in found)
            if comment is not None and (since is None or comment.created_at >= since)
        )
        return CommentPage(comments, cursor="" if following is None else str(following))

    def _comment_from(self, creds: Credentials, post_urn: str, element: dict[str, Any]) -> RemoteComment | None:
        urn = str(element.get("commentUrn") or element.get("$URN") or "")
        if not urn:
            return None
        actor = str(element.get("actor") or "")
        likes = element.get("likesSummary") or {}
        replies = element.get("commentsSummary") or {}
        created = parse_instant((element.get("created") or {}).get("time"), millis=True)
        link = f"/feed/update/{post_urn}/?commentUrn={urn_path(urn)}"
        return RemoteComment(
            platform_comment_id=urn,
            platform_post_id=post_urn,
            text=str((element.get("message") or {}).get("text") or ""),
            created_at=created or dt.datetime.now(dt.UTC),
            author=CommentAuthor(id=actor),
            parent_id=str(element.get("parentComment") or ""),
            like_count=as_int(likes.get("totalLikes")),
            reply_count=as_int(replies.get("totalFirstLevelComments")),
            permalink=web_url(self.base_url, LIVE_BASE_URL, f"https://www.linkedin.com{link}", link),
            from_account=actor == self._actor(creds),
        )

    def reply_comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """``POST /rest/socialActions/{comment urn}/comments`` with ``parentComment``: the reply goes
        under the first-level comment of the one answered (LinkedIn nests one level), read first,
        which also refuses a reply to a comment that is not there before anything is sent."""
        if request.reply_to is None:
            raise Permanent("A reply needs the comment it answers", error_code=ErrorCode.INVALID_REQUEST)
        post_urn, comment_id = self._split_comment(request.reply_to.parent.platform_post_id)
        try:
            parent = self._json("GET", f"/rest/socialActions/{urn_path(post_urn)}/comments/{comment_id}", creds)
        except Permanent as exc:
            if exc.http_status == 404:
                raise Permanent("The comment to reply to was not found", error_code=ErrorCode.INVALID_REQUEST)
            raise
        top = str(parent.get("parentComment") or request.reply_to.parent.platform_post_id)
        body = {
            "actor": self._actor(creds),
            "object": post_urn,
            "message": {"text": request.text},
            "parentComment": top,
        }
        response = self._call("POST", f"/rest/socialActions/{urn_path(top)}/comments", creds, json=body, creates=True)
        created = json_or_empty(response)
        urn = str(created.get("$URN") or created.get("commentUrn") or response.headers.get("x-restli-id") or "")
        if not urn:
            raise UnknownOutcome("LinkedIn answered the reply without its URN")
        return PublishResult(done=True, platform_post_id=urn, url=self.post_url(post_urn), published_at=utcnow())

    def delete_comment(self, creds: Credentials, platform_comment_id: str, *, parent_id: str = "") -> None:
        """``DELETE /rest/socialActions/{post urn}/comments/{id}?actor=``: the member's own comment
        (another's is refused, Permanent); one already gone (404) counts as deleted."""
        post_urn, comment_id = self._split_comment(platform_comment_id)
        try:
            self._call(
                "DELETE",
                f"/rest/socialActions/{urn_path(post_urn)}/comments/{comment_id}",
                creds,
                creates=True,
                params={"actor": self._actor(creds)},
                headers={"X-RestLi-Method": "DELETE"},
            )
        except Permanent as exc:
            if exc.http_status != 404:
                raise

    def like_comment(self, creds: Credentials, platform_comment_id: str) -> None:
        """``POST /rest/reactions?actor=`` with a ``LIKE`` of the comment (again: still liked; a
        409 for a reaction that exists counts as done)."""
        try:
            self._call(
                "POST",
                "/rest/reactions",
                creds,
                creates=True,
                params={"actor": self._actor(creds)},
                json={"root": platform_comment_id, "reactionType": "LIKE"},
            )
        except Permanent as exc:
            if exc.http_status != 409:
                raise

    # --- analytics -----------------------------------------------------------------------
    # --- after publishing ----------------------------------------------------------------
    def edit(self, creds: Credentials, request: EditRequest) -> EditResult:
        """``POST /rest/posts/{urn}`` with ``X-RestLi-Method: PARTIAL_UPDATE`` and ``{"patch":
        {"$set": {"commentary": …}}}``: 204. The Posts API changes only the commentary (and a few
        ad fields) of a published post; its media stay."""
        refuse_edit_fields("LINKEDIN", request, CAPABILITIES[Platform.LINKEDIN].edit_fields)
        urn = request.platform_post_id
        if request.text is not None:
            self._call(
                "POST",
                f"/rest/posts/{urn_path(urn)}",
                creds,
                creates=True,
                headers={"X-RestLi-Method": "PARTIAL_UPDATE"},
                json={"patch": {"$set": {"commentary": request.text}}},
            )
        return EditResult(url=self.post_url(urn), edited_at=utcnow() if request.text is not None else None)

    def fetch_post(self, creds: Credentials, platform_post_id: str) -> RemotePost | None:
        """``GET /rest/posts/{urn}`` (404, or a post no longer ``PUBLISHED``: gone)."""
        try:
            post = self._json("GET", f"/rest/posts/{urn_path(platform_post_id)}", creds)
        except Permanent as exc:
            if exc.http_status == 404:
                return None
            raise
        if post.get("lifecycleState") not in (None, "PUBLISHED"):
            return None
        published = parse_instant(post.get("publishedAt") or post.get("createdAt"), millis=True)
        return RemotePost(
            platform_post_id=str(post.get("id") or platform_post_id),
            published_at=published or dt.datetime.now(dt.UTC),
            text=str(post.get("commentary") or ""),
            permalink=self.post_url(platform_post_id),
        )

    def delete(self, creds: Credentials, platform_post_id: str) -> None:
        """``DELETE /rest/posts/{urn}`` (``X-RestLi-Method: DELETE``): 204, also for a post already
        deleted (LinkedIn documents deletes as idempotent); a 404 counts as deleted too."""
        try:
            self._call(
                "DELETE",
                f"/rest/posts/{urn_path(platform_post_id)}",
                creds,
                creates=True,
                headers={"X-RestLi-Method": "DELETE"},
            )
        except Permanent as exc:
            if exc.http_status != 404:
                raise

    def revoke_token(self, creds: Credentials) -> None:
        """``POST https://www.linkedin.com/oauth/v2/revoke`` with the app's credentials and the
        access token: 200, for a token already revoked too."""
        url = host_url(self.base_url, LIVE_BASE_URL, LIVE_REVOKE_URL, "/oauth/v2/revoke")
        data = {"client_id": self.app.client_id, "client_secret": self.app.client_secret, "token": creds.access_token}
        response = send(self.session, "POST", url, timeout=self.timeout, creates=True, data=data)
        if response.status_code >= 400:
            body = json_or_empty(response)
            message = str(body.get("error_description") or body.get("error") or f"HTTP {response.status_code}")
            if response.status_code >= 500:
                raise Transient(message, http_status=response.status_code)
            raise Permanent(message, error_code=ErrorCode.INVALID_REQUEST, http_status=response.status_code)

    def list_recent_posts(self, creds: Credentials, since: dt.datetime) -> list[RemotePost]:
        author = f"urn:li:person:{creds.external_id}"
        found: list[RemotePost] = []
        start = 0
        while True:
            query = urlencode(
                {"q": "author", "author": author, "count": PAGE_SIZE, "start": start, "sortBy": "LAST_MODIFIED"}
            )
            body = self._json("GET", f"/rest/posts?{query}", creds)
            elements = body.get("elements") or []
            for post in elements:
                published = parse_instant(post.get("publishedAt") or post.get("createdAt"), millis=True)
                if published is None or published < since or post.get("lifecycleState") != "PUBLISHED":
                    continue
                found.append(
                    RemotePost(
                        platform_post_id=str(post["id"]),
                        published_at=published,
                        text=str(post.get("commentary") or ""),
                        permalink=self.post_url(str(post["id"])),
                    )
                )
            start += len(elements)
            total = as_int((body.get("paging") or {}).get("total"))
            if not elements or len(elements) < PAGE_SIZE or (total is not None and start >= total):
                return found

    def fetch_post_metrics(self, creds: Credentials, platform_post_ids: list[str]) -> dict[str, Metrics]:
        result: dict[str, Metrics] = {}
        for urn in platform_post_ids:
            try:
                actions = self._json("GET", f"/rest/socialActions/{urn_path(urn)}", creds)
            except Permanent as exc:
                if exc.http_status == 404:
                    continue
                raise
            impressions = self._creator_metric(creds, urn, "IMPRESSION")
            result[urn] = Metrics(
                views=impressions,
                likes=as_int((actions.get("likesSummary") or {}).get("totalLikes")),
                comments=as_int((actions.get("commentsSummary") or {}).get("aggregatedTotalComments")),
                shares=self._creator_metric(creds, urn, "RESHARE"),
                impressions=impressions,
                reach=self._creator_metric(creds, urn, "MEMBERS_REACHED"),
            )
        return result

    def _creator_metric(self, creds: Credentials, urn: str, query_type: str) -> int | None:
        kind = "ugcPost" if ":ugcPost:" in urn else "share"
        # Rest.li 2.0 tuple syntax: the parentheses stay literal, the urn inside is encoded.
        query = f"q=entity&entity=({kind}:{urn_path(urn)})&queryType={query_type}&aggregation=TOTAL"
        try:
            body = self._json("GET", f"/rest/memberCreatorPostAnalytics?{query}", creds)
        except Permanent as exc:
            if exc.error_code in (ErrorCode.PERMISSION_MISSING, ErrorCode.INVALID_REQUEST):
                return None
            raise
        counts = [as_int(e.get("count")) for e in body.get("elements") or []]
        return sum(c for c in counts if c is not None) if counts else None


def _next_utc_midnight() -> dt.datetime:
    today = dt.datetime.now(dt.UTC).date()
    return dt.datetime.combine(today + dt.timedelta(days=1), dt.time(0, 0), dt.UTC)


def linkedin_error(response: requests.Response) -> PlatformError:
    """Classify ``{status, serviceErrorCode, code, message}``; LinkedIn's message is kept."""
    body = json_or_empty(response)
    status = response.status_code
    message = str(body.get("message") or response.reason or "LinkedIn error")
    code = str(body.get("code") or "")
    if status == 401:
        return AuthError(message, http_status=status)
    if status == 429:
        # LinkedIn's throttles are daily and reset at midnight UTC; a Retry-After, if sent, wins.
        return RateLimited(
            message, http_status=status, retry_at=retry_at_from(response.headers) or _next_utc_midnight()
        )
    if status >= 500:
        return Transient(message, http_status=status)
    if code == "DUPLICATE_POST" or (status == 422 and "duplicate" in message.lower()):
        return Permanent(message, error_code=ErrorCode.DUPLICATE, http_status=status)
    if status == 403:
        return Permanent(message, error_code=ErrorCode.PERMISSION_MISSING, http_status=status)
    if any(word in message.lower() for word in ("image", "video", "document", "upload", "media")):
        return Permanent(message, error_code=ErrorCode.MEDIA_REJECTED, http_status=status)
    if status in (404, 426):
        return Permanent(message, error_code=ErrorCode.INVALID_REQUEST, http_status=status)
    return Permanent(message, error_code=ErrorCode.CONTENT_REJECTED, http_status=status)
