"""In sandbox mode every URL the service hands out opens: for each platform, an account
connected through its simulator and a post published there, then every URL of the account's and
the post's API answers fetched over real HTTP. The simulator serves the post as the platform
would show it (its text and author) and the account's avatar."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.services import accounts_connect
from platforms.base import PublishRequest
from platforms.registry import get_client
from posts.models import Post, PostStatus, PostTarget, TargetStatus
from tests.platforms.conftest import CASES, IDS, Case, connect_sandbox_account, drive, media_item
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def _urls(value: Any) -> Iterator[str]:
    if isinstance(value, str) and value.startswith(("http://", "https://")):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _urls(item)
    elif isinstance(value, list):
        for item in value:
            yield from _urls(item)


@pytest.fixture
def public_sandbox(sandbox: str, settings: Any) -> str:
    """The service's public address is where the simulators are served (as under ``make run``)."""
    settings.PUBLIC_BASE_URL = sandbox.removesuffix("/sandbox")
    return settings.PUBLIC_BASE_URL


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_url_of_a_sandbox_account_and_its_post_opens(
    case: Case, public_sandbox: str, media_server: str, api: APIClient, workspace: Workspace
) -> None:
    identity = connect_sandbox_account(case.platform)[0]
    account = accounts_connect(workspace_id=workspace.id, platform=case.platform.value, identities=[identity])[0]
    client = get_client(case.platform)
    options = dict(case.options)
    if case.platform.value == "PINTEREST":
        options["boardId"] = client.list_boards(identity.credentials)[0].id
    text = f"Links that open on {case.platform.value}"
    media = tuple(media_item(f"{media_server}/{name}") for name in case.media)
    request = PublishRequest(
        target_id="tgt_links", content_type=case.content_type, text=text, media=media, options=options
    )
    result = drive(client, identity.credentials, request)[-1]
    assert result.url, result
    post = Post.objects.create(
        workspace=workspace,
        status=PostStatus.COMPLETED,
        content_type=case.content_type,
        text=text,
        media_urls=[m.url for m in media],
        timezone="UTC",
    )
    PostTarget.objects.create(
        post=post,
        platform=case.platform.value,
        account=account,
        account_name=account.display_name,
        status=TargetStatus.PUBLISHED,
        text=text,
        config=options,
        platform_post_id=result.platform_post_id,
        post_url=result.url,
        published_at=result.published_at or timezone.now(),
    )

    [listed] = [a for a in api.get("/api/v1/social-accounts").json()["accounts"] if a["id"] == account.id]
    shown = api.get(f"/api/v1/social-posts/{post.id}").json()
    assert listed["avatarUrl"] and shown["platforms"][0]["postUrl"] == result.url
    urls = sorted(set(_urls(listed)) | set(_urls(shown)))
    answers = {url: requests.get(url, timeout=10) for url in urls}
    assert {url: r.status_code for url, r in answers.items()} == dict.fromkeys(urls, 200)
    assert [url for url in urls if not url.startswith((public_sandbox, media_server))] == []  # no real site
    page = answers[result.url]
    assert page.headers["Content-Type"].startswith("text/html")
    assert text in page.text and (account.display_name in page.text or account.username in page.text)
    avatar = answers[listed["avatarUrl"]]
    assert avatar.headers["Content-Type"].startswith("image/")


@pytest.mark.parametrize("case", [c for c in CASES if c.platform.value != "TELEGRAM"], ids=lambda c: c.platform.value)
def test_every_url_of_a_listed_sandbox_post_opens(case: Case, public_sandbox: str, media_server: str) -> None:
    """The permalink and picture of each post the import and analytics read back open too
    (Telegram's Bot API cannot read a chat's history)."""
    identity = connect_sandbox_account(case.platform)[0]
    client = get_client(case.platform)
    options = dict(case.options)
    if case.platform.value == "PINTEREST":
        options["boardId"] = client.list_boards(identity.credentials)[0].id
    media = tuple(media_item(f"{media_server}/{name}") for name in case.media)
    request = PublishRequest(
        target_id="tgt_listed", content_type=case.content_type, text="Listed and linked", media=media, options=options
    )
    result = drive(client, identity.credentials, request)[-1]
    listed = client.list_recent_posts(identity.credentials, timezone.now() - dt.timedelta(days=365))
    assert result.platform_post_id in {post.platform_post_id for post in listed}
    urls = sorted({url for post in listed for url in (post.permalink, post.thumbnail_url) if url})
    assert result.url in urls
    assert {url: requests.get(url, timeout=10).status_code for url in urls} == dict.fromkeys(urls, 200)
    assert [url for url in urls if not url.startswith((public_sandbox, media_server))] == []
