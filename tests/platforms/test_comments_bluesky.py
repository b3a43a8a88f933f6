"""BLUESKY engagement over real HTTP against the simulated PDS: a post's reply tree read with
getPostThread (nesting, ``since``), a reply record that joins it (idempotent on its key, also after
an unknown outcome), hiding through the post's threadgate, deleting the account's own reply (a
gone one passes; another account's is refused), liking, errors classified, and the atproto SDK
reading and answering the same thread."""

from __future__ import annotations

import datetime as dt
import html
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
    QuotaExhausted,
    RateLimited,
    RemoteComment,
    Transient,
    UnknownOutcome,
)
from platforms.registry import get_client
from platforms.sandbox import audience
from platforms.sandbox import bluesky as sim
from platforms.sandbox.store import SandboxStore
from tests.platforms.comment_helpers import backdate, every_comment, post_with_comments, reply_request
from tests.platforms.conftest import sim_requests

SLUG = "bluesky"


@pytest.fixture
def account(connect_one: Any) -> Credentials:
    return connect_one(Platform.BLUESKY).credentials


def _publish(creds: Credentials, text: str) -> str:
    result = get_client(Platform.BLUESKY).publish(
        creds, PublishRequest(target_id=text, content_type="TEXT", text=text), {}
    )
    return str(result.platform_post_id)


def _post(uri: str) -> dict[str, Any]:
    did, _, rkey = uri.removeprefix("at://").partition("/app.bsky.feed.post/")
    post = SandboxStore(SLUG).get(f"posts:{did}", rkey)
    assert post is not None
    return post


def _expected(uri: str) -> list[dict[str, Any]]:
    return audience.expected(SLUG, uri, _post(uri)["indexed"])


def _comments(creds: Credentials, uri: str, **kwargs: Any) -> dict[str, RemoteComment]:
    comments, pages = every_comment(get_client(Platform.BLUESKY), creds, uri, **kwargs)
    assert pages == 1  # a thread has no cursor
    return {c.platform_comment_id: c for c in comments}


def _with_comments(creds: Credentials, at_least: int, name: str) -> str:
    return post_with_comments(lambda n: _publish(creds, f"{name} {n}"), _expected, at_least=at_least)


def _uris(uri: str) -> dict[str, str]:
    """The at:// uri of each audience reply under the post, by audience id."""
    return {c["id"]: sim.comment_uri(c) for c in audience.thread(SandboxStore(SLUG), SLUG, uri, _post(uri)["indexed"])}


def test_the_reply_tree_is_read_with_its_nesting(sandbox: str, account: Credentials) -> None:
    uri = _with_comments(account, 3, "Tree")
    comments = _comments(account, uri)
    expected = _expected(uri)
    uris = _uris(uri)
    assert uris == {c["id"]: sim.platform_comment_id(c["id"], c["parentId"]) for c in expected}
    assert sorted(comments) == sorted(uris.values())
    for doc in expected:
        found = comments[uris[doc["id"]]]
        assert found.platform_post_id == uri and found.text == doc["text"]
        assert found.parent_id == (uris[doc["parentId"]] if doc["parentId"] else "")
        assert found.author.name == doc["author"].name
        assert found.author.handle == f"{doc['author'].handle}.bsky.social"
        assert found.author.id.startswith("did:plc:")
        assert found.like_count == doc["likeCount"] and not found.hidden and not found.from_account
        page = requests.get(
            found.permalink.replace(settings.PUBLIC_BASE_URL, sandbox.removesuffix("/sandbox")), timeout=10
        )
        assert page.status_code == 200 and html.escape(doc["text"]) in page.text
        assert found.permalink.endswith(
            f"/profile/{found.author.handle}/post/{found.platform_comment_id.rsplit('/', 1)[-1]}"
        )
    for parent in {c.parent_id for c in comments.values() if c.parent_id}:
        assert comments[parent].reply_count == sum(1 for c in comments.values() if c.parent_id == parent)


@override_settings(SANDBOX_AUDIENCE_PACE_SECONDS=600.0)
def test_since_keeps_the_newer_replies(sandbox: str, account: Credentials) -> None:
    uri = _publish(account, "Older thread")
    did, _, rkey = uri.removeprefix("at://").partition("/app.bsky.feed.post/")
    created = backdate(SLUG, f"posts:{did}", rkey, "indexed", hours=10)
    expected = audience.expected(SLUG, uri, created)
    cut = len(expected) // 2
    since = dt.datetime.fromtimestamp(created + 600 * cut + 1, dt.UTC)
    uris = _uris(uri)
    assert sorted(_comments(account, uri, since=since)) == sorted(uris[c["id"]] for c in expected[cut:])


