"""TELEGRAM: the Bot API (core.telegram.org/bots/api), one chat (a channel or group the bot
administers) per connected account.

Connect by credentials: the bot token and the chat id, validated with ``getMe`` and ``getChat``.
Publish: ``sendMessage`` for text, ``sendPhoto`` / ``sendVideo`` for one media item and
``sendMediaGroup`` for 2 to 10 (Telegram fetches the URLs itself). Edit: ``editMessageText``,
``editMessageCaption``, ``editMessageMedia``; delete: ``deleteMessage``. Every answer is the envelope
``{"ok": bool, "result" | "error_code", "description", "parameters": {"retry_after"}}``. The Bot
API has no idempotency key and no way to read a chat's history, so publishing is not
exactly-once (capabilities: "none") and there are no per-post metrics; ``getChatMemberCount``
gives the followers.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
import string
from typing import Any

from platforms.base import (
    AccountProfile,
    AuthError,
    ConnectedIdentity,
    Credentials,
    EditRequest,
    EditResult,
    ErrorCode,
    Permanent,
    Platform,
    PlatformClient,
    PlatformError,
    PublishRequest,
    PublishResult,
    RateLimited,
    Transient,
)
from platforms.capabilities import CAPABILITIES
from platforms.http import json_or_empty, refuse_edit_fields, send, web_url

LIVE_BASE_URL = "https://api.telegram.org"
WEB_URL = "https://t.me"
BOT_TOKEN = re.compile(r"^\d{5,}:[A-Za-z0-9_-]{35}$")
_MEDIA_WORDS = ("file", "url", "photo", "video", "media", "image", "wrong type of the web page content")


class Client(PlatformClient):
    platform = Platform.TELEGRAM
    connect_method = "credentials"
    credential_fields = ("botToken", "chatId")

    # --- plumbing -----------------------------------------------------------------------
    def call(self, token: str, method: str, params: dict[str, Any] | None = None, *, creates: bool = False) -> Any:
        """``POST /bot<token>/<method>`` with a JSON body; the ``result`` of an ok answer."""
        response = send(
            self.session,
            "POST",
            f"{self.base_url}/bot{token}/{method}",
            timeout=self.timeout,
            creates=creates,
            json=params or {},
        )
        body = json_or_empty(response)
        if isinstance(body, dict) and body.get("ok") is True:
            return body.get("result")
        raise self.error_from(response.status_code, body)

    @staticmethod
    def error_from(status: int, body: Any) -> PlatformError:
        body = body if isinstance(body, dict) else {}
        code = int(body.get("error_code") or status)
        message = str(body.get("description") or f"HTTP {status}")
        parameters = body.get("parameters") or {}
        if code == 401:
            return AuthError(message, http_status=code)
        if code == 429:
            retry_after = parameters.get("retry_after")
            retry_at = (
                dt.datetime.now(dt.UTC) + dt.timedelta(seconds=int(retry_after))
                if isinstance(retry_after, int | float)
                else None
            )
            return RateLimited(message, http_status=code, retry_at=retry_at)
        if code >= 500:
            return Transient(message, http_status=code)
        if code == 403:
            return Permanent(message, error_code=ErrorCode.PERMISSION_MISSING, http_status=code)
        lowered = message.lower()
        if "chat not found" in lowered or "migrated" in lowered or "migrate_to_chat_id" in str(parameters):
            return Permanent(message, error_code=ErrorCode.INVALID_REQUEST, http_status=code)
        if any(word in lowered for word in _MEDIA_WORDS):
            return Permanent(message, error_code=ErrorCode.MEDIA_REJECTED, http_status=code)
        return Permanent(message, error_code=ErrorCode.CONTENT_REJECTED, http_status=code)

    # --- connect ------------------------------------------------------------------------
    def connect_with_credentials(self, fields: dict[str, str]) -> list[ConnectedIdentity]:
        token = (fields.get("botToken") or "").strip()
        chat_id = (fields.get("chatId") or "").strip()
        if not BOT_TOKEN.match(token):
            raise Permanent(
                "botToken is not a bot token (123456:ABC…, from @BotFather)", error_code=ErrorCode.INVALID_REQUEST
            )
        if not re.fullmatch(r"-?\d+|@[A-Za-z][A-Za-z0-9_]{3,}", chat_id):
            raise Permanent(
                "chatId must be a numeric chat id or a @channelusername", error_code=ErrorCode.INVALID_REQUEST
            )
        bot = self.call(token, "getMe")
        chat = self.call(token, "getChat", {"chat_id": chat_id})
        creds = Credentials(
            access_token=token,
            external_id=str(chat["id"]),
            extra={"bot_id": str(bot.get("id", "")), "bot_username": str(bot.get("username") or "")},
        )
        return [ConnectedIdentity(profile=self.profile_from(chat), credentials=creds)]

    def web_url(self, path: str) -> str:
        """``path`` on t.me (the simulator's page of it in sandbox mode)."""
        return web_url(self.base_url, LIVE_BASE_URL, f"{WEB_URL}{path}", path)

    def profile_from(self, chat: dict[str, Any]) -> AccountProfile:
        name = chat.get("title") or " ".join(filter(None, [chat.get("first_name"), chat.get("last_name")]))
        username = str(chat.get("username") or "")
        return AccountProfile(
            external_id=str(chat["id"]),
            display_name=str(name or username or chat["id"]),
            username=username,
            # t.me's picture of a public chat; the Bot API's own file links carry the bot token
            avatar_url=self.web_url(f"/i/userpic/320/{username}.jpg") if username else "",
        )

    def sandbox_credentials(self) -> dict[str, str]:
        """A new well-formed bot token and a channel the simulator creates for it (sandbox only)."""
        alphabet = string.ascii_letters + string.digits + "_-"
        token = f"{secrets.randbelow(9 * 10**9) + 10**9}:{''.join(secrets.choice(alphabet) for _ in range(35))}"
        response = send(
            self.session, "POST", f"{self.base_url}/sandbox/chats", timeout=self.timeout, json={"botToken": token}
        )
        if response.status_code != 200:
            raise Transient(f"the Telegram simulator did not create a chat (HTTP {response.status_code})")
        return {"botToken": token, "chatId": str(response.json()["chat_id"])}

    def check_token(self, creds: Credentials) -> AccountProfile:
        self.call(creds.access_token, "getMe")
        return self.profile_from(self.call(creds.access_token, "getChat", {"chat_id": creds.external_id}))

    def fetch_followers(self, creds: Credentials) -> int | None:
        count = self.call(creds.access_token, "getChatMemberCount", {"chat_id": creds.external_id})
        return int(count) if isinstance(count, int) else None

    # --- publish ------------------------------------------------------------------------
    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        common: dict[str, Any] = {"chat_id": creds.external_id}
        if request.options.get("disableNotification"):
            common["disable_notification"] = True
        if request.options.get("protectContent"):
            common["protect_content"] = True
        media = request.media
        if not media:
            params = {**common, "text": request.text}
            if request.options.get("disableLinkPreview"):
                params["link_preview_options"] = {"is_disabled": True}
            message = self.call(creds.access_token, "sendMessage", params, creates=True)
        elif len(media) == 1:
            item = media[0]
            method, field = ("sendVideo", "video") if item.kind == "video" else ("sendPhoto", "photo")
            params = {**common, field: item.url}
            if request.text:
                params["caption"] = request.text
            if item.kind == "video":
                params["supports_streaming"] = True
            message = self.call(creds.access_token, method, params, creates=True)
        else:
            group = [{"type": "video" if m.kind == "video" else "photo", "media": m.url} for m in media]
            if request.text:
                group[0]["caption"] = request.text
            messages = self.call(creds.access_token, "sendMediaGroup", {**common, "media": group}, creates=True)
            message = messages[0]
        return self.result_from(message)

    # --- after publishing ----------------------------------------------------------------
    def edit(self, creds: Credentials, request: EditRequest) -> EditResult:
        """``editMessageText`` for a text message, ``editMessageCaption`` for a media one (its
        first message for an album): the edited Message. A bot edits its own channel posts with
        no time limit. An edit repeating the text already there answers "message is not
        modified": the text is as asked, so it counts as done. Where the content type is not
        given, a text edit refused with "there is no text in the message to edit" (nothing
        changed) is sent again as a caption edit. New media: :meth:`_edit_media`."""
        refuse_edit_fields("TELEGRAM", request, CAPABILITIES[Platform.TELEGRAM].edit_fields)
        common = {"chat_id": creds.external_id, "message_id": int(request.platform_post_id)}
        if request.media is not None:
            return self._edit_media(creds, request, common)
        if request.text is None:
            return EditResult()
        caption = request.content_type not in ("", "TEXT")
        if not caption:
            try:
                message = self._edit(creds, "editMessageText", {**common, "text": request.text})
            except Permanent as exc:
                if request.content_type or "no text in the message" not in exc.message:
                    raise
                caption = True
        if caption:
            message = self._edit(creds, "editMessageCaption", {**common, "caption": request.text})
        return self._edited(message)

    def _edit_media(self, creds: Credentials, request: EditRequest, common: dict[str, Any]) -> EditResult:
        """``editMessageMedia``: the photo or video of one message replaced, or media added to a
        text message, the caption sent with it (``request.text``: the text the post keeps, which
        becomes the caption of a text message given media). One message per call: an album (one
        message per item) is refused, and so is removing the media, which the Bot API cannot do
        (the capability table says so; the service SKIPs such entries before any call)."""
        media = request.media or ()
        if len(media) != 1 or request.content_type == "CAROUSEL":
            raise Permanent(
                "TELEGRAM replaces the media of a message with one photo or video in place, not of an album and "
                "never by none (editMessageMedia)",
                error_code=ErrorCode.INVALID_REQUEST,
            )
        item = media[0]
        kind = "video" if item.kind == "video" else "photo"
        input_media: dict[str, Any] = {"type": kind, "media": item.url}
        if request.text:
            input_media["caption"] = request.text
        if kind == "video":
            input_media["supports_streaming"] = True
        return self._edited(self._edit(creds, "editMessageMedia", {**common, "media": input_media}))

    def _edited(self, message: dict[str, Any] | None) -> EditResult:
        published = self.result_from(message) if message else None
        edited = message.get("edit_date") if message else None
        return EditResult(
            url=published.url if published else "",
            edited_at=dt.datetime.fromtimestamp(edited, dt.UTC) if isinstance(edited, int) else None,
        )

    def _edit(self, creds: Credentials, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        try:
            result = self.call(creds.access_token, method, params, creates=True)
        except Permanent as exc:
            if "message is not modified" in exc.message:
                return None
            raise
        return result if isinstance(result, dict) else None

    def delete(self, creds: Credentials, platform_post_id: str) -> None:
        """``deleteMessage``: only within 48 hours of sending ("message can't be deleted for
        everyone" after, a Permanent); a message already gone ("message to delete not found")
        counts as deleted. (A bot token is revoked only through @BotFather: no revoke_token.)"""
        try:
            self.call(
                creds.access_token,
                "deleteMessage",
                {"chat_id": creds.external_id, "message_id": int(platform_post_id)},
                creates=True,
            )
        except Permanent as exc:
            if "message to delete not found" not in exc.message:
                raise

    def result_from(self, message: dict[str, Any]) -> PublishResult:
        chat = message.get("chat") or {}
        message_id = str(message["message_id"])
        if chat.get("username"):
            url = self.web_url(f"/{chat['username']}/{message_id}")
        elif str(chat.get("id", "")).startswith("-100"):
            url = self.web_url(f"/c/{str(chat['id'])[4:]}/{message_id}")
        else:
            url = ""
        date = message.get("date")
        return PublishResult(
            done=True,
            platform_post_id=message_id,
            url=url,
            published_at=dt.datetime.fromtimestamp(date, dt.UTC) if isinstance(date, int) else None,
        )
