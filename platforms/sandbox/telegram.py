"""Simulator of the Telegram Bot API: ``/bot<token>/<method>`` with parameters in the query string,
a form, multipart or JSON (as the real server takes them), the ``{"ok": ...}`` envelope, and the
methods we use: getMe, getChat, getChatMemberCount, sendMessage, sendPhoto, sendVideo,
sendMediaGroup, editMessageText, editMessageCaption, editMessageMedia, deleteMessage. Any well-formed bot token is a bot; ``POST sandbox/chats`` (simulator only) makes a
channel administered by that bot, which is what a user does by hand on the real platform."""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import path

from platforms.base import Platform
from platforms.sandbox import media_checks, pages
from platforms.sandbox.common import fetch_media, grown, json_response, request_params, sniff_mime
from platforms.sandbox.scenarios import marker
from platforms.sandbox.store import SandboxStore
from platforms.sandbox.views import json_body, simulator_view

SLUG = "telegram"
TOKEN = re.compile(r"^(\d{5,}):[A-Za-z0-9_-]{35}$")
PHOTO_URL_LIMIT = 5 * 1024 * 1024
VIDEO_URL_LIMIT = 20 * 1024 * 1024


class ApiError(Exception):
    def __init__(self, code: int, description: str, parameters: dict[str, Any] | None = None) -> None:
        super().__init__(description)
        self.code, self.description, self.parameters = code, description, parameters


def _store() -> SandboxStore:
    return SandboxStore(SLUG)


def _bot(token: str) -> dict[str, Any]:
    match = TOKEN.match(token)
    if match is None:
        raise ApiError(404, "Not Found")
    bot_id = match.group(1)
    bot = _store().get("bot", bot_id)
    if bot is None:
        bot = {"id": int(bot_id), "token": token, "username": f"sandbox_{bot_id[-6:]}_bot"}
        bot, _ = _store().create_once("bot", bot_id, bot)
    if bot["token"] != token or _store().is_revoked(bot_id):
        raise ApiError(401, "Unauthorized")
    return bot