def test_a_reply_joins_the_thread_once_per_key(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.BLUESKY)
    uri = _with_comments(account, 1, "Replies")
    top = _uris(uri)[next(c["id"] for c in _expected(uri) if not c["parentId"])]
    _comments(account, uri)  # the client learns the reply's uri by reading the thread
    first = client.reply_comment(account, reply_request("bs-r1", "Thank you!", uri, top), {})
    again = client.reply_comment(account, reply_request("bs-r1", "Thank you!", uri, top), {})
    assert first.platform_post_id == again.platform_post_id and first.cid
    nested = client.reply_comment(account, reply_request("bs-r2", "And more", uri, first.platform_post_id), {})
    comments = _comments(account, uri)
    mine = comments[first.platform_post_id]
    assert mine.from_account and mine.parent_id == top and mine.author.id == account.external_id
    assert comments[nested.platform_post_id].parent_id == first.platform_post_id
    created = [c for c in sim_requests(sandbox, SLUG, "createRecord") if c["status"] == 200]
    replies = [c for c in created if c.get("replyTo")]
    assert len(replies) == 2  # the repeat was refused by the record key, not created again
    assert replies[0]["replyTo"]["root"]["uri"] == uri and replies[0]["replyTo"]["parent"]["uri"] == top


def test_a_reply_whose_answer_was_lost_is_found_again(sandbox: str, account: Credentials) -> None:
    uri = _with_comments(account, 1, "Lost answer")
    top = _uris(uri)[_expected(uri)[0]["id"]]
    _comments(account, uri)
    _arm(sandbox, "timeout", "createRecord", seconds=2)
    slow = get_client(Platform.BLUESKY)
    slow.timeout = 0.5
    request = reply_request("bs-lost", "Did this arrive?", uri, top)
    with pytest.raises(UnknownOutcome):
        slow.reply_comment(account, request, {})
    again = get_client(Platform.BLUESKY).reply_comment(account, request, {})
    mine = [c for c in _comments(account, uri).values() if c.from_account]
    assert [c.platform_comment_id for c in mine] == [again.platform_post_id]


def test_hide_writes_the_threadgate_and_keeps_its_rules(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.BLUESKY)
    uri = _with_comments(account, 2, "Hide")
    rkey = uri.rsplit("/", 1)[-1]
    rule = {"$type": "app.bsky.feed.threadgate#followerRule"}
    gate = {"$type": "app.bsky.feed.threadgate", "post": uri, "createdAt": "2025-01-01T00:00:00.000Z", "allow": [rule]}
    answer = requests.post(
        f"{sandbox}/bluesky/xrpc/com.atproto.repo.putRecord",
        json={"repo": account.external_id, "collection": "app.bsky.feed.threadgate", "rkey": rkey, "record": gate},
        headers={"Authorization": f"Bearer {account.access_token}"},
        timeout=10,
    )
    assert answer.status_code == 200
    first, second = sorted(_comments(account, uri))[:2]
    client.set_comment_hidden(account, first, True)
    client.set_comment_hidden(account, second, True)
    client.set_comment_hidden(account, first, True)  # already hidden: nothing written
    comments = _comments(account, uri)
    assert comments[first].hidden and comments[second].hidden
    client.set_comment_hidden(account, first, False)
    comments = _comments(account, uri)
    assert not comments[first].hidden and comments[second].hidden
    stored = SandboxStore(SLUG).get(f"threadgates:{account.external_id}", rkey)
    assert stored is not None and stored["value"]["allow"] == [rule] and stored["value"]["hiddenReplies"] == [second]
    writes = [c for c in sim_requests(sandbox, SLUG, "putRecord") if c["status"] == 200]
    assert len(writes) == 1 + 3  # the rule, two hides and one show


def test_a_stale_threadgate_write_is_refused(sandbox: str, account: Credentials) -> None:
    uri = _publish(account, "Swap")
    rkey = uri.rsplit("/", 1)[-1]
    record = {"$type": "app.bsky.feed.threadgate", "post": uri, "createdAt": "2025-01-01T00:00:00.000Z"}
    body = {"repo": account.external_id, "collection": "app.bsky.feed.threadgate", "rkey": rkey, "record": record}
    headers = {"Authorization": f"Bearer {account.access_token}"}
    url = f"{sandbox}/bluesky/xrpc/com.atproto.repo.putRecord"
    assert requests.post(url, json=body, headers=headers, timeout=10).status_code == 200
    stale = requests.post(url, json={**body, "swapRecord": "bafyreistale"}, headers=headers, timeout=10)
    assert stale.status_code == 400 and stale.json()["error"] == "InvalidSwap"


