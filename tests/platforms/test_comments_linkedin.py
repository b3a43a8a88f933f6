"""LINKEDIN engagement over real HTTP against the simulator: a post's comments and their replies
read page by page (``start``/``count``, ``since``), a reply that goes under the first-level comment
(LinkedIn nests one level), deleting the member's own comment (a gone one passes; another member's
is refused), liking with a reaction, no hiding, and errors classified."""

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
    NotSupported,
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
from platforms.sandbox import linkedin as sim
from platforms.sandbox.store import SandboxStore
from tests.platforms.comment_helpers import backdate, every_comment, post_with_comments, reply_request
from tests.platforms.conftest import sim_requests

SLUG = "linkedin"


@pytest.fixture
def account(connect_one: Any) -> Credentials:
    return connect_one(Platform.LINKEDIN).credentials


def _publish(creds: Credentials, text: str) -> str:
    result = get_client(Platform.LINKEDIN).publish(
        creds, PublishRequest(target_id=text, content_type="TEXT", text=text), {}
    )
    return str(result.platform_post_id)


def _post(urn: str) -> dict[str, Any]:
    post = SandboxStore(SLUG).get("post", urn)
    assert post is not None
    return post


def _expected(urn: str) -> list[dict[str, Any]]:
    return audience.expected(SLUG, urn, _post(urn)["created"])


def _with_comments(creds: Credentials, at_least: int, name: str) -> str:
    return post_with_comments(lambda n: _publish(creds, f"{name} {n}"), _expected, at_least=at_least)


def _comments(creds: Credentials, urn: str, **kwargs: Any) -> dict[str, RemoteComment]:
    comments, _ = every_comment(get_client(Platform.LINKEDIN), creds, urn, **kwargs)
    return {c.platform_comment_id: c for c in comments}


@override_settings(SANDBOX_COMMENT_PAGE_SIZE=1)
def test_comments_and_replies_are_read_page_by_page(sandbox: str, account: Credentials) -> None:
    urn = next(
        u
        for u in (_with_comments(account, 2, f"Paged {n}") for n in range(10))
        if sum(1 for c in _expected(u) if not c["parentId"]) >= 2 and any(c["parentId"] for c in _expected(u))
    )
    client = get_client(Platform.LINKEDIN)
    comments, pages = every_comment(client, account, urn)
    expected = _expected(urn)
    tops = [c for c in expected if not c["parentId"]]
    assert pages == len(tops)  # one first-level comment a page, with its replies
    urns = {c["id"]: sim.comment_urn(c) for c in expected}
    assert urns == {c["id"]: sim.platform_comment_id(c["id"], c["parentId"]) for c in expected}
    found = {c.platform_comment_id: c for c in comments}
    assert sorted(found) == sorted(urns.values())
    for doc in expected:
        comment = found[urns[doc["id"]]]
        assert comment.platform_post_id == urn and comment.text == doc["text"]
        assert comment.parent_id == (urns[doc["parentId"]] if doc["parentId"] else "")
        assert comment.author.id == f"urn:li:person:{doc['author'].id}" and comment.author.name == ""
        assert comment.like_count == doc["likeCount"] and not comment.from_account and not comment.hidden
        assert comment.permalink.startswith(
            f"{settings.PUBLIC_BASE_URL}/sandbox/linkedin/feed/update/{urn}/?commentUrn="
        )
    for top in tops:
        assert found[urns[top["id"]]].reply_count == sum(1 for c in expected if c["parentId"] == top["id"])
    reply_reads = [c for c in sim_requests(sandbox, SLUG, "urn:li:comment:") if c["method"] == "GET"]
    assert len(reply_reads) >= sum(1 for c in expected if c["parentId"])  # page size 1: a read per reply


@override_settings(SANDBOX_AUDIENCE_PACE_SECONDS=600.0)
def test_since_keeps_the_newer_comments(sandbox: str, account: Credentials) -> None:
    urn = _publish(account, "Older post")
    created = backdate(SLUG, "post", urn, "created", hours=10)
    expected = audience.expected(SLUG, urn, created)
    cut = len(expected) // 2
    since = dt.datetime.fromtimestamp(created + 600 * cut + 1, dt.UTC)
    wanted = sorted(sim.comment_urn(c) for c in expected[cut:])
    assert sorted(_comments(account, urn, since=since)) == wanted


