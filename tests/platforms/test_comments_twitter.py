"""TWITTER (X) engagement over real HTTP against the simulator: the conversation of a post read
with recent search (pages, ``since``, nesting), a reply that joins it, hiding, deleting (the
account's own only; a reply already gone passes) and liking, and errors classified."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import requests
from django.conf import settings
from django.test import override_settings

from platforms.base import (
    AuthError,
    Credentials,
    ErrorCode,
    Permanent,
    Platform,
    PublishRequest,
    RateLimited,
    RemoteComment,
    Transient,
    UnknownOutcome,
)
from platforms.registry import get_client
from platforms.sandbox import audience
from platforms.sandbox import twitter as sim
from platforms.sandbox.store import SandboxStore
from tests.platforms.comment_helpers import backdate, every_comment, post_with_comments, reply_request
from tests.platforms.conftest import sim_requests

SLUG = "twitter"


@pytest.fixture
def account(connect_one: Any) -> Credentials:
    return connect_one(Platform.TWITTER).credentials


def _publish(creds: Credentials, text: str) -> str:
    result = get_client(Platform.TWITTER).publish(
        creds, PublishRequest(target_id=text, content_type="TEXT", text=text), {}
    )
    return str(result.platform_post_id)


def _tweet(post_id: str) -> dict[str, Any]:
    tweet = sim._find_tweet(post_id)
    assert tweet is not None
    return tweet


def _expected(post_id: str) -> list[dict[str, Any]]:
    return audience.expected(SLUG, post_id, _tweet(post_id)["created"])


def _by_id(comments: list[RemoteComment]) -> dict[str, RemoteComment]:
    return {c.platform_comment_id: c for c in comments}


def _shown(post_id: str) -> dict[str, dict[str, Any]]:
    return {
        sim.comment_tweet_id(c): c
        for c in audience.thread(SandboxStore(SLUG), SLUG, post_id, _tweet(post_id)["created"])
    }


@override_settings(SANDBOX_COMMENT_PAGE_SIZE=2)
def test_the_conversation_is_read_page_by_page_with_its_nesting(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TWITTER)
    post_id = post_with_comments(lambda n: _publish(account, f"A post {n}"), _expected, at_least=3)
    comments, pages = every_comment(client, account, post_id)
    assert pages >= 2
    expected = _expected(post_id)
    ids = {c["id"]: sim.comment_tweet_id(c) for c in expected}
    assert ids == {c["id"]: sim.platform_comment_id(c["id"], c["parentId"]) for c in expected}
    assert sorted(_by_id(comments)) == sorted(ids.values())
    for doc in expected:
        found = _by_id(comments)[ids[doc["id"]]]
        assert found.platform_post_id == post_id
        assert found.parent_id == (ids[doc["parentId"]] if doc["parentId"] else "")
        assert found.text == doc["text"]
        assert found.author.name == doc["author"].name and found.author.handle == doc["author"].handle
        assert found.like_count == doc["likeCount"]
        assert not found.from_account and not found.hidden
        assert found.permalink.endswith(f"/sandbox/twitter/{doc['author'].handle}/status/{found.platform_comment_id}")
        page = requests.get(
            found.permalink.replace(settings.PUBLIC_BASE_URL, sandbox.removesuffix("/sandbox")), timeout=10
        )
        assert page.status_code == 200 and doc["author"].name in page.text
    replies = {c.parent_id for c in comments if c.parent_id}
    assert all(_by_id(comments)[p].reply_count == sum(1 for c in comments if c.parent_id == p) for p in replies)
    # newest first, as recent search answers
    assert [c.created_at for c in comments] == sorted((c.created_at for c in comments), reverse=True)
    calls = sim_requests(sandbox, SLUG, "/2/tweets/search/recent")
    assert len(calls) == pages


@override_settings(SANDBOX_AUDIENCE_PACE_SECONDS=600.0)
def test_since_asks_for_the_newer_replies_only(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TWITTER)
    post_id = _publish(account, "An older post")
    created = backdate(SLUG, f"tweets:{account.external_id}", post_id, "created", hours=10)
    expected = audience.expected(SLUG, post_id, created)
    cut = len(expected) // 2
    since = dt.datetime.fromtimestamp(created + 600 * cut + 1, dt.UTC)
    comments, _ = every_comment(client, account, post_id, since=since)
    assert sorted(c.platform_comment_id for c in comments) == sorted(sim.comment_tweet_id(c) for c in expected[cut:])
    assert all(c.created_at >= since - dt.timedelta(seconds=1) for c in comments)


def test_a_reply_joins_the_conversation_as_the_accounts_own(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TWITTER)
    post_id = post_with_comments(lambda n: _publish(account, f"Reply post {n}"), _expected, at_least=1)
    top = next(c for c in _expected(post_id) if not c["parentId"])
    top_id = sim.comment_tweet_id(top)
    reply = client.reply_comment(account, reply_request("rp-1", "Thanks for asking!", post_id, top_id), {})
    assert reply.done and reply.platform_post_id
    nested = client.reply_comment(account, reply_request("rp-2", "One more thing", post_id, reply.platform_post_id), {})
    comments = _by_id(every_comment(client, account, post_id)[0])
    mine = comments[reply.platform_post_id]
    assert mine.from_account and mine.parent_id == top_id and mine.text == "Thanks for asking!"
    assert mine.author.id == account.external_id
    assert comments[nested.platform_post_id].parent_id == reply.platform_post_id
    assert comments[top_id].reply_count == sum(1 for c in comments.values() if c.parent_id == top_id)
    [call] = [c for c in sim_requests(sandbox, SLUG, "/2/tweets") if c.get("inReplyTo") == top_id]
    assert call["status"] == 201
    # X takes no idempotency key: the same reply again is refused as duplicate content
    with pytest.raises(Permanent) as duplicate:
        client.reply_comment(account, reply_request("rp-1", "Thanks for asking!", post_id, top_id), {})
    assert duplicate.value.error_code == ErrorCode.DUPLICATE


def test_a_reply_to_a_reply_that_does_not_exist_is_refused(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TWITTER)
    post_id = _publish(account, "Lonely post")
    missing = str(sim.COMMENT_IDS + 42)
    with pytest.raises(Permanent) as refused:
        client.reply_comment(account, reply_request("rp-x", "Hello?", post_id, missing), {})
    assert refused.value.error_code == ErrorCode.PERMISSION_MISSING


def test_hide_and_show_again(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TWITTER)
    post_id = post_with_comments(lambda n: _publish(account, f"Hide post {n}"), _expected, at_least=1)
    target = sim.comment_tweet_id(_expected(post_id)[0])
    client.set_comment_hidden(account, target, True)
    client.set_comment_hidden(account, target, True)  # already hidden: harmless
    assert _shown(post_id)[target]["hidden"]
    client.set_comment_hidden(account, target, False)
    assert not _shown(post_id)[target]["hidden"]
    hides = [c for c in sim_requests(sandbox, SLUG, "/hidden") if c["status"] == 200]
    assert [c["hide"] for c in hides] == [True, True, False]
    with pytest.raises(Permanent) as not_a_reply:
        client.set_comment_hidden(account, post_id, True)  # the post itself is no reply
    assert not_a_reply.value.error_code == ErrorCode.PERMISSION_MISSING


def test_delete_own_reply_and_a_gone_one_passes(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TWITTER)
    post_id = post_with_comments(lambda n: _publish(account, f"Delete post {n}"), _expected, at_least=1)
    top_id = sim.comment_tweet_id(next(c for c in _expected(post_id) if not c["parentId"]))
    reply = client.reply_comment(account, reply_request("del-1", "Oops, wrong thread", post_id, top_id), {})
    client.delete_comment(account, reply.platform_post_id)
    assert reply.platform_post_id not in _by_id(every_comment(client, account, post_id)[0])
    client.delete_comment(account, reply.platform_post_id)  # already gone: deleted
    with pytest.raises(Permanent) as others:
        client.delete_comment(account, top_id)
    assert others.value.error_code == ErrorCode.PERMISSION_MISSING
    assert top_id in _by_id(every_comment(client, account, post_id)[0])


def test_like_counts_once(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TWITTER)
    post_id = post_with_comments(lambda n: _publish(account, f"Like post {n}"), _expected, at_least=1)
    doc = _expected(post_id)[0]
    target = sim.comment_tweet_id(doc)
    client.like_comment(account, target)
    client.like_comment(account, target)
    assert _by_id(every_comment(client, account, post_id)[0])[target].like_count == doc["likeCount"] + 1
    [body] = [c for c in sim_requests(sandbox, SLUG, "/likes") if c["status"] == 200][:1]
    assert body["remoteId"] == target


def test_a_post_that_is_gone_has_no_comments(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TWITTER)
    post_id = _publish(account, "Soon gone")
    client.delete(account, post_id)
    page = client.list_comments(account, post_id)
    assert page.comments == () and page.cursor == ""


def _arm(sandbox: str, kind: str, path: str, **extra: Any) -> None:
    body = {"kind": kind, "path": path, **extra}
    assert requests.post(f"{sandbox}/_control/{SLUG}/faults", json=body, timeout=10).status_code == 201


def test_errors_are_classified(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TWITTER)
    post_id = post_with_comments(lambda n: _publish(account, f"Error post {n}"), _expected, at_least=1)
    target = sim.comment_tweet_id(_expected(post_id)[0])
    _arm(sandbox, "rate_limited", "/search/recent")
    with pytest.raises(RateLimited) as limited:
        client.list_comments(account, post_id)
    assert limited.value.retry_at is not None
    _arm(sandbox, "server_error", "/hidden")
    with pytest.raises(Transient):
        client.set_comment_hidden(account, target, True)
    _arm(sandbox, "timeout", "/2/tweets", method="POST", seconds=2)
    slow = get_client(Platform.TWITTER)
    slow.timeout = 0.5
    with pytest.raises(UnknownOutcome):
        slow.reply_comment(account, reply_request("to-1", "Maybe sent", post_id, target), {})
    requests.post(f"{sandbox}/_control/{SLUG}/accounts/{account.external_id}/revoke", json={}, timeout=10)
    with pytest.raises(AuthError):
        client.like_comment(account, target)
