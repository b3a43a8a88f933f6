"""DESIGN.md §8: the platforms' own well-known SDKs, pointed at the simulators, work unchanged."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import requests

FIXTURES = Path(__file__).parent.parent / "fixtures"
REDIRECT = "https://client.example/callback"


def test_mastodon_py_registers_logs_in_uploads_and_posts(sandbox: str) -> None:
    from mastodon import Mastodon

    base = f"{sandbox}/mastodon"
    client_id, client_secret = Mastodon.create_app(
        "Crosspost SDK check", scopes=["read", "write"], redirect_uris=REDIRECT, api_base_url=base
    )
    api = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=base, version_check_mode="created")
    assert api.retrieve_mastodon_version() == "4.3.0"
    authorize = api.auth_request_url(redirect_uris=REDIRECT, scopes=["read", "write"], state="xyz")
    redirect = requests.get(authorize, allow_redirects=False, timeout=10)
    assert redirect.status_code == 302
    query = parse_qs(urlsplit(redirect.headers["Location"]).query)
    assert query["state"] == ["xyz"]
    token = api.log_in(code=query["code"][0], redirect_uri=REDIRECT, scopes=["read", "write"])
    assert token
    me = api.account_verify_credentials()
    assert me.username.startswith("sandbox_user")

    picture = api.media_post(str(FIXTURES / "sample.jpg"), mime_type="image/jpeg", description="test card")
    assert picture.url and picture.type == "image"
    clip = api.media_post(str(FIXTURES / "sample.mp4"), mime_type="video/mp4")
    assert clip.url is None  # v2: still processing
    for _ in range(40):
        clip = api.media(clip)
        if clip.url:
            break
        time.sleep(0.1)
    assert clip.url

    status = api.status_post("Hello from Mastodon.py", media_ids=[picture], idempotency_key="sdk-key-1")
    again = api.status_post("Hello from Mastodon.py", media_ids=[picture], idempotency_key="sdk-key-1")
    assert again.id == status.id
    assert status.media_attachments[0].id == picture.id
    assert "Hello from Mastodon.py" in status.content
    video_status = api.status_post("a clip", media_ids=[clip])
    timeline = api.account_statuses(me)
    assert [s.id for s in timeline] == [video_status.id, status.id]

    # after publishing: edit (history, source), delete, revoke
    edited = api.status_update(status, "Hello again from Mastodon.py", media_ids=[picture])
    assert edited.edited_at is not None and "Hello again" in edited.content
    assert api.status_source(status).text == "Hello again from Mastodon.py"
    assert len(api.status_history(status)) == 2
    deleted = api.status_delete(video_status)
    assert deleted.text == "a clip"
    assert [s.id for s in api.account_statuses(me)] == [status.id]
    api.revoke_access_token()
    revoked = requests.get(
        f"{base}/api/v1/accounts/verify_credentials", headers={"Authorization": f"Bearer {token}"}, timeout=10
    )
    assert revoked.status_code == 401


def test_python_telegram_bot_gets_me_and_sends_messages(sandbox: str) -> None:
    import asyncio

    import telegram as ptb

    from platforms.base import Platform
    from platforms.registry import get_client

    fields = get_client(Platform.TELEGRAM).sandbox_credentials()

    async def talk() -> tuple[ptb.User, ptb.ChatFullInfo, ptb.Message, ptb.Message, int]:
        async with ptb.Bot(fields["botToken"], base_url=f"{sandbox}/telegram/bot") as bot:
            me = await bot.get_me()
            chat = await bot.get_chat(fields["chatId"])
            text = await bot.send_message(chat_id=fields["chatId"], text="Hello from python-telegram-bot")
            photo = await bot.send_photo(
                chat_id=fields["chatId"], photo=(FIXTURES / "sample.jpg").read_bytes(), caption="uploaded"
            )
            members = await bot.get_chat_member_count(fields["chatId"])
            edited = await bot.edit_message_text("Edited by python-telegram-bot", fields["chatId"], text.message_id)
            assert edited.text == "Edited by python-telegram-bot" and edited.edit_date is not None
            recaptioned = await bot.edit_message_caption(fields["chatId"], photo.message_id, caption="recaptioned")
            assert recaptioned.caption == "recaptioned"
            assert await bot.delete_message(fields["chatId"], photo.message_id) is True
            return me, chat, text, photo, members

    me, chat, text, photo, members = asyncio.run(talk())
    assert me.is_bot and me.id == int(fields["botToken"].split(":")[0])
    assert chat.id == int(fields["chatId"]) and chat.type == "channel"
    assert text.text == "Hello from python-telegram-bot" and text.message_id == 1
    assert text.chat.id == int(fields["chatId"])
    assert photo.message_id == 2 and photo.caption == "uploaded" and photo.photo[0].file_size > 0
    assert members >= 100


def test_atproto_sdk_logs_in_and_sends_posts(sandbox: str) -> None:
    from atproto import Client, client_utils

    from platforms.sandbox.store import SandboxStore

    sdk = Client(base_url=f"{sandbox}/bluesky/xrpc")
    profile = sdk.login("sdk-check.bsky.social", "sandbox")
    assert profile is not None and profile.handle == "sdk-check.bsky.social"
    did = sdk.me.did if sdk.me else ""
    assert did.startswith("did:plc:")

    text = (
        client_utils.TextBuilder()
        .text("Hello from the atproto SDK ")
        .link("link", "https://example.com")
        .tag(" #sdk", "sdk")
    )
    post = sdk.send_post(text)
    assert post.uri.startswith(f"at://{did}/app.bsky.feed.post/")
    picture = sdk.send_image(text="with a picture", image=(FIXTURES / "sample.jpg").read_bytes(), image_alt="card")
    stored = {p["uri"]: p["value"] for p in SandboxStore("bluesky").all(f"posts:{did}")}
    assert stored[post.uri]["facets"][0]["features"][0]["uri"] == "https://example.com"
    assert stored[picture.uri]["embed"]["images"][0]["alt"] == "card"
    feed = sdk.get_author_feed(did)
    assert [item.post.uri for item in feed.feed] == [picture.uri, post.uri]
    assert sdk.get_posts([post.uri]).posts[0].like_count is not None
    assert sdk.delete_post(post.uri)
    assert [item.post.uri for item in sdk.get_author_feed(did).feed] == [picture.uri]
    assert sdk.delete_post(post.uri)  # a record already gone deletes as well