def test_delete_own_reply_only(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.BLUESKY)
    uri = _with_comments(account, 1, "Delete")
    top = _uris(uri)[_expected(uri)[0]["id"]]
    _comments(account, uri)
    reply = client.reply_comment(account, reply_request("bs-del", "Posted by mistake", uri, top), {})
    client.delete_comment(account, reply.platform_post_id)
    assert reply.platform_post_id not in _comments(account, uri)
    client.delete_comment(account, reply.platform_post_id)  # gone already: deleted
    before = len(sim_requests(sandbox, SLUG, "deleteRecord"))
    with pytest.raises(Permanent) as others:
        client.delete_comment(account, top)
    assert others.value.error_code == ErrorCode.PERMISSION_MISSING
    assert len(sim_requests(sandbox, SLUG, "deleteRecord")) == before  # nothing was sent


def test_like_once(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.BLUESKY)
    uri = _with_comments(account, 1, "Like")
    doc = _expected(uri)[0]
    target = sim.platform_comment_id(doc["id"])  # known before any listing showed it
    client.like_comment(account, target)
    client.like_comment(account, target)  # the viewer state says liked: nothing written
    assert _comments(account, uri)[target].like_count == doc["likeCount"] + 1
    likes = [c for c in sim_requests(sandbox, SLUG, "createRecord") if c.get("like") and c["status"] == 200]
    assert [c["remoteId"] for c in likes] == [target]


def test_a_post_that_is_gone_has_no_replies(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.BLUESKY)
    uri = _publish(account, "Soon gone")
    client.delete(account, uri)
    assert client.list_comments(account, uri).comments == ()


def _arm(sandbox: str, kind: str, path: str, **extra: Any) -> None:
    body = {"kind": kind, "path": path, **extra}
    assert requests.post(f"{sandbox}/_control/{SLUG}/faults", json=body, timeout=10).status_code == 201


def test_errors_are_classified(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.BLUESKY)
    uri = _with_comments(account, 1, "Errors")
    target = _uris(uri)[_expected(uri)[0]["id"]]
    _comments(account, uri)
    _arm(sandbox, "rate_limited", "getPostThread")
    with pytest.raises(RateLimited) as limited:
        client.list_comments(account, uri)
    assert limited.value.retry_at is not None
    _arm(sandbox, "quota_exhausted", "putRecord")
    with pytest.raises(QuotaExhausted):
        client.set_comment_hidden(account, target, True)
    _arm(sandbox, "server_error", "createRecord")
    with pytest.raises(Transient):
        client.like_comment(account, target)
    requests.post(f"{sandbox}/_control/{SLUG}/accounts/{account.external_id}/revoke", json={}, timeout=10)
    with pytest.raises(AuthError):
        client.list_comments(account, uri)


def test_the_atproto_sdk_reads_the_thread_replies_and_likes(sandbox: str) -> None:
    from atproto import Client, models

    sdk = Client(base_url=f"{sandbox}/bluesky/xrpc")
    sdk.login("sdk-thread.bsky.social", "sandbox")
    post = None
    for number in range(30):
        post = sdk.send_post(f"Thread for the SDK {number}")
        if _expected(post.uri):
            break
    assert post is not None
    thread = sdk.get_post_thread(post.uri, depth=10).thread
    assert isinstance(thread, models.AppBskyFeedDefs.ThreadViewPost) and thread.replies
    first = thread.replies[0]
    assert isinstance(first, models.AppBskyFeedDefs.ThreadViewPost)
    assert first.post.record.reply.root.uri == post.uri
    root = models.create_strong_ref(post)
    parent = models.create_strong_ref(first.post)
    answer = sdk.send_post("Thanks from the SDK", reply_to=models.AppBskyFeedPost.ReplyRef(root=root, parent=parent))
    assert sdk.like(first.post.uri, first.post.cid)
    again = sdk.get_post_thread(post.uri, depth=10).thread
    replied = next(r for r in again.replies if r.post.uri == first.post.uri)
    assert replied.post.like_count == first.post.like_count + 1 and replied.post.viewer.like
    assert answer.uri in [r.post.uri for r in replied.replies]
