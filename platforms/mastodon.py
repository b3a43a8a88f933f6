"""MASTODON: the REST API of one Mastodon server (docs.joinmastodon.org).

Connect: OAuth 2 authorization code (``/oauth/authorize`` → ``POST /oauth/token``) with the app
registered on the server (``POST /api/v1/apps``). Publish: every media file goes up through
``POST /api/v2/media`` (202 while the server processes it, then ``GET /api/v1/media/:id`` until it
answers 200 with a ``url``), then ``POST /api/v1/statuses`` carrying ``Idempotency-Key: <target
id>``: the server answers a repeated key with the status it already created, so a resumed or
re-sent publish never makes a second status. Mastodon reports no analytics to us; the account's
statuses can still be listed and its followers counted.

Engagement: a post's replies are the ``descendants`` of ``GET /api/v1/statuses/:id/context``
(every one in one answer, each naming ``in_reply_to_id``; the call has no cursor and no time
filter, so ``since`` is applied here). A reply is a status with ``in_reply_to_id`` and the
``Idempotency-Key`` of its request, like a first comment; ``favourite`` likes one. Mastodon lets an
account delete only its own statuses and has no call that hides another's reply to it.
"""

from __future__ import annotations

import datetime as dt
import html
import re
from dataclasses import replace
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
    EditRequest,
    EditResult,
    ErrorCode,
    MediaItem,
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
)
from platforms.http import as_int, classify_http, download_media, json_or_empty, parse_instant, retry_at_from, send

LIVE_BASE_URL = "https://mastodon.social"
SCOPES = "read write"
PROCESSING_POLL_SECONDS = 2.0
_TAG = re.compile(r"<[^>]+>")


def html_to_text(content: str) -> str:
    """A status's ``content`` (HTML) as plain text: paragraphs and breaks become newlines."""
    text = re.sub(r"<br\s*/?>", "\n", content or "")
    text = re.sub(r"</p>\s*<p>", "\n\n", text)
    return html.unescape(_TAG.sub("", text)).strip()


