"""Pinterest API v5: OAuth (consent at www.pinterest.com/oauth/, token at /v5/oauth/token with
HTTP Basic app credentials), boards (bookmark pagination, secret boards included), pins from an
image URL, several image URLs (carousel) or an uploaded video (POST /media → upload → status →
pin), pin analytics and the pin listing.

Metrics mapping (pin analytics, lifetime figures): views = IMPRESSION, likes = TOTAL_REACTIONS,
comments = TOTAL_COMMENTS, shares = SAVE (a save is how a pin is passed on)."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlencode

import requests

from platforms.base import (
    AccountProfile,
    AuthError,
    Board,
    ConnectedIdentity,
    Credentials,
    EditRequest,
    EditResult,
    ErrorCode,
    Metrics,
    Permanent,
    Platform,
    PlatformClient,
    PublishRequest,
    PublishResult,
    RateLimited,
    RemotePost,
    Transient,
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

LIVE_BASE_URL = "https://api.pinterest.com/v5"
LIVE_AUTHORIZE_URL = "https://www.pinterest.com/oauth/"
SCOPES = ("boards:read", "boards:read_secret", "pins:read", "pins:read_secret", "pins:write", "user_accounts:read")
METRIC_TYPES = ("IMPRESSION", "SAVE", "PIN_CLICK", "OUTBOUND_CLICK", "TOTAL_COMMENTS", "TOTAL_REACTIONS")
BOARD_PAGE_SIZE = 25
MEDIA_POLL_SECONDS = 2.0
ANALYTICS_WINDOW_DAYS = 89  # the analytics endpoint answers for the last 90 days at most


class Client(PlatformClient):
    platform = Platform.PINTEREST

    # --- transport -------------------------------------------------------------------------
    def _call(
        self, method: str, path: str, creds: Credentials | None = None, *, creates: bool = False, **kwargs: Any
    ) -> dict[str, Any]:
        headers = kwargs.pop("headers", {})
        if creds is not None:
            headers["Authorization"] = f"Bearer {creds.access_token}"
        url = path if path.startswith("http") else f"{self.base_url}{path}"
        response = send(self.session, method, url, timeout=self.timeout, creates=creates, headers=headers, **kwargs)
        if response.status_code >= 400:
            raise self._error(response)
        return json_or_empty(response)

    @staticmethod
    def _error(response: requests.Response) -> Exception:
        body = json_or_empty(response)
        message = str(body.get("message") or response.reason or "Pinterest error")
        status = response.status_code
        if status == 401:
            return AuthError(message, http_status=status)
        if status == 403:
            return Permanent(message, error_code=ErrorCode.PERMISSION_MISSING, http_status=status)
        if status == 429:
            return RateLimited(message, http_status=status, retry_at=retry_at_from(response.headers))
        if status >= 500:
            return Transient(message, http_status=status)
        lowered = message.lower()
        if any(word in lowered for word in ("image", "video", "media")):
            return Permanent(message, error_code=ErrorCode.MEDIA_REJECTED, http_status=status)
        if status == 404 or "board" in lowered:
            return Permanent(message, error_code=ErrorCode.INVALID_REQUEST, http_status=status)
        return Permanent(message, error_code=ErrorCode.CONTENT_REJECTED, http_status=status)

    # --- OAuth ---------------------------------------------------------------------------
    def authorize_url(self, *, redirect_uri: str, state: str, code_challenge: str = "") -> str:
        base = host_url(self.base_url, LIVE_BASE_URL, LIVE_AUTHORIZE_URL, "/oauth/")
        query = {
            "client_id": self.app.client_id,
            "redirect_uri": redirect_uri,
            "response_type": "code",
            "scope": ",".join(SCOPES),
            "state": state,
        }
        return f"{base}?{urlencode(query)}"

    def _token(self, form: dict[str, str]) -> dict[str, Any]:
        try:
            return self._call(
                "POST", "/oauth/token", data=form, auth=(self.app.client_id, self.app.client_secret), creates=False
            )
        except Permanent as exc:  # an unusable code or refresh token: the user must connect again
            raise AuthError(exc.message, http_status=exc.http_status)

    def _credentials(self, token: dict[str, Any], external_id: str, previous_refresh: str = "") -> Credentials:
        return token_credentials(token, external_id=external_id, previous_refresh=previous_refresh)

    def exchange_code(self, *, code: str, redirect_uri: str, code_verifier: str = "") -> list[ConnectedIdentity]:
        token = self._token({"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri})
        creds = self._credentials(token, "")
        profile = self.check_token(creds)
        scopes = tuple(s for s in str(token.get("scope") or "").replace(" ", ",").split(",") if s)
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

    def refresh_token(self, creds: Credentials) -> Credentials:
        if not creds.refresh_token:
            raise AuthError("no refresh token was issued for this account")
        token = self._token({"grant_type": "refresh_token", "refresh_token": creds.refresh_token})
        return self._credentials(token, creds.external_id, creds.refresh_token)

    # --- account -------------------------------------------------------------------------
    def _user_account(self, creds: Credentials) -> dict[str, Any]:
        return self._call("GET", "/user_account", creds)

    def check_token(self, creds: Credentials) -> AccountProfile:
        account = self._user_account(creds)
        username = str(account.get("username") or "")
        return AccountProfile(
            external_id=str(account.get("id") or username),
            display_name=str(account.get("business_name") or username),
            username=username,
            avatar_url=str(account.get("profile_image") or ""),
        )

    def fetch_followers(self, creds: Credentials) -> int | None:
        return as_int(self._user_account(creds).get("follower_count"))

    def list_boards(self, creds: Credentials) -> list[Board]:
        """Every board of the account, secret and protected ones included, following bookmarks."""
        boards: list[Board] = []
        bookmark = ""
        while True:
            params = {"page_size": BOARD_PAGE_SIZE, "privacy": "ALL"}
            if bookmark:
                params["bookmark"] = bookmark
            page = self._call("GET", "/boards", creds, params=params)
            for item in page.get("items") or []:
                boards.append(
                    Board(
                        id=str(item["id"]),
                        name=str(item.get("name") or ""),
                        description=str(item.get("description") or ""),
                        privacy=str(item.get("privacy") or "PUBLIC"),
                    )
                )
            bookmark = str(page.get("bookmark") or "")
            if not bookmark:
                return boards

    # --- publishing ----------------------------------------------------------------------
    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        board_id = str(request.options.get("boardId") or "")
        if not board_id:
            raise Permanent("a Pinterest pin needs a boardId", error_code=ErrorCode.INVALID_REQUEST)
        if not request.media:
            raise Permanent("a Pinterest pin needs media", error_code=ErrorCode.INVALID_REQUEST)
        videos = [m for m in request.media if m.kind == "video"]
        if videos:
            media_source_or_wait = self._video_source(creds, request, state)
            if isinstance(media_source_or_wait, PublishResult):
                return media_source_or_wait
            media_source = media_source_or_wait
        elif len(request.media) > 1:
            media_source = {
                "source_type": "multiple_image_urls",
                "items": [{"url": m.url, "description": m.alt_text} for m in request.media],
                "index": 0,
            }
        else:
            media_source = {"source_type": "image_url", "url": request.media[0].url}
        body: dict[str, Any] = {
            "board_id": board_id,
            "description": request.text,
            "media_source": media_source,
        }
        if request.options.get("title"):
            body["title"] = str(request.options["title"])
        if request.options.get("link"):
            body["link"] = str(request.options["link"])
        if request.media[0].alt_text:
            body["alt_text"] = request.media[0].alt_text[:500]
        pin = self._call("POST", "/pins", creds, json=body, creates=True)
        return self._published(pin)

    def _video_source(
        self, creds: Credentials, request: PublishRequest, state: dict[str, Any]
    ) -> dict[str, Any] | PublishResult:
        """Register → upload → wait for ``succeeded``; the media id is kept in ``state`` so a
        resumed call neither registers nor uploads the video again."""
        media_id = str(state.get("media_id") or "")
        if not media_id:
            registered = self._call("POST", "/media", creds, json={"media_type": "video"})
            media_id = str(registered["media_id"])
            state = {
                "media_id": media_id,
                "upload_url": registered.get("upload_url", ""),
                "upload_parameters": registered.get("upload_parameters") or {},
            }
            return PublishResult(done=False, state=state, poll_after=0.0)
        if not state.get("uploaded"):
            video = next(m for m in request.media if m.kind == "video")
            data, mime = download_media(self.session, video.url, timeout=self.timeout)
            fields = {str(k): str(v) for k, v in (state.get("upload_parameters") or {}).items()}
            response = send(
                self.session,
                "POST",
                str(state["upload_url"]),
                timeout=self.timeout,
                data=fields,
                files={"file": ("video", data, mime or video.mime_type)},
            )
            if response.status_code >= 400:
                raise self._error(response)
            return PublishResult(done=False, state={**state, "uploaded": True}, poll_after=MEDIA_POLL_SECONDS)
        status = self._call("GET", f"/media/{media_id}", creds)
        if status.get("status") == "failed":
            raise Permanent("Pinterest could not process the video", error_code=ErrorCode.MEDIA_REJECTED)
        if status.get("status") != "succeeded":
            return PublishResult(done=False, state=state, poll_after=MEDIA_POLL_SECONDS)
        source: dict[str, Any] = {"source_type": "video_id", "media_id": media_id}
        if request.thumbnail_url:
            source["cover_image_url"] = request.thumbnail_url
        else:
            source["cover_image_key_frame_time"] = 0
        return source

    def pin_url(self, pin_id: str) -> str:
        """The pin's page on pinterest.com (the simulator's in sandbox mode)."""
        path = f"/pin/{pin_id}/"
        return web_url(self.base_url, LIVE_BASE_URL, f"https://www.pinterest.com{path}", path)

    def _published(self, pin: dict[str, Any]) -> PublishResult:
        pin_id = str(pin["id"])
        return PublishResult(
            done=True,
            platform_post_id=pin_id,
            url=self.pin_url(pin_id),
            published_at=parse_instant(pin.get("created_at")) or dt.datetime.now(dt.UTC),
        )

    # --- analytics -----------------------------------------------------------------------
    # --- after publishing ----------------------------------------------------------------
    def edit(self, creds: Credentials, request: EditRequest) -> EditResult:
        """``PATCH /v5/pins/{pin_id}`` with ``description`` (our text) and ``title``: the pin
        answered. A pin's media cannot change. (Pinterest documents no token revoke call.)"""
        refuse_edit_fields("PINTEREST", request, CAPABILITIES[Platform.PINTEREST].edit_fields)
        body: dict[str, Any] = {}
        if request.text is not None:
            body["description"] = request.text
        if request.title is not None:
            body["title"] = request.title
        if body:
            self._call("PATCH", f"/pins/{request.platform_post_id}", creds, json=body, creates=True)
        return EditResult(url=self.pin_url(request.platform_post_id), edited_at=utcnow() if body else None)

    def fetch_post(self, creds: Credentials, platform_post_id: str) -> RemotePost | None:
        """``GET /v5/pins/{pin_id}`` (404 "Pin not found.": gone). The post's text is the pin's
        description, as an edit sets it."""
        try:
            pin = self._call("GET", f"/pins/{platform_post_id}", creds)
        except Permanent as exc:
            if exc.http_status == 404:
                return None
            raise
        return RemotePost(
            platform_post_id=str(pin.get("id") or platform_post_id),
            published_at=parse_instant(pin.get("created_at")) or dt.datetime.now(dt.UTC),
            text=str(pin.get("description") or ""),
            title=str(pin.get("title") or ""),
            permalink=self.pin_url(platform_post_id),
            thumbnail_url=_thumbnail(pin.get("media") or {}),
        )

    def delete(self, creds: Credentials, platform_post_id: str) -> None:
        """``DELETE /v5/pins/{pin_id}``: 204; a pin already gone (404 "Pin not found.") counts."""
        try:
            self._call("DELETE", f"/pins/{platform_post_id}", creds, creates=True)
        except Permanent as exc:
            if exc.http_status != 404:
                raise

    def list_recent_posts(self, creds: Credentials, since: dt.datetime) -> list[RemotePost]:
        posts: list[RemotePost] = []
        bookmark = ""
        while True:
            params: dict[str, Any] = {"page_size": 100}
            if bookmark:
                params["bookmark"] = bookmark
            page = self._call("GET", "/pins", creds, params=params)
            for item in page.get("items") or []:
                created = parse_instant(item.get("created_at"))
                if created is None or created < since:
                    continue
                posts.append(
                    RemotePost(
                        platform_post_id=str(item["id"]),
                        published_at=created,
                        text=str(item.get("description") or item.get("title") or ""),
                        title=str(item.get("title") or ""),
                        permalink=self.pin_url(str(item["id"])),
                        thumbnail_url=_thumbnail(item.get("media") or {}),
                    )
                )
            bookmark = str(page.get("bookmark") or "")
            oldest = parse_instant((page.get("items") or [{}])[-1].get("created_at")) if page.get("items") else None
            if not bookmark or (oldest is not None and oldest < since):
                return posts

    def fetch_post_metrics(self, creds: Credentials, platform_post_ids: list[str]) -> dict[str, Metrics]:
        today = dt.datetime.now(dt.UTC).date()
        params = {
            "start_date": (today - dt.timedelta(days=ANALYTICS_WINDOW_DAYS)).isoformat(),
            "end_date": today.isoformat(),
            "metric_types": ",".join(METRIC_TYPES),
            "app_types": "ALL",
        }
        result: dict[str, Metrics] = {}
        for pin_id in platform_post_ids:
            try:
                body = self._call("GET", f"/pins/{pin_id}/analytics", creds, params=params)
            except Permanent as exc:
                if exc.http_status == 404:
                    continue
                raise
            result[pin_id] = metrics_from_analytics(body)
        return result


def metrics_from_analytics(body: dict[str, Any]) -> Metrics:
    """Our figures from a pin analytics answer (lifetime totals when present, else the summary)."""
    section = body.get("all") or {}
    figures = section.get("lifetime_metrics") or section.get("summary_metrics") or {}
    pin_clicks, outbound_clicks = as_int(figures.get("PIN_CLICK")), as_int(figures.get("OUTBOUND_CLICK"))
    clicks = None if pin_clicks is None and outbound_clicks is None else (pin_clicks or 0) + (outbound_clicks or 0)
    return Metrics(
        views=as_int(figures.get("IMPRESSION")),
        likes=as_int(figures.get("TOTAL_REACTIONS")),
        comments=as_int(figures.get("TOTAL_COMMENTS")),
        shares=as_int(figures.get("SAVE")),
        saves=as_int(figures.get("SAVE")),
        clicks=clicks,
        impressions=as_int(figures.get("IMPRESSION")),
    )


def _thumbnail(media: dict[str, Any]) -> str:
    images = media.get("images") or {}
    for size in ("600x", "400x300", "150x150", "1200x"):
        if isinstance(images.get(size), dict) and images[size].get("url"):
            return str(images[size]["url"])
    return str(media.get("cover_image_url") or "")
