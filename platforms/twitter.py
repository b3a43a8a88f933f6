"""TWITTER (X): the X API v2 (docs.x.com).

Connect: OAuth 2.0 authorization code with PKCE (``/i/oauth2/authorize`` on x.com, ``POST
/2/oauth2/token`` with the app's Basic credentials; ``offline.access`` yields a refresh token,
which rotates on every refresh). Publish: each media file goes through the chunked v2 upload
(``/2/media/upload/initialize`` → ``/{id}/append`` → ``/{id}/finalize``; videos then report
``processing_info`` and are polled with ``command=STATUS`` until ``succeeded``), then ``POST
/2/tweets``. X has no idempotency key: after an unknown outcome ``lookup`` searches the user's
recent tweets for the exact text (capabilities: "lookup"), and X itself refuses an identical
tweet as duplicate content. Metrics from ``GET /2/tweets`` (public + non-public metrics; views
are impressions), followers from ``/2/users/me``.

Engagement: the replies under a post are its conversation, read with recent search
(``conversation_id:<post>``, ``next_token`` pages, ``start_time`` for ``since``; recent search
reaches back seven days only, so a post's older replies are out of reach), each naming the tweet
it replies to in ``referenced_tweets``. A reply is a tweet with ``reply.in_reply_to_tweet_id``
(no idempotency key, as for publishing); ``PUT /2/tweets/:id/hidden`` hides one in the account's
own conversation (the v2 tweet object has no field that says a reply is hidden, so listings report
``hidden`` False); ``DELETE /2/tweets/:id`` deletes the account's own only;
``POST /2/users/:id/likes`` likes one.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import re
from typing import Any
from urllib.parse import urlencode

import requests

from platforms.base import (
    AccountProfile,
    AuthError,
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
    PlatformError,
    PublishRequest,
    PublishResult,
    QuotaExhausted,
    RateLimited,
    RemoteComment,
    RemotePost,
    Transient,
)
from platforms.http import (
    as_int,
    download_media,
    json_or_empty,
    parse_instant,
    retry_at_from,
    send,
    token_credentials,
    web_url,
)

LIVE_BASE_URL = "https://api.x.com"
LIVE_AUTHORIZE_URL = "https://x.com/i/oauth2/authorize"
SCOPES = "tweet.read tweet.write tweet.moderate.write users.read like.write media.write offline.access"
CHUNK_BYTES = 4 * 1024 * 1024
SEARCH_DAYS = 7  # recent search reaches back this far
COMMENT_FIELDS = "author_id,conversation_id,created_at,in_reply_to_user_id,referenced_tweets,public_metrics"
COMMENT_PAGE = 100
_URL = re.compile(r"https?://\S+")


def _same_text(a: str, b: str) -> bool:
    """X rewrites links to t.co: compare the texts without their URLs and spacing."""

    def norm(text: str) -> str:
        return " ".join(_URL.sub("", text).split())

    return norm(a) == norm(b)


class Client(PlatformClient):
    platform = Platform.TWITTER
    comment_page_size = COMMENT_PAGE  # recent search's max_results: 10 to 100

    # --- plumbing -----------------------------------------------------------------------
    def _call(
        self, method: str, path: str, token: str = "", *, creates: bool = False, media: bool = False, **kwargs: Any
    ) -> Any:
        headers = kwargs.pop("headers", {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        response = send(
            self.session,
            method,
            f"{self.base_url}{path}",
            timeout=self.timeout,
            creates=creates,
            headers=headers,
            **kwargs,
        )
        if response.status_code not in (200, 201, 202, 204):
            raise self.error_from(response, media=media)
        return json_or_empty(response)

    @staticmethod
    def error_from(response: requests.Response, *, media: bool = False) -> PlatformError:
        """v2 problem details ``{title, detail, type, status}``, the ``{errors: [...]}`` list, or
        the OAuth ``{error, error_description}`` body."""
        body = json_or_empty(response)
        body = body if isinstance(body, dict) else {}
        errors = body.get("errors") if isinstance(body.get("errors"), list) else []
        message = str(
            (errors[0].get("message") if errors and isinstance(errors[0], dict) else "")
            or body.get("detail")
            or body.get("error_description")
            or body.get("title")
            or body.get("error")
            or f"HTTP {response.status_code}"
        )
        status = response.status_code
        headers = response.headers
        if status == 401 or body.get("error") == "invalid_grant":
            return AuthError(message, http_status=status)
        if status == 429:
            if (
                headers.get("x-user-limit-24hour-remaining") == "0"
                or headers.get("x-app-limit-24hour-remaining") == "0"
            ):
                reset = retry_at_from(headers, "x-user-limit-24hour-reset", "x-app-limit-24hour-reset")
                return QuotaExhausted(message, http_status=status, retry_at=reset)
            return RateLimited(message, http_status=status, retry_at=retry_at_from(headers, "x-rate-limit-reset"))
        if status >= 500:
            return Transient(message, http_status=status)
        if status == 403 and "duplicate content" in message.lower():
            return Permanent(message, error_code=ErrorCode.DUPLICATE, http_status=status)
        if status == 403:
            return Permanent(message, error_code=ErrorCode.PERMISSION_MISSING, http_status=status)
        if media:
            return Permanent(message, error_code=ErrorCode.MEDIA_REJECTED, http_status=status)
        return Permanent(message, error_code=ErrorCode.CONTENT_REJECTED, http_status=status)

    # --- after publishing ----------------------------------------------------------------
    # X's v2 API reads a post's edit history but has no call that edits: ``edit`` stays
    # NotSupported.
    def delete(self, creds: Credentials, platform_post_id: str) -> None:
        """``DELETE /2/tweets/:id``: ``{"data": {"deleted": true}}``; a post already gone (404, or
        ``deleted: false``) counts as deleted. Deleting any post of an edit chain deletes the chain."""
        try:
            self._call("DELETE", f"/2/tweets/{platform_post_id}", creds.access_token, creates=True)
        except Permanent as exc:
            if exc.http_status != 404:
                raise

    def revoke_token(self, creds: Credentials) -> None:
        """``POST /2/oauth2/revoke`` with the app's Basic credentials, for the access token and
        then the refresh token: ``{"revoked": true}`` (also for a token already revoked)."""
        for token, hint in ((creds.access_token, "access_token"), (creds.refresh_token, "refresh_token")):
            if token:
                self._call(
                    "POST",
                    "/2/oauth2/revoke",
                    creates=True,
                    data={"token": token, "token_type_hint": hint, "client_id": self.app.client_id},
                    auth=(self.app.client_id, self.app.client_secret),
                )

    # --- OAuth 2.0 with PKCE --------------------------------------------------------------
    def _fallback_verifier(self, redirect_uri: str) -> str:
        """When the caller keeps no PKCE verifier, one derived from the app secret (plain method)."""
        digest = hmac.new(self.app.client_secret.encode(), f"pkce:{redirect_uri}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def authorize_url(self, *, redirect_uri: str, state: str, code_challenge: str = "") -> str:
        method = "S256" if code_challenge else "plain"
        query = {
            "response_type": "code",
            "client_id": self.app.client_id,
            "redirect_uri": redirect_uri,
            "scope": SCOPES,
            "state": state,
            "code_challenge": code_challenge or self._fallback_verifier(redirect_uri),
            "code_challenge_method": method,
        }
        base = LIVE_AUTHORIZE_URL if self.base_url == LIVE_BASE_URL else f"{self.base_url}/i/oauth2/authorize"
        return f"{base}?{urlencode(query)}"

    def _token(self, form: dict[str, str]) -> dict[str, Any]:
        try:
            body = self._call(
                "POST",
                "/2/oauth2/token",
                data={**form, "client_id": self.app.client_id},
                auth=(self.app.client_id, self.app.client_secret),
            )
        except Permanent as exc:  # a refused code or refresh token: the user must connect again
            raise AuthError(exc.message, http_status=exc.http_status)
        return dict(body)

    def _credentials(self, token: dict[str, Any], user: dict[str, Any]) -> Credentials:
        return token_credentials(
            token, external_id=str(user["id"]), extra={"username": str(user.get("username") or "")}
        )

    def exchange_code(self, *, code: str, redirect_uri: str, code_verifier: str = "") -> list[ConnectedIdentity]:
        token = self._token(
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect_uri,
                "code_verifier": code_verifier or self._fallback_verifier(redirect_uri),
            }
        )
        user = self._me(str(token["access_token"]))
        return [
            ConnectedIdentity(
                profile=self._profile(user),
                credentials=self._credentials(token, user),
                scopes=tuple(str(token.get("scope") or "").split()),
            )
        ]

    def refresh_token(self, creds: Credentials) -> Credentials:
        token = self._token({"grant_type": "refresh_token", "refresh_token": creds.refresh_token})
        return self._credentials(token, {"id": creds.external_id, "username": creds.extra.get("username", "")})

    def _me(self, access_token: str) -> dict[str, Any]:
        params = {"user.fields": "public_metrics,profile_image_url,username,name"}
        return dict(self._call("GET", "/2/users/me", access_token, params=params)["data"])

    @staticmethod
    def _profile(user: dict[str, Any]) -> AccountProfile:
        return AccountProfile(
            external_id=str(user["id"]),
            display_name=str(user.get("name") or user.get("username") or ""),
            username=str(user.get("username") or ""),
            avatar_url=str(user.get("profile_image_url") or ""),
        )

    def check_token(self, creds: Credentials) -> AccountProfile:
        return self._profile(self._me(creds.access_token))

    def fetch_followers(self, creds: Credentials) -> int | None:
        count = (self._me(creds.access_token).get("public_metrics") or {}).get("followers_count")
        return int(count) if isinstance(count, int) else None

    # --- publish ------------------------------------------------------------------------
    def _upload(self, creds: Credentials, url: str, kind: str) -> tuple[str, dict[str, Any] | None]:
        data, mime = download_media(self.session, url, timeout=self.timeout)
        category = "tweet_video" if kind == "video" else ("tweet_gif" if mime == "image/gif" else "tweet_image")
        init = self._call(
            "POST",
            "/2/media/upload/initialize",
            creds.access_token,
            media=True,
            json={"media_type": mime, "total_bytes": len(data), "media_category": category},
        )
        media_id = str(init["data"]["id"])
        for index, start in enumerate(range(0, len(data), CHUNK_BYTES)):
            self._call(
                "POST",
                f"/2/media/upload/{media_id}/append",
                creds.access_token,
                media=True,
                data={"segment_index": str(index)},
                files={"media": ("chunk", data[start : start + CHUNK_BYTES], "application/octet-stream")},
            )
        final = self._call("POST", f"/2/media/upload/{media_id}/finalize", creds.access_token, media=True)
        return media_id, (final.get("data") or {}).get("processing_info")

    def _processing_state(self, creds: Credentials, media_id: str) -> dict[str, Any]:
        status = self._call(
            "GET",
            "/2/media/upload",
            creds.access_token,
            media=True,
            params={"command": "STATUS", "media_id": media_id},
        )
        info = (status.get("data") or {}).get("processing_info") or {"state": "succeeded"}
        if info.get("state") == "failed":
            error = info.get("error") or {}
            raise Permanent(str(error.get("message") or "media processing failed"), error_code=ErrorCode.MEDIA_REJECTED)
        return dict(info)

    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        media_ids: list[str] = list(state.get("media_ids", []))
        pending: list[str] = list(state.get("pending", []))
        wait = 0.0
        for item in request.media[len(media_ids) :]:
            media_id, info = self._upload(creds, item.url, item.kind)
            media_ids.append(media_id)
            if info and info.get("state") != "succeeded":
                pending.append(media_id)
                wait = max(wait, float(info.get("check_after_secs") or 1))
        if state.get("pending"):
            still = []
            for media_id in pending:
                info = self._processing_state(creds, media_id)
                if info.get("state") != "succeeded":
                    still.append(media_id)
                    wait = max(wait, float(info.get("check_after_secs") or 1))
            pending = still
        if pending:
            return PublishResult(done=False, state={"media_ids": media_ids, "pending": pending}, poll_after=wait or 1.0)
        payload: dict[str, Any] = {"text": request.text}
        if media_ids:
            payload["media"] = {"media_ids": media_ids}
        if request.options.get("replySettings"):
            payload["reply_settings"] = request.options["replySettings"]
        if request.reply_to is not None:
            payload["reply"] = {"in_reply_to_tweet_id": request.reply_to.parent.platform_post_id}
        created = self._call("POST", "/2/tweets", creds.access_token, creates=True, json=payload)["data"]
        return self._result(creds, str(created["id"]), dt.datetime.now(dt.UTC))

    def comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """A reply tweet (``reply.in_reply_to_tweet_id``): the thread items' call."""
        return self.publish(creds, request, state)

    def tweet_url(self, username: str, tweet_id: str) -> str:
        path = f"/{username}/status/{tweet_id}"
        return web_url(self.base_url, LIVE_BASE_URL, f"https://x.com{path}", path)

    def _result(self, creds: Credentials, tweet_id: str, published_at: dt.datetime | None) -> PublishResult:
        username = creds.extra.get("username") or "i/web"
        return PublishResult(
            done=True,
            platform_post_id=tweet_id,
            url=self.tweet_url(username, tweet_id),
            published_at=published_at,
        )

    def fetch_post(self, creds: Credentials, platform_post_id: str) -> RemotePost | None:
        """``GET /2/tweets/:id``: a post that does not exist (or was deleted) answers 200 with no
        ``data`` and a "Not Found Error" in ``errors`` (None)."""
        params = {"tweet.fields": "created_at,public_metrics"}
        body = self._call("GET", f"/2/tweets/{platform_post_id}", creds.access_token, params=params)
        tweet = body.get("data") if isinstance(body, dict) else None
        if not tweet:
            errors = body.get("errors") if isinstance(body, dict) else None
            if errors and any(isinstance(e, dict) and e.get("title") == "Not Found Error" for e in errors):
                return None
            raise PlatformError(f"X answered no post for {platform_post_id}: {errors or body}")
        username = creds.extra.get("username") or "i/web"
        return RemotePost(
            platform_post_id=str(tweet["id"]),
            published_at=parse_instant(tweet.get("created_at")) or dt.datetime.now(dt.UTC),
            text=str(tweet.get("text") or ""),
            permalink=self.tweet_url(username, str(tweet["id"])),
            metrics=self.metrics_from(tweet),
        )

    def lookup(self, creds: Credentials, request: PublishRequest) -> PublishResult | None:
        if request.reply_to is not None:
            raise NotSupported  # the timeline read here leaves replies out: a reply cannot be found by it
        since = dt.datetime.now(dt.UTC) - dt.timedelta(days=2)
        for post in self.list_recent_posts(creds, since, pages=2):
            if _same_text(post.text, request.text):
                return self._result(creds, post.platform_post_id, post.published_at)
        return None

    # --- engagement ---------------------------------------------------------------------
    def list_comments(
        self, creds: Credentials, platform_post_id: str, *, since: dt.datetime | None = None, cursor: str = ""
    ) -> CommentPage:
        """``GET /2/tweets/search/recent`` with ``conversation_id:<post>``: the replies of the last
        seven days (newest first, ``since`` as ``start_time``), the post itself left out."""
        params: dict[str, Any] = {
            "query": f"conversation_id:{platform_post_id}",
            "max_results": self.comment_page_size,
            "tweet.fields": COMMENT_FIELDS,
            "expansions": "author_id",
            "user.fields": "name,username,profile_image_url",
        }
        reach = dt.datetime.now(dt.UTC) - dt.timedelta(days=SEARCH_DAYS) + dt.timedelta(minutes=1)
        if since is not None and since > reach:
            params["start_time"] = since.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        if cursor:
            params["next_token"] = cursor
        body = self._call("GET", "/2/tweets/search/recent", creds.access_token, params=params)
        users = {str(u.get("id")): u for u in (body.get("includes") or {}).get("users") or [] if isinstance(u, dict)}
        comments = tuple(
            self._comment_from(creds, platform_post_id, tweet, users)
            for tweet in body.get("data") or []
            if isinstance(tweet, dict) and str(tweet.get("id")) != platform_post_id
        )
        return CommentPage(comments, cursor=str((body.get("meta") or {}).get("next_token") or ""))

    def _comment_from(
        self, creds: Credentials, post_id: str, tweet: dict[str, Any], users: dict[str, dict[str, Any]]
    ) -> RemoteComment:
        replied = next(
            (str(r.get("id")) for r in tweet.get("referenced_tweets") or [] if r.get("type") == "replied_to"), ""
        )
        author_id = str(tweet.get("author_id") or "")
        author = users.get(author_id) or {}
        metrics = tweet.get("public_metrics") or {}
        tweet_id = str(tweet["id"])
        return RemoteComment(
            platform_comment_id=tweet_id,
            platform_post_id=post_id,
            text=str(tweet.get("text") or ""),
            created_at=parse_instant(tweet.get("created_at")) or dt.datetime.now(dt.UTC),
            author=CommentAuthor(
                id=author_id,
                name=str(author.get("name") or ""),
                handle=str(author.get("username") or ""),
                avatar_url=str(author.get("profile_image_url") or ""),
            ),
            parent_id="" if replied in ("", post_id) else replied,
            like_count=as_int(metrics.get("like_count")),
            reply_count=as_int(metrics.get("reply_count")),
            permalink=self.tweet_url(str(author.get("username") or "i/web"), tweet_id),
            from_account=author_id == creds.external_id,
        )

    def reply_comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """A reply tweet to the comment (``reply.in_reply_to_tweet_id``), as :meth:`comment`."""
        if request.reply_to is None:
            raise Permanent("A reply needs the comment it answers", error_code=ErrorCode.INVALID_REQUEST)
        return self.publish(creds, request, state)

    def set_comment_hidden(self, creds: Credentials, platform_comment_id: str, hidden: bool) -> None:
        """``PUT /2/tweets/:id/hidden`` (a reply in a conversation the account started)."""
        self._call(
            "PUT",
            f"/2/tweets/{platform_comment_id}/hidden",
            creds.access_token,
            creates=True,
            json={"hidden": hidden},
        )

    def delete_comment(self, creds: Credentials, platform_comment_id: str, *, parent_id: str = "") -> None:
        """``DELETE /2/tweets/:id``: the account's own reply (another's answers 403, Permanent); a
        reply already gone counts as deleted."""
        self.delete(creds, platform_comment_id)

    def like_comment(self, creds: Credentials, platform_comment_id: str) -> None:
        """``POST /2/users/:id/likes``; a tweet already liked stays liked."""
        self._call(
            "POST",
            f"/2/users/{creds.external_id}/likes",
            creds.access_token,
            creates=True,
            json={"tweet_id": platform_comment_id},
        )

    # --- analytics ----------------------------------------------------------------------
    @staticmethod
    def metrics_from(tweet: dict[str, Any]) -> Metrics:
        public = tweet.get("public_metrics") or {}
        private = tweet.get("non_public_metrics") or tweet.get("organic_metrics") or {}
        views = private.get("impression_count", public.get("impression_count"))
        return Metrics(
            views=int(views) if isinstance(views, int) else None,
            likes=int(public.get("like_count") or 0),
            comments=int(public.get("reply_count") or 0),
            shares=int(public.get("retweet_count") or 0) + int(public.get("quote_count") or 0),
        )

    def fetch_post_metrics(self, creds: Credentials, platform_post_ids: list[str]) -> dict[str, Metrics]:
        found: dict[str, Metrics] = {}
        for start in range(0, len(platform_post_ids), 100):
            params = {
                "ids": ",".join(platform_post_ids[start : start + 100]),
                "tweet.fields": "public_metrics,non_public_metrics",
            }
            for tweet in self._call("GET", "/2/tweets", creds.access_token, params=params).get("data") or []:
                found[str(tweet["id"])] = self.metrics_from(tweet)
        return found

    def list_recent_posts(self, creds: Credentials, since: dt.datetime, *, pages: int = 50) -> list[RemotePost]:
        posts: list[RemotePost] = []
        params: dict[str, Any] = {
            "max_results": 100,
            "tweet.fields": "created_at,public_metrics",
            "exclude": "retweets,replies",
            "start_time": since.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        username = creds.extra.get("username") or "i/web"
        for _page in range(pages):
            body = self._call("GET", f"/2/users/{creds.external_id}/tweets", creds.access_token, params=params)
            for tweet in body.get("data") or []:
                posts.append(
                    RemotePost(
                        platform_post_id=str(tweet["id"]),
                        published_at=parse_instant(tweet.get("created_at")) or dt.datetime.now(dt.UTC),
                        text=str(tweet.get("text") or ""),
                        permalink=self.tweet_url(username, str(tweet["id"])),
                        metrics=self.metrics_from(tweet),
                    )
                )
            next_token = (body.get("meta") or {}).get("next_token")
            if not next_token:
                break
            params["pagination_token"] = next_token
        return posts
