"""TikTok through the Content Posting API (open.tiktokapis.com/v2).

Connect: OAuth v2 (``www.tiktok.com/v2/auth/authorize/`` with ``client_key``) →
``POST /v2/oauth/token/`` (authorization_code; refresh_token later).
Publish (``options``: ``privacyLevel``, ``disableComment``, ``disableDuet``, ``disableStitch``,
``brandContentToggle``, ``brandOrganicToggle``, ``isAigc``, ``autoAddMusic``, ``title``
(photo posts), ``coverTimestampMs``, ``videoDurationSec``, ``sendAsDraft``):
``creator_info/query`` (its privacy options and maximum duration are honoured) → Direct Post
``video/init`` or ``content/init`` (PHOTO) with ``PULL_FROM_URL`` → ``status/fetch`` polls.
When the creator's direct-post cap is hit (``spam_risk_too_many_posts`` or
``reached_active_user_cap``) the content goes to the creator's inbox instead
(``inbox/video/init`` / ``post_mode=MEDIA_UPLOAD``) and the result carries
``draft_fallback=True``; ``sendAsDraft`` uses the inbox on purpose.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import requests

from platforms.base import (
    AccountProfile,
    AuthError,
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
    RemotePost,
    Transient,
)
from platforms.capabilities import title_limit
from platforms.http import dialog_url, json_or_empty, send, token_credentials, utcnow, web_url

LIVE_BASE_URL = "https://open.tiktokapis.com"
AUTHORIZE_HOST = "https://www.tiktok.com"
SCOPES = ("user.info.basic", "user.info.profile", "user.info.stats", "video.publish", "video.upload", "video.list")
STATUS_POLL_SECONDS = 5.0
VIDEO_FIELDS = (
    "id,title,video_description,create_time,cover_image_url,share_url,view_count,like_count,comment_count,share_count"
)
DAILY_CAP_CODES = {"spam_risk_too_many_posts", "reached_active_user_cap"}

_AUTH = {"access_token_invalid", "invalid_grant", "invalid_client", "token_expired", "auth_removed"}
_PERMISSION = {
    "scope_not_authorized",
    "scope_permission_missed",
    "url_ownership_unverified",
    "unaudited_client_can_only_post_to_private_accounts",
    "privacy_level_option_mismatch_for_unaudited",
}
_MEDIA = {
    "file_format_check_failed",
    "duration_check_failed",
    "frame_rate_check_failed",
    "picture_size_check_failed",
    "video_pull_failed",
    "photo_pull_failed",
    "invalid_file_upload",
}
_CONTENT = {"spam_risk_user_banned_from_posting", "spam_risk_text", "spam_risk", "publish_cancelled"}
_QUOTA = {*DAILY_CAP_CODES, "spam_risk_too_many_pending_share"}


def classify(code: str, message: str, *, status: int | None = None, headers: Any = None) -> PlatformError:
    """Map a TikTok error code (or a ``fail_reason`` of the status endpoint) onto the taxonomy;
    the code stays on the error as ``platform_code``."""
    error = _classify(code, message or code, status=status, headers=headers)
    error.platform_code = code  # type: ignore[attr-defined]
    return error


def _classify(code: str, text: str, *, status: int | None, headers: Any) -> PlatformError:
    if code in _AUTH or status == 401:
        return AuthError(text, http_status=status)
    if code == "rate_limit_exceeded" or status == 429:
        retry_after = (headers or {}).get("Retry-After")
        delay = int(retry_after) if retry_after and str(retry_after).isdigit() else 60  # windows are per minute
        return RateLimited(text, http_status=status, retry_at=utcnow() + dt.timedelta(seconds=delay))
    if code in _QUOTA:
        return QuotaExhausted(text, http_status=status, retry_at=utcnow() + dt.timedelta(hours=24))
    if code in _PERMISSION:
        return Permanent(text, error_code=ErrorCode.PERMISSION_MISSING, http_status=status)
    if code in _MEDIA:
        return Permanent(text, error_code=ErrorCode.MEDIA_REJECTED, http_status=status)
    if code in _CONTENT:
        return Permanent(text, error_code=ErrorCode.CONTENT_REJECTED, http_status=status)
    if code in {"internal_error", "internal"} or (status or 0) >= 500:
        return Transient(text, http_status=status)
    return Permanent(text, error_code=ErrorCode.INVALID_REQUEST, http_status=status)


def remote_post_of(video: dict[str, Any]) -> RemotePost:
    return RemotePost(
        platform_post_id=str(video["id"]),
        published_at=dt.datetime.fromtimestamp(int(video.get("create_time") or 0), dt.UTC),
        text=str(video.get("video_description") or video.get("title") or ""),
        permalink=str(video.get("share_url") or ""),
        thumbnail_url=str(video.get("cover_image_url") or ""),
        metrics=metrics_of(video),
    )


def metrics_of(video: dict[str, Any]) -> Metrics:
    return Metrics(
        views=video.get("view_count"),
        likes=video.get("like_count"),
        comments=video.get("comment_count"),
        shares=video.get("share_count"),
    )


class Client(PlatformClient):
    platform = Platform.TIKTOK

    def _call(
        self,
        method: str,
        path: str,
        *,
        token: str = "",
        params: dict[str, Any] | None = None,
        json: dict[str, Any] | None = None,
        data: dict[str, Any] | None = None,
        creates: bool = False,
    ) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if json is not None:
            headers["Content-Type"] = "application/json; charset=UTF-8"
        response = send(
            self.session,
            method,
            f"{self.base_url}/{path.lstrip('/')}",
            timeout=self.timeout,
            creates=creates,
            params=params,
            json=json,
            data=data,
            headers=headers,
        )
        return self._check(response)

    @staticmethod
    def _check(response: requests.Response) -> dict[str, Any]:
        body = json_or_empty(response)
        error = body.get("error")
        if isinstance(error, str):  # the OAuth endpoints: {"error": "...", "error_description": "..."}
            raise classify(error, str(body.get("error_description") or error), status=response.status_code)
        error = error if isinstance(error, dict) else {}
        code = str(error.get("code") or "")
        if response.status_code >= 400 or code not in ("", "ok"):
            message = str(error.get("message") or f"HTTP {response.status_code}")
            raise classify(code, message, status=response.status_code, headers=response.headers)
        return body

    # --- connect ----------------------------------------------------------------------
    def authorize_url(self, *, redirect_uri: str, state: str, code_challenge: str = "") -> str:
        query = {
            "client_key": self.app.client_id,
            "scope": ",".join(SCOPES),
            "response_type": "code",
            "redirect_uri": redirect_uri,
            "state": state,
        }
        if code_challenge:
            query.update(code_challenge=code_challenge, code_challenge_method="S256")
        return dialog_url(
            api_base_url=self.base_url,
            live_host=LIVE_BASE_URL,
            dialog_host=AUTHORIZE_HOST,
            path="v2/auth/authorize/",
            query=query,
        )

    def _token(self, form: dict[str, str]) -> Credentials:
        body = self._call(
            "POST",
            "v2/oauth/token/",
            data={"client_key": self.app.client_id, "client_secret": self.app.client_secret, **form},
        )
        return token_credentials(body, external_id=str(body["open_id"]), extra={"scope": str(body.get("scope") or "")})

    def exchange_code(self, *, code: str, redirect_uri: str, code_verifier: str = "") -> list[ConnectedIdentity]:
        form = {"code": code, "grant_type": "authorization_code", "redirect_uri": redirect_uri}
        if code_verifier:
            form["code_verifier"] = code_verifier
        credentials = self._token(form)
        scopes = tuple(s for s in credentials.extra.get("scope", "").split(",") if s) or SCOPES
        return [ConnectedIdentity(profile=self.check_token(credentials), credentials=credentials, scopes=scopes)]

    def refresh_token(self, creds: Credentials) -> Credentials:
        if not creds.refresh_token:
            raise AuthError("No refresh token is stored for this TikTok account")
        return self._token({"grant_type": "refresh_token", "refresh_token": creds.refresh_token})

    def revoke_token(self, creds: Credentials) -> None:
        """``POST /v2/oauth/revoke/`` with the app's key and secret: the user's authorization of
        the app ends, every token of it stops working (an empty 200, for a token already revoked
        too). The Content Posting API neither edits nor deletes a published post."""
        data = {"client_key": self.app.client_id, "client_secret": self.app.client_secret, "token": creds.access_token}
        self._call("POST", "v2/oauth/revoke/", data=data, creates=True)

    def check_token(self, creds: Credentials) -> AccountProfile:
        body = self._call(
            "GET",
            "v2/user/info/",
            token=creds.access_token,
            params={"fields": "open_id,union_id,avatar_url,display_name,username"},
        )
        user = (body.get("data") or {}).get("user") or {}
        return AccountProfile(
            external_id=str(user.get("open_id") or creds.external_id),
            display_name=str(user.get("display_name") or user.get("username") or ""),
            username=str(user.get("username") or ""),
            avatar_url=str(user.get("avatar_url") or ""),
        )

    # --- publish ----------------------------------------------------------------------
    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        if state.get("step") == "status":
            return self._poll(creds, state)
        creator = (
            self._call("POST", "v2/post/publish/creator_info/query/", token=creds.access_token, json={}).get("data")
            or {}
        )
        to_inbox = bool(request.options.get("sendAsDraft"))
        draft_fallback = False
        if not to_inbox:
            try:
                publish_id = self._init(creds, request, creator, inbox=False)
            except QuotaExhausted as exc:
                if not self._is_daily_cap(exc):
                    raise
                to_inbox = draft_fallback = True
        if to_inbox:
            publish_id = self._init(creds, request, creator, inbox=True)
        new_state = {
            "step": "status",
            "publish_id": publish_id,
            "inbox": to_inbox,
            "draft_fallback": draft_fallback,
            "username": str(creator.get("creator_username") or ""),
        }
        return PublishResult(done=False, state=new_state, poll_after=STATUS_POLL_SECONDS, draft_fallback=draft_fallback)

    @staticmethod
    def _is_daily_cap(exc: QuotaExhausted) -> bool:
        return getattr(exc, "platform_code", "") in DAILY_CAP_CODES

    def _init(self, creds: Credentials, request: PublishRequest, creator: dict[str, Any], *, inbox: bool) -> str:
        videos = [m for m in request.media if m.kind == "video"]
        images = [m for m in request.media if m.kind == "image"]
        if not videos and not images:
            raise Permanent("TikTok posts need a video or photos", error_code=ErrorCode.INVALID_REQUEST)
        payload: dict[str, Any]
        post_info: dict[str, Any]
        if videos:
            self._check_duration(request, creator)
            source: dict[str, Any] = {"source": "PULL_FROM_URL", "video_url": videos[0].url}
            if inbox:
                path, payload = "v2/post/publish/inbox/video/init/", {"source_info": source}
            else:
                post_info = {"title": request.text, **self._post_info(request, creator)}
                if request.options.get("coverTimestampMs") is not None:
                    post_info["video_cover_timestamp_ms"] = int(request.options["coverTimestampMs"])
                path, payload = "v2/post/publish/video/init/", {"post_info": post_info, "source_info": source}
        else:
            title = str(request.options.get("title") or request.text.split("\n")[0])[: title_limit(Platform.TIKTOK)]
            post_info = {
                "title": title,
                "description": request.text,
                "auto_add_music": bool(request.options.get("autoAddMusic", True)),
            }
            if not inbox:
                post_info.update(self._post_info(request, creator))
            payload = {
                "post_info": post_info,
                "source_info": {
                    "source": "PULL_FROM_URL",
                    "photo_cover_index": 0,
                    "photo_images": [m.url for m in images],
                },
                "post_mode": "MEDIA_UPLOAD" if inbox else "DIRECT_POST",
                "media_type": "PHOTO",
            }
            path = "v2/post/publish/content/init/"
        body = self._call("POST", path, token=creds.access_token, json=payload, creates=True)
        return str((body.get("data") or {})["publish_id"])

    def _post_info(self, request: PublishRequest, creator: dict[str, Any]) -> dict[str, Any]:
        options = request.options
        offered = [str(p) for p in creator.get("privacy_level_options") or []]
        privacy = str(options.get("privacyLevel") or "")
        if not privacy:
            privacy = (
                "PUBLIC_TO_EVERYONE" if "PUBLIC_TO_EVERYONE" in offered else (offered[0] if offered else "SELF_ONLY")
            )
        elif offered and privacy not in offered:
            raise Permanent(
                f"privacy level {privacy} is not offered to this creator (offered: {', '.join(offered)})",
                error_code=ErrorCode.INVALID_REQUEST,
            )
        return {
            "privacy_level": privacy,
            "disable_comment": bool(options.get("disableComment") or creator.get("comment_disabled")),
            "disable_duet": bool(options.get("disableDuet") or creator.get("duet_disabled")),
            "disable_stitch": bool(options.get("disableStitch") or creator.get("stitch_disabled")),
            "brand_content_toggle": bool(options.get("brandContentToggle")),
            "brand_organic_toggle": bool(options.get("brandOrganicToggle")),
            "is_aigc": bool(options.get("isAigc")),
        }

    @staticmethod
    def _check_duration(request: PublishRequest, creator: dict[str, Any]) -> None:
        limit = creator.get("max_video_post_duration_sec")
        duration = request.options.get("videoDurationSec")
        if isinstance(limit, int | float) and isinstance(duration, int | float) and duration > limit:
            raise Permanent(
                f"The video lasts {duration} s; this creator may post at most {limit} s",
                error_code=ErrorCode.MEDIA_REJECTED,
            )

    def _poll(self, creds: Credentials, state: dict[str, Any]) -> PublishResult:
        body = self._call(
            "POST", "v2/post/publish/status/fetch/", token=creds.access_token, json={"publish_id": state["publish_id"]}
        )
        data = body.get("data") or {}
        status = str(data.get("status") or "")
        draft_fallback = bool(state.get("draft_fallback"))
        if status == "FAILED":
            reason = str(data.get("fail_reason") or "publish failed")
            raise classify(reason, f"TikTok could not publish the post: {reason}")
        if status == "SEND_TO_USER_INBOX" or (status == "PUBLISH_COMPLETE" and state.get("inbox")):
            return PublishResult(
                done=True,
                platform_post_id=str(state["publish_id"]),
                published_at=utcnow(),
                draft_fallback=draft_fallback,
            )
        if status != "PUBLISH_COMPLETE":
            return PublishResult(done=False, state=state, poll_after=STATUS_POLL_SECONDS, draft_fallback=draft_fallback)
        # private posts get no public id: the publish id is all TikTok gives back then
        public_ids = data.get("publicaly_available_post_id") or data.get("publicly_available_post_id") or []
        post_id = str(public_ids[0]) if public_ids else str(state["publish_id"])
        url = self.video_url(str(state["username"]), post_id) if public_ids and state.get("username") else ""
        return PublishResult(done=True, platform_post_id=post_id, url=url, published_at=utcnow())

    def video_url(self, username: str, video_id: str) -> str:
        """The video's page on tiktok.com (the simulator's in sandbox mode)."""
        path = f"/@{username}/video/{video_id}"
        return web_url(self.base_url, LIVE_BASE_URL, f"{AUTHORIZE_HOST}{path}", path)

    def lookup(self, creds: Credentials, request: PublishRequest) -> PublishResult | None:
        raise NotSupported  # no idempotency key and posts under moderation are not listed yet

    # --- analytics --------------------------------------------------------------------
    def list_recent_posts(self, creds: Credentials, since: dt.datetime) -> list[RemotePost]:
        posts: list[RemotePost] = []
        cursor: int | None = None
        for _ in range(50):
            payload: dict[str, Any] = {"max_count": 20}
            if cursor is not None:
                payload["cursor"] = cursor
            body = self._call(
                "POST", "v2/video/list/", token=creds.access_token, params={"fields": VIDEO_FIELDS}, json=payload
            )
            data = body.get("data") or {}
            batch = [remote_post_of(v) for v in data.get("videos") or [] if isinstance(v, dict)]
            posts.extend(p for p in batch if p.published_at >= since)
            if not data.get("has_more") or not batch or min(p.published_at for p in batch) < since:
                break
            cursor = int(data.get("cursor") or 0)
        return posts

    def fetch_post_metrics(self, creds: Credentials, platform_post_ids: list[str]) -> dict[str, Metrics]:
        found: dict[str, Metrics] = {}
        for start in range(0, len(platform_post_ids), 20):
            body = self._call(
                "POST",
                "v2/video/query/",
                token=creds.access_token,
                params={"fields": VIDEO_FIELDS},
                json={"filters": {"video_ids": platform_post_ids[start : start + 20]}},
            )
            for video in (body.get("data") or {}).get("videos") or []:
                found[str(video["id"])] = metrics_of(video)
        return found

    def fetch_followers(self, creds: Credentials) -> int | None:
        body = self._call("GET", "v2/user/info/", token=creds.access_token, params={"fields": "follower_count"})
        value = ((body.get("data") or {}).get("user") or {}).get("follower_count")
        return int(value) if value is not None else None