class Client(PlatformClient):
    platform = Platform.MASTODON

    # --- plumbing -----------------------------------------------------------------------
    def _headers(self, creds: Credentials | None, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = {"Accept": "application/json", **(extra or {})}
        if creds is not None:
            headers["Authorization"] = f"Bearer {creds.access_token}"
        return headers

    def _call(
        self,
        method: str,
        path: str,
        creds: Credentials | None,
        *,
        creates: bool = False,
        ok: tuple[int, ...] = (200,),
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> requests.Response:
        response = send(
            self.session,
            method,
            f"{self.base_url}{path}",
            timeout=self.timeout,
            creates=creates,
            headers=self._headers(creds, headers),
            **kwargs,
        )
        if response.status_code not in ok:
            raise self.error_from(response)
        return response

    @staticmethod
    def error_from(response: requests.Response) -> PlatformError:
        """Mastodon answers ``{"error": "...", "error_description"?: "..."}``; the status code
        carries the class (401 token, 403 scope, 404, 422 validation, 429 with X-RateLimit-Reset)."""
        body = json_or_empty(response)
        message = ""
        if isinstance(body, dict):
            message = str(body.get("error_description") or body.get("error") or "")
        message = message or f"HTTP {response.status_code}"
        status = response.status_code
        if status == 422:
            lowered = message.lower()
            if "processing" in lowered or "file" in lowered or "media" in lowered:
                return Permanent(message, error_code=ErrorCode.MEDIA_REJECTED, http_status=status)
            return Permanent(message, error_code=ErrorCode.CONTENT_REJECTED, http_status=status)
        if status == 429:
            return RateLimited(
                message, http_status=status, retry_at=retry_at_from(response.headers, "X-RateLimit-Reset")
            )
        if status == 400 and isinstance(body, dict) and body.get("error") in {"invalid_grant", "invalid_client"}:
            return AuthError(message, http_status=status)
        return classify_http(status, message, response.headers)

    # --- connect ------------------------------------------------------------------------
    def register_app(self, *, client_name: str, redirect_uri: str, website: str = "") -> tuple[str, str]:
        """``POST /api/v1/apps``: the (client_id, client_secret) of a new app on this server."""
        data = {"client_name": client_name, "redirect_uris": redirect_uri, "scopes": SCOPES}
        if website:
            data["website"] = website
        body = self._call("POST", "/api/v1/apps", None, data=data).json()
        return str(body["client_id"]), str(body["client_secret"])

    def authorize_url(self, *, redirect_uri: str, state: str, code_challenge: str = "") -> str:
        query = {
            "response_type": "code",
            "client_id": self.app.client_id,
            "redirect_uri": redirect_uri,
            "scope": SCOPES,
            "state": state,
        }
        if code_challenge:
            query.update(code_challenge=code_challenge, code_challenge_method="S256")
        return f"{self.base_url}/oauth/authorize?{urlencode(query)}"

    def exchange_code(self, *, code: str, redirect_uri: str, code_verifier: str = "") -> list[ConnectedIdentity]:
        data = {
            "grant_type": "authorization_code",
            "code": code,
            "client_id": self.app.client_id,
            "client_secret": self.app.client_secret,
            "redirect_uri": redirect_uri,
            "scope": SCOPES,
        }
        if code_verifier:
            data["code_verifier"] = code_verifier
        token = self._call("POST", "/oauth/token", None, data=data).json()
        access = str(token["access_token"])
        account = self._verify(access)
        creds = Credentials(access_token=access, external_id=str(account["id"]))
        return [
            ConnectedIdentity(
                profile=self._profile(account),
                credentials=creds,
                scopes=tuple(str(token.get("scope") or SCOPES).split()),
            )
        ]

    def _verify(self, access_token: str) -> dict[str, Any]:
        creds = Credentials(access_token=access_token, external_id="")
        body = self._call("GET", "/api/v1/accounts/verify_credentials", creds).json()
        if not isinstance(body, dict) or "id" not in body:
            raise Permanent("verify_credentials answered without an account", error_code=ErrorCode.INVALID_REQUEST)
        return body

    @staticmethod
    def _profile(account: dict[str, Any]) -> AccountProfile:
        return AccountProfile(
            external_id=str(account["id"]),
            display_name=str(account.get("display_name") or account.get("username") or ""),
            username=str(account.get("acct") or account.get("username") or ""),
            avatar_url=str(account.get("avatar") or ""),
        )

    def check_token(self, creds: Credentials) -> AccountProfile:
        return self._profile(self._verify(creds.access_token))

    def fetch_followers(self, creds: Credentials) -> int | None:
        count = self._verify(creds.access_token).get("followers_count")
        return int(count) if isinstance(count, int) else None

    # --- publish ------------------------------------------------------------------------
    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        media_ids, ready = self._upload_media(creds, request.media, state)
        if len(ready) < len(media_ids):
            return PublishResult(
                done=False, state={"media_ids": media_ids, "ready": ready}, poll_after=PROCESSING_POLL_SECONDS
            )
        return self._post_status(creds, request, media_ids)

    def _upload_media(
        self, creds: Credentials, media: tuple[MediaItem, ...], state: dict[str, Any]
    ) -> tuple[list[str], list[str]]:
        """Upload the media ``state`` does not hold yet (``POST /api/v2/media``) and ask after
        those still processing: (every attachment id, the ids ready to attach)."""
        media_ids: list[str] = list(state.get("media_ids", []))
        ready: list[str] = list(state.get("ready", []))
        for item in media[len(media_ids) :]:
            data, mime = download_media(self.session, item.url, timeout=self.timeout)
            form = {"description": item.alt_text} if item.alt_text else {}
            response = self._call(
                "POST",
                "/api/v2/media",
                creds,
                ok=(200, 202),
                files={"file": (item.url.rsplit("/", 1)[-1] or "upload", data, mime)},
                data=form,
            )
            attachment = response.json()
            media_ids.append(str(attachment["id"]))
            if response.status_code == 200 and attachment.get("url"):
                ready.append(str(attachment["id"]))
        pending = [media_id for media_id in media_ids if media_id not in ready]
        for media_id in pending:
            response = self._call("GET", f"/api/v1/media/{media_id}", creds, ok=(200, 206))
            if response.status_code == 200 and response.json().get("url"):
                ready.append(media_id)
        return media_ids, ready

    def comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """A status with ``in_reply_to_id`` (the thread items' call), deduplicated on
        ``Idempotency-Key`` (the request's ``target_id``)."""
        return self.publish(creds, request, state)

    def _post_status(self, creds: Credentials, request: PublishRequest, media_ids: list[str]) -> PublishResult:
        payload: dict[str, Any] = {"status": request.text, "visibility": request.options.get("visibility", "public")}
        if media_ids:
            payload["media_ids"] = media_ids
        if request.reply_to is not None:
            payload["in_reply_to_id"] = request.reply_to.parent.platform_post_id
        for option, field in (("spoilerText", "spoiler_text"), ("language", "language"), ("sensitive", "sensitive")):
            if option in request.options:
                payload[field] = request.options[option]
        status = self._call(
            "POST",
            "/api/v1/statuses",
            creds,
            creates=True,
            headers={"Idempotency-Key": request.target_id},
            json=payload,
        ).json()
        return self.result_from_status(status)

    @staticmethod
    def result_from_status(status: dict[str, Any]) -> PublishResult:
        return PublishResult(
            done=True,
            platform_post_id=str(status["id"]),
            url=str(status.get("url") or status.get("uri") or ""),
            published_at=parse_instant(status.get("created_at")),
        )

    # --- after publishing ------------------------------------------------------------------
    def edit(self, creds: Credentials, request: EditRequest) -> EditResult:
        """``PUT /api/v1/statuses/:id``. Mastodon replaces the whole status with what the call
        carries (a missing ``status`` empties the text, missing ``media_ids`` drop the media), so
        the fields not being changed are read first (the status, and its ``/source`` for the plain
        text) and sent again. New media are uploaded first; a video still processing answers
        ``done=False`` with the attachment ids in ``state``. The server keeps every version
        (``GET /api/v1/statuses/:id/history``) and sets ``edited_at``; it has no edit window."""
        status_path = f"/api/v1/statuses/{request.platform_post_id}"
        media_ids: list[str] | None = None
        if request.media is not None:
            media_ids, ready = self._upload_media(creds, request.media, request.state)
            if len(ready) < len(media_ids):
                return EditResult(
                    done=False, state={"media_ids": media_ids, "ready": ready}, poll_after=PROCESSING_POLL_SECONDS
                )
        current = self._call("GET", status_path, creds).json()
        text = request.text
        if text is None:
            text = str(self._call("GET", f"{status_path}/source", creds).json().get("text") or "")
        if media_ids is None:
            media_ids = [str(m["id"]) for m in current.get("media_attachments") or []]
        payload: dict[str, Any] = {
            "status": text,
            "media_ids": media_ids,
            "spoiler_text": request.options.get("spoilerText", current.get("spoiler_text") or ""),
            "sensitive": request.options.get("sensitive", bool(current.get("sensitive"))),
        }
        language = request.options.get("language", current.get("language"))
        if language:
            payload["language"] = language
        status = self._call("PUT", status_path, creds, creates=True, json=payload).json()
        return EditResult(
            url=str(status.get("url") or status.get("uri") or ""), edited_at=parse_instant(status.get("edited_at"))
        )

    def delete(self, creds: Credentials, platform_post_id: str) -> None:
        """``DELETE /api/v1/statuses/:id``; a status already gone answers 404 (counted done)."""
        self._call("DELETE", f"/api/v1/statuses/{platform_post_id}", creds, creates=True, ok=(200, 404))

    def fetch_post(self, creds: Credentials, platform_post_id: str) -> RemotePost | None:
        """``GET /api/v1/statuses/:id`` (404: gone), its text from ``/source`` (the plain text
        an edit sets, not the rendered HTML of ``content``)."""
        status_path = f"/api/v1/statuses/{platform_post_id}"
        status = self._call("GET", status_path, creds, ok=(200, 404))
        if status.status_code == 404:
            return None
        source = self._call("GET", f"{status_path}/source", creds, ok=(200, 404))
        if source.status_code == 404:
            return None
        found = self.remote_post_from(status.json())
        return replace(found, text=str(source.json().get("text") or ""))

    def revoke_token(self, creds: Credentials) -> None:
        """``POST /oauth/revoke`` (RFC 7009) with the app's credentials; the server answers 200
        for a token it no longer knows as well."""
        data = {"client_id": self.app.client_id, "client_secret": self.app.client_secret, "token": creds.access_token}
        self._call("POST", "/oauth/revoke", None, data=data)

    # --- engagement -------------------------------------------------------------------------
    def list_comments(
        self, creds: Credentials, platform_post_id: str, *, since: dt.datetime | None = None, cursor: str = ""
    ) -> CommentPage:
        """``GET /api/v1/statuses/:id/context``: the ``descendants`` (depth first) in one page; a
        status that is gone (404) has none."""
        response = self._call("GET", f"/api/v1/statuses/{platform_post_id}/context", creds, ok=(200, 404))
        if response.status_code == 404:
            return CommentPage(())
        body = json_or_empty(response)
        found = []
        for status in body.get("descendants") or []:
            if not isinstance(status, dict) or "id" not in status:
                continue
            comment = self._comment_from(creds, platform_post_id, status)
            if since is None or comment.created_at >= since:
                found.append(comment)
        return CommentPage(tuple(found))

    def _comment_from(self, creds: Credentials, post_id: str, status: dict[str, Any]) -> RemoteComment:
        account = status.get("account") or {}
        parent = str(status.get("in_reply_to_id") or "")
        return RemoteComment(
            platform_comment_id=str(status["id"]),
            platform_post_id=post_id,
            text=html_to_text(str(status.get("content") or "")),
            created_at=parse_instant(status.get("created_at")) or dt.datetime.now(dt.UTC),
            author=CommentAuthor(
                id=str(account.get("id") or ""),
                name=str(account.get("display_name") or account.get("username") or ""),
                handle=str(account.get("acct") or account.get("username") or ""),
                avatar_url=str(account.get("avatar") or ""),
            ),
            parent_id="" if parent == post_id else parent,
            like_count=as_int(status.get("favourites_count")),
            reply_count=as_int(status.get("replies_count")),
            permalink=str(status.get("url") or status.get("uri") or ""),
            from_account=str(account.get("id") or "") == creds.external_id,
        )

    def reply_comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """``POST /api/v1/statuses`` with ``in_reply_to_id`` (the comment) and ``Idempotency-Key``
        (``request.target_id``): the server answers a re-sent reply with the status it made."""
        if request.reply_to is None:
            raise Permanent("A reply needs the comment it answers", error_code=ErrorCode.INVALID_REQUEST)
        return self.publish(creds, request, state)

    def delete_comment(self, creds: Credentials, platform_comment_id: str, *, parent_id: str = "") -> None:
        """``DELETE /api/v1/statuses/:id``. Mastodon answers 404 both for a status that is gone and
        for another account's (which it will not delete): a status still there is read back to
        tell them apart (Permanent for another's; gone counts as deleted)."""
        path = f"/api/v1/statuses/{platform_comment_id}"
        deleted = self._call("DELETE", path, creds, creates=True, ok=(200, 404))
        if deleted.status_code == 404 and self._call("GET", path, creds, ok=(200, 404)).status_code == 200:
            raise Permanent(
                "Mastodon deletes only the account's own statuses; this reply is another account's",
                error_code=ErrorCode.PERMISSION_MISSING,
                http_status=404,
            )

    def like_comment(self, creds: Credentials, platform_comment_id: str) -> None:
        """``POST /api/v1/statuses/:id/favourite`` (a status already favourited stays so)."""
        self._call("POST", f"/api/v1/statuses/{platform_comment_id}/favourite", creds, creates=True)

    # --- listing ------------------------------------------------------------------------
    def list_recent_posts(self, creds: Credentials, since: dt.datetime) -> list[RemotePost]:
        posts: list[RemotePost] = []
        params: dict[str, Any] = {"limit": 40, "exclude_reblogs": "true"}
        for _page in range(100):
            batch = self._call("GET", f"/api/v1/accounts/{creds.external_id}/statuses", creds, params=params).json()
            if not batch:
                break
            for status in batch:
                post = self.remote_post_from(status)
                if post.published_at < since:
                    return posts
                posts.append(post)
            params["max_id"] = str(batch[-1]["id"])
        return posts

    @staticmethod
    def remote_post_from(status: dict[str, Any]) -> RemotePost:
        attachments = status.get("media_attachments") or []
        thumbnail = str(attachments[0].get("preview_url") or "") if attachments else ""
        return RemotePost(
            platform_post_id=str(status["id"]),
            published_at=parse_instant(status.get("created_at")) or dt.datetime.now(dt.UTC),
            text=html_to_text(str(status.get("content") or "")),
            permalink=str(status.get("url") or status.get("uri") or ""),
            thumbnail_url=thumbnail,
            metrics=Metrics(),  # Mastodon gives us no analytics (see capabilities)
        )