def test_a_reply_goes_under_the_first_level_comment(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.LINKEDIN)
    urn = _with_comments(account, 1, "Replies")
    top = sim.comment_urn(next(c for c in _expected(urn) if not c["parentId"]))
    first = client.reply_comment(account, reply_request("li-r1", "Thanks!", urn, top), {})
    assert first.platform_post_id.startswith(f"urn:li:comment:({urn},")
    nested = client.reply_comment(account, reply_request("li-r2", "And also", urn, first.platform_post_id), {})
    comments = _comments(account, urn)
    mine = comments[first.platform_post_id]
    assert mine.from_account and mine.parent_id == top and mine.author.id == f"urn:li:person:{account.external_id}"
    assert comments[nested.platform_post_id].parent_id == top  # one level: under the first-level comment
    created = [c for c in sim_requests(sandbox, SLUG, "/comments") if c.get("replyTo") and c["status"] == 201]
    assert [c["body"]["parentComment"] for c in created] == [top, top]
    assert all(c["body"]["object"] == urn for c in created)


def test_a_reply_to_a_comment_that_is_not_there_sends_nothing(sandbox: str, account: Credentials) -> None:
    urn = _publish(account, "Quiet post")
    with pytest.raises(Permanent):
        get_client(Platform.LINKEDIN).reply_comment(
            account, reply_request("li-x", "Hello?", urn, f"urn:li:comment:({urn},7000000000000009900)"), {}
        )
    assert [c for c in sim_requests(sandbox, SLUG, "/comments") if c["method"] == "POST"] == []


def test_delete_own_comment_only(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.LINKEDIN)
    urn = _with_comments(account, 1, "Delete")
    top = sim.comment_urn(_expected(urn)[0])
    reply = client.reply_comment(account, reply_request("li-del", "Oops", urn, top), {})
    client.delete_comment(account, reply.platform_post_id)
    assert reply.platform_post_id not in _comments(account, urn)
    client.delete_comment(account, reply.platform_post_id)  # gone already: deleted
    with pytest.raises(Permanent) as others:
        client.delete_comment(account, top)
    assert others.value.error_code == ErrorCode.PERMISSION_MISSING
    assert top in _comments(account, urn)


def test_like_with_a_reaction_and_no_hiding(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.LINKEDIN)
    urn = _with_comments(account, 1, "Like")
    doc = _expected(urn)[0]
    target = sim.comment_urn(doc)
    client.like_comment(account, target)
    client.like_comment(account, target)
    assert _comments(account, urn)[target].like_count == doc["likeCount"] + 1
    reactions = [c for c in sim_requests(sandbox, SLUG, "/rest/reactions") if c["status"] == 201]
    assert [(c["reaction"], c["remoteId"]) for c in reactions] == [("LIKE", target)] * 2
    with pytest.raises(NotSupported):
        client.set_comment_hidden(account, target, True)


def test_a_post_that_is_gone_has_no_comments(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.LINKEDIN)
    urn = _publish(account, "Soon gone")
    client.delete(account, urn)
    page = client.list_comments(account, urn)
    assert page.comments == () and page.cursor == ""


def _arm(sandbox: str, kind: str, path: str, **extra: Any) -> None:
    body = {"kind": kind, "path": path, **extra}
    assert requests.post(f"{sandbox}/_control/{SLUG}/faults", json=body, timeout=10).status_code == 201


def test_errors_are_classified(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.LINKEDIN)
    urn = _with_comments(account, 1, "Errors")
    target = sim.comment_urn(_expected(urn)[0])
    _arm(sandbox, "rate_limited", "/comments")
    with pytest.raises(RateLimited) as limited:
        client.list_comments(account, urn)
    assert limited.value.retry_at is not None
    _arm(sandbox, "server_error", "/rest/reactions")
    with pytest.raises(Transient):
        client.like_comment(account, target)
    _arm(sandbox, "timeout", "/comments", method="POST", seconds=2)
    slow = get_client(Platform.LINKEDIN)
    slow.timeout = 0.5
    with pytest.raises(UnknownOutcome):
        slow.reply_comment(account, reply_request("li-lost", "Sent?", urn, target), {})
    requests.post(f"{sandbox}/_control/{SLUG}/accounts/{account.external_id}/revoke", json={}, timeout=10)
    with pytest.raises(AuthError):
        client.list_comments(account, urn)