def _chat(bot: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    raw = str(params.get("chat_id") or "").strip()
    if not raw:
        raise ApiError(400, "Bad Request: chat_id is empty")
    chat = None
    if raw.startswith("@"):
        chat = next((c for c in _store().all("chat") if c.get("username") == raw[1:]), None)
    else:
        chat = _store().get("chat", raw)
    if chat is None:
        raise ApiError(400, "Bad Request: chat not found")
    if _store().is_revoked(str(chat["id"])):
        raise ApiError(401, "Unauthorized")
    if bot["id"] not in chat["admins"]:
        raise ApiError(403, "Forbidden: bot is not a member of the channel chat")
    return chat


def _chat_short(chat: dict[str, Any]) -> dict[str, Any]:
    return {"id": chat["id"], "title": chat["title"], "username": chat["username"], "type": "channel"}


# --- methods -----------------------------------------------------------------------------


def get_me(request: HttpRequest, bot: dict[str, Any], params: dict[str, Any]) -> Any:
    return {
        "id": bot["id"],
        "is_bot": True,
        "first_name": "Sandbox Bot",
        "username": bot["username"],
        "can_join_groups": True,
        "can_read_all_group_messages": False,
        "supports_inline_queries": False,
        "can_connect_to_business": False,
        "has_main_web_app": False,
    }


def get_chat(request: HttpRequest, bot: dict[str, Any], params: dict[str, Any]) -> Any:
    chat = _chat(bot, params)
    return {
        **_chat_short(chat),
        "description": "A simulated channel",
        "accent_color_id": 0,
        "max_reaction_count": 11,
        "accepted_gift_types": {
            "unlimited_gifts": False,
            "limited_gifts": False,
            "unique_gifts": False,
            "premium_subscription": False,
            "gifts_from_channels": False,
        },
    }


def get_member_count(request: HttpRequest, bot: dict[str, Any], params: dict[str, Any]) -> Any:
    chat = _chat(bot, params)
    return grown(chat["created"], 3, base=chat["members"])


def _scenario(request: HttpRequest, chat: dict[str, Any], text: str) -> None:
    request.sandbox_log = {"publish": True, "marker": None, "text": text[:80]}  # type: ignore[attr-defined]
    scenario = marker(text)
    if scenario == "unauthorized":
        raise ApiError(401, "Unauthorized")
    if scenario == "flaky" and _store().first_time(f"flaky:{chat['id']}:{text}"):
        raise ApiError(502, "Bad Gateway")
    if scenario == "fail":
        raise ApiError(400, "Bad Request: the message was refused by the sandbox (#sandbox-fail)")


def _media_from(request: HttpRequest, value: Any, kind: str) -> dict[str, Any]:
    """Fetch a photo/video given by URL (or take an uploaded ``attach://`` / multipart file)."""
    data: bytes | None = None
    if isinstance(value, str) and value.startswith("attach://"):
        upload = request.FILES.get(value[len("attach://") :])
        data = upload.read() if upload else None
    elif isinstance(value, str) and value.startswith(("http://", "https://")):
        fetched = fetch_media(value)
        if fetched is None:
            raise ApiError(400, "Bad Request: failed to get HTTP URL content")
        data = fetched[0]
    elif request.FILES.get(kind) is not None:
        upload = request.FILES.get(kind)
        data = upload.read() if upload else None
    if not data:
        raise ApiError(400, f"Bad Request: wrong remote file identifier specified: {kind} is empty")
    mime = sniff_mime(data)
    if kind == "photo" and (not mime.startswith("image/") or len(data) > PHOTO_URL_LIMIT):
        raise ApiError(400, "Bad Request: wrong type of the web page content")
    if kind == "video" and (mime != "video/mp4" or len(data) > VIDEO_URL_LIMIT):
        raise ApiError(400, "Bad Request: wrong type of the web page content")
    if (problem := media_checks.refusal(Platform.TELEGRAM, "FEED", data)) is not None:
        raise ApiError(400, f"Bad Request: {problem}")
    unique = "AQAD" + hashlib.sha256(data).hexdigest()[:12]
    if kind == "photo":
        return {
            "photo": [
                {
                    "file_id": f"AgAC{unique}",
                    "file_unique_id": unique,
                    "width": 640,
                    "height": 480,
                    "file_size": len(data),
                }
            ]
        }
    return {
        "video": {
            "file_id": f"BAAC{unique}",
            "file_unique_id": unique,
            "width": 360,
            "height": 640,
            "duration": 3,
            "mime_type": "video/mp4",
            "file_size": len(data),
        }
    }


def _store_message(chat: dict[str, Any], content: dict[str, Any], group: str | None = None) -> dict[str, Any]:
    store = _store()
    message_id = int(store.redis.incr(store._key("message_seq", str(chat["id"]))))
    message = {
        "message_id": message_id,
        "sender_chat": {"id": chat["id"], "title": chat["title"], "username": chat["username"], "type": "channel"},
        "chat": _chat_short(chat),
        "date": int(time.time()),
        **content,
    }
    if group:
        message["media_group_id"] = group
    store.put(f"messages:{chat['id']}", str(message_id), message)
    return message


def _text_limits(text: str, *, caption: bool) -> None:
    if caption and len(text) > 1024:
        raise ApiError(400, "Bad Request: message caption is too long")
    if not caption and not text.strip():
        raise ApiError(400, "Bad Request: message text is empty")
    if len(text) > 4096:
        raise ApiError(400, "Bad Request: message is too long")


def send_message(request: HttpRequest, bot: dict[str, Any], params: dict[str, Any]) -> Any:
    chat = _chat(bot, params)
    text = str(params.get("text") or "")
    _scenario(request, chat, text)
    _text_limits(text, caption=False)
    message = _store_message(chat, {"text": text})
    request.sandbox_log["remoteId"] = str(message["message_id"])  # type: ignore[attr-defined]
    return message


def _send_single(kind: str) -> Callable[[HttpRequest, dict[str, Any], dict[str, Any]], Any]:
    def method(request: HttpRequest, bot: dict[str, Any], params: dict[str, Any]) -> Any:
        chat = _chat(bot, params)
        caption = str(params.get("caption") or "")
        _scenario(request, chat, caption)
        _text_limits(caption, caption=True)
        content = _media_from(request, params.get(kind), kind)
        if caption:
            content["caption"] = caption
        message = _store_message(chat, content)
        request.sandbox_log["remoteId"] = str(message["message_id"])  # type: ignore[attr-defined]
        return message

    return method


def send_media_group(request: HttpRequest, bot: dict[str, Any], params: dict[str, Any]) -> Any:
    chat = _chat(bot, params)
    media = params.get("media")
    if isinstance(media, str):
        try:
            media = json.loads(media)
        except ValueError:
            raise ApiError(400, "Bad Request: can't parse media JSON object")
    if not isinstance(media, list) or not 2 <= len(media) <= 10:
        raise ApiError(400, "Bad Request: media group must contain from 2 to 10 items")
    captions = [str(item.get("caption") or "") for item in media if isinstance(item, dict)]
    _scenario(request, chat, " ".join(captions))
    contents = []
    for item in media:
        if not isinstance(item, dict) or item.get("type") not in {"photo", "video"}:
            raise ApiError(400, "Bad Request: wrong media type in the group")
        _text_limits(str(item.get("caption") or ""), caption=True)
        content = _media_from(request, item.get("media"), str(item["type"]))
        if item.get("caption"):
            content["caption"] = str(item["caption"])
        contents.append(content)
    group = f"{int(time.time() * 1000)}{len(contents)}"
    messages = [_store_message(chat, content, group) for content in contents]
    request.sandbox_log["remoteId"] = str(messages[0]["message_id"])  # type: ignore[attr-defined]
    return messages


DELETE_WINDOW = 48 * 3600  # deleteMessage: "a message can only be deleted if it was sent less than 48 hours ago"


def _message(
    request: HttpRequest, bot: dict[str, Any], params: dict[str, Any], kind: str
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(the chat, the message ``message_id`` names or None); the call logged as ``kind``."""
    chat = _chat(bot, params)
    raw = params.get("message_id")
    request.sandbox_log = {kind: True, "remoteId": str(raw)}  # type: ignore[attr-defined]
    if not isinstance(raw, int) and not str(raw or "").isdigit():
        raise ApiError(400, "Bad Request: message identifier is not specified")
    return chat, _store().get(f"messages:{chat['id']}", str(int(str(raw))))


def _edit(field: str) -> Callable[[HttpRequest, dict[str, Any], dict[str, Any]], Any]:
    """``editMessageText`` (``field`` "text") or ``editMessageCaption`` ("caption"): the bot's own
    channel post changes (no time limit), the edited Message is answered with ``edit_date``."""

    def method(request: HttpRequest, bot: dict[str, Any], params: dict[str, Any]) -> Any:
        chat, message = _message(request, bot, params, "edit")
        value = str(params.get(field) or "")
        request.sandbox_log["text"] = value[:80]  # type: ignore[attr-defined]
        if message is None:
            raise ApiError(400, "Bad Request: message to edit not found")
        is_media = "photo" in message or "video" in message
        if field == "text" and is_media:
            raise ApiError(400, "Bad Request: there is no text in the message to edit")
        if field == "caption" and not is_media:
            raise ApiError(400, "Bad Request: there is no caption in the message to edit")
        scenario = marker(value)
        if scenario == "unauthorized":
            raise ApiError(401, "Unauthorized")
        if scenario == "fail":
            raise ApiError(400, "Bad Request: the message was refused by the sandbox (#sandbox-fail)")
        _text_limits(value, caption=field == "caption")
        if message.get(field, "") == value:
            raise ApiError(
                400,
                "Bad Request: message is not modified: specified new message content and reply markup are exactly "
                "the same as a current content and reply markup of the message",
            )
        message.update({field: value, "edit_date": int(time.time())})
        _store().put(f"messages:{chat['id']}", str(message["message_id"]), message)
        return message

    return method


_MEDIA_FIELDS = ("photo", "video")


def edit_message_media(request: HttpRequest, bot: dict[str, Any], params: dict[str, Any]) -> Any:
    """``editMessageMedia``: the photo or video of one of the bot's messages replaced (an album's
    item only by another photo or video), or media added to a text message; the InputMedia's
    caption replaces the message's (none: no caption). The edited Message, with ``edit_date``."""
    chat, message = _message(request, bot, params, "edit")
    media = params.get("media")
    if isinstance(media, str):
        try:
            media = json.loads(media)
        except ValueError:
            raise ApiError(400, "Bad Request: can't parse InputMedia: Can't parse media JSON object")
    if not isinstance(media, dict) or not media.get("media"):
        raise ApiError(400, "Bad Request: can't parse InputMedia: media not found")
    kind = str(media.get("type") or "")
    caption = str(media.get("caption") or "")
    request.sandbox_log.update({"text": caption[:80], "media": kind})  # type: ignore[attr-defined]
    if message is None:
        raise ApiError(400, "Bad Request: message to edit not found")
    if kind not in _MEDIA_FIELDS:
        raise ApiError(400, f'Bad Request: can\'t parse InputMedia: unsupported media type "{kind}" specified')
    scenario = marker(caption)
    if scenario == "unauthorized":
        raise ApiError(401, "Unauthorized")
    if scenario == "fail":
        raise ApiError(400, "Bad Request: the message was refused by the sandbox (#sandbox-fail)")
    _text_limits(caption, caption=True)
    content = _media_from(request, media.get("media"), kind)
    same_file = _file_of(message) == _file_of(content)
    if same_file and str(message.get("caption") or "") == caption and "text" not in message:
        raise ApiError(
            400,
            "Bad Request: message is not modified: specified new message content and reply markup are exactly the "
            "same as a current content and reply markup of the message",
        )
    for field in (*_MEDIA_FIELDS, "text", "caption", "link_preview_options"):
        message.pop(field, None)
    message.update(content)
    if caption:
        message["caption"] = caption
    message["edit_date"] = int(time.time())
    _store().put(f"messages:{chat['id']}", str(message["message_id"]), message)
    return message


def _file_of(message: dict[str, Any]) -> str:
    """The unique id of a message's photo (its largest size) or video ("" for none)."""
    if message.get("photo"):
        return str(message["photo"][-1].get("file_unique_id") or "")
    return str((message.get("video") or {}).get("file_unique_id") or "")


def delete_message(request: HttpRequest, bot: dict[str, Any], params: dict[str, Any]) -> Any:
    """``deleteMessage``: ``true``; only within ``DELETE_WINDOW`` of sending."""
    chat, message = _message(request, bot, params, "delete")
    if message is None:
        raise ApiError(400, "Bad Request: message to delete not found")
    if time.time() - message["date"] >= DELETE_WINDOW:
        raise ApiError(400, "Bad Request: message can't be deleted for everyone")
    _store().delete(f"messages:{chat['id']}", str(message["message_id"]))
    return True


METHODS: dict[str, Callable[[HttpRequest, dict[str, Any], dict[str, Any]], Any]] = {
    "getme": get_me,
    "getchat": get_chat,
    "getchatmembercount": get_member_count,
    "getchatmemberscount": get_member_count,
    "sendmessage": send_message,
    "sendphoto": _send_single("photo"),
    "sendvideo": _send_single("video"),
    "sendmediagroup": send_media_group,
    "editmessagetext": _edit("text"),
    "editmessagecaption": _edit("caption"),
    "editmessagemedia": edit_message_media,
    "deletemessage": delete_message,
}


@simulator_view(SLUG)
def bot_method(request: HttpRequest, token: str, method: str) -> HttpResponse:
    handler = METHODS.get(method.lower())
    try:
        bot = _bot(token)
        if handler is None:
            raise ApiError(404, "Not Found")
        result = handler(request, bot, request_params(request))
    except ApiError as exc:
        body: dict[str, Any] = {"ok": False, "error_code": exc.code, "description": exc.description}
        if exc.parameters:
            body["parameters"] = exc.parameters
        return json_response(body, status=exc.code)
    return json_response({"ok": True, "result": result})


@simulator_view(SLUG)
def sandbox_new_chat(request: HttpRequest) -> HttpResponse:
    """Simulator only: a new channel administered by the bot of ``botToken`` (created if new)."""
    if request.method != "POST":
        return json_response({"error": "POST only"}, 405)
    try:
        bot = _bot(str(json_body(request).get("botToken") or ""))
    except ApiError as exc:
        return json_response({"error": exc.description}, 400)
    number = _store().new_id()
    chat_id = f"-100{number[-10:]}"
    chat = {
        "id": int(chat_id),
        "title": f"Sandbox Channel {number[-4:]}",
        "username": f"sandbox_channel_{number[-8:]}",
        "admins": [bot["id"]],
        "members": 100 + int(number[-3:]),
        "created": time.time(),
    }
    _store().put("chat", chat_id, chat)
    return json_response({"chat_id": chat["id"], "title": chat["title"], "username": chat["username"]})


# --- what a person opens from the links (t.me) ----------------------------------------------


def _chat_named(username: str) -> dict[str, Any] | None:
    return next((c for c in _store().all("chat") if c.get("username") == username), None)


def _message_page(chat: dict[str, Any] | None, message_id: int) -> HttpResponse:
    message = _store().get(f"messages:{chat['id']}", str(message_id)) if chat else None
    if chat is None or message is None:
        return pages.not_found_page("Telegram")
    return pages.post_page(
        platform="Telegram",
        author=chat["title"],
        handle=f"@{chat['username']}",
        text=str(message.get("text") or message.get("caption") or ""),
        avatar=f"{pages.public_base(SLUG)}/i/userpic/320/{chat['username']}.jpg",
    )


def public_message_page(request: HttpRequest, username: str, message_id: int) -> HttpResponse:
    """``t.me/{channel}/{id}``: a message of a public channel."""
    return _message_page(_chat_named(username), message_id)


def private_message_page(request: HttpRequest, chat_number: str, message_id: int) -> HttpResponse:
    """``t.me/c/{number}/{id}``: a message of a channel, for its members. The number is the chat id
    after its ``-100``, digits as they are (a leading zero is part of it: read as an int it was lost,
    and one chat in ten had no page)."""
    if not chat_number.isdigit():
        return pages.not_found_page("Telegram")
    return _message_page(_store().get("chat", f"-100{chat_number}"), message_id)


def userpic(request: HttpRequest, username: str) -> HttpResponse:
    """``t.me/i/userpic/320/{channel}.jpg``: a public chat's picture."""
    if _chat_named(username) is None:
        return pages.not_found_page("Telegram")
    return pages.avatar_response(username)


urlpatterns = [
    *pages.urlpatterns,
    path("<str:username>/<int:message_id>", public_message_page),
    path("c/<str:chat_number>/<int:message_id>", private_message_page),
    path("i/userpic/320/<str:username>.jpg", userpic),
    path("sandbox/chats", sandbox_new_chat),
    path("bot<str:token>/<str:method>", bot_method),
]


# --- armed faults (platforms.sandbox.faults): the Bot API has flood limits, no quota ----------
FLOOD_WAIT_SECONDS = 35
FAULTS = {
    "rate_limited": lambda request: json_response(
        {
            "ok": False,
            "error_code": 429,
            "description": f"Too Many Requests: retry after {FLOOD_WAIT_SECONDS}",
            "parameters": {"retry_after": FLOOD_WAIT_SECONDS},
        },
        status=429,
    ),
    "server_error": lambda request: json_response({"ok": False, "error_code": 502, "description": "Bad Gateway"}, 502),
}
