"""MASTODON engagement over real HTTP against the simulated server: a status's replies read from its
context (nesting, ``since``), a reply that joins the thread once per Idempotency-Key, deleting the
account's own reply (a gone one passes; another account's, which Mastodon answers 404 for too, is
refused), favouriting, no hiding, errors classified, and Mastodon.py on the same thread."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import requests

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
from platforms.sandbox import mastodon as sim
from platforms.sandbox.store import SandboxStore
from tests.platforms.comment_helpers import backdate, every_comment, post_with_comments, reply_request
from tests.platforms.conftest import sim_requests

SLUG = "mastodon"
REDIRECT = "https://client.example/callback"


@pytest.fixture
def account(connect_one: Any) -> Credentials:
    return connect_one(Platform.MASTODON).credentials


def _publish(creds: Credentials, text: str) -> str:
    result = get_client(Platform.MASTODON).publish(
        creds, PublishRequest(target_id=text, content_type="TEXT", text=text), {}
    )
    return str(result.platform_post_id)


def _status(creds: Credentials, status_id: str) -> dict[str, Any]:
    status = SandboxStore(SLUG).get(f"statuses:{creds.external_id}", status_id)
    assert status is not None
    return status


def _comments(creds: Credentials, post_id: str, **kwargs: Any) -> dict[str, RemoteComment]:
    comments, pages = every_comment(get_client(Platform.MASTODON), creds, post_id, **kwargs)
    assert pages == 1  # a context has no cursor
    return {c.platform_comment_id: c for c in comments}


def _with_comments(creds: Credentials, at_least: int, name: str) -> str:
    def expected(post_id: str) -> list[Any]:
        return audience.expected(SLUG, post_id, _status(creds, post_id)["created"])

    return post_with_comments(lambda n: _publish(creds, f"{name} {n}"), expected, at_least=at_least)


def _expected(creds: Credentials, post_id: str) -> list[dict[str, Any]]:
    return audience.expected(SLUG, post_id, _status(creds, post_id)["created"])


def test_the_context_gives_every_reply_with_its_nesting(sandbox: str, account: Credentials) -> None:
    post_id = _with_comments(account, 3, "Context")
    comments = _comments(account, post_id)
    expected = _expected(account, post_id)
    ids = {c["id"]: sim.comment_status_id(c) for c in expected}
    assert ids == {c["id"]: sim.platform_comment_id(c["id"], c["parentId"]) for c in expected}
    assert sorted(comments) == sorted(ids.values())
    for doc in expected:
        found = comments[ids[doc["id"]]]
        assert found.platform_post_id == post_id and found.text == doc["text"]
        assert found.parent_id == (ids[doc["parentId"]] if doc["parentId"] else "")
        assert found.author.name == doc["author"].name and found.author.handle == f"{doc['author'].handle}@fans.example"
        assert found.like_count == doc["likeCount"] and not found.from_account and not found.hidden
        assert found.permalink == f"https://fans.example/@{doc['author'].handle}/{found.platform_comment_id}"
    # depth first: every reply comes right after the comment it answers (or a sibling's branch)
    order = list(comments)
    assert all(order.index(c.parent_id) < order.index(c.platform_comment_id) for c in comments.values() if c.parent_id)
    for parent in {c.parent_id for c in comments.values() if c.parent_id}:
        assert comments[parent].reply_count == sum(1 for c in comments.values() if c.parent_id == parent)


def test_since_keeps_the_newer_replies(sandbox: str, account: Credentials, settings: Any) -> None:
    settings.SANDBOX_AUDIENCE_PACE_SECONDS = 600.0
    post_id = _publish(account, "Older status")
    created = backdate(SLUG, f"statuses:{account.external_id}", post_id, "created", hours=10)
    expected = audience.expected(SLUG, post_id, created)
    cut = len(expected) // 2
    since = dt.datetime.fromtimestamp(created + 600 * cut + 1, dt.UTC)
    wanted = sorted(sim.comment_status_id(c) for c in expected[cut:])
    assert sorted(_comments(account, post_id, since=since)) == wanted


def test_a_reply_joins_the_thread_once_per_key(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.MASTODON)
    post_id = _with_comments(account, 1, "Replies")
    top = sim.comment_status_id(next(c for c in _expected(account, post_id) if not c["parentId"]))
    first = client.reply_comment(account, reply_request("ms-r1", "Thanks!", post_id, top), {})
    again = client.reply_comment(account, reply_request("ms-r1", "Thanks!", post_id, top), {})
    assert first.platform_post_id == again.platform_post_id
    nested = client.reply_comment(account, reply_request("ms-r2", "More", post_id, first.platform_post_id), {})
    comments = _comments(account, post_id)
    mine = comments[first.platform_post_id]
    assert mine.from_account and mine.parent_id == top and mine.author.id == account.external_id
    assert comments[nested.platform_post_id].parent_id == first.platform_post_id
    calls = [c for c in sim_requests(sandbox, SLUG, "/api/v1/statuses") if c.get("inReplyTo") == top]
    assert [c.get("repeat", False) for c in calls] == [False, True]
    assert calls[0]["marker"] == "ms-r1"


def test_a_reply_to_a_status_that_does_not_exist_is_refused(sandbox: str, account: Credentials) -> None:
    post_id = _publish(account, "Alone")
    with pytest.raises(Permanent):
        get_client(Platform.MASTODON).reply_comment(account, reply_request("ms-x", "Hi", post_id, "999999"), {})


def test_delete_own_reply_only(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.MASTODON)
    post_id = _with_comments(account, 1, "Delete")
    top = sim.comment_status_id(_expected(account, post_id)[0])
    reply = client.reply_comment(account, reply_request("ms-del", "Wrong thread", post_id, top), {})
    client.delete_comment(account, reply.platform_post_id)
    assert reply.platform_post_id not in _comments(account, post_id)
    client.delete_comment(account, reply.platform_post_id)  # gone already: deleted
    with pytest.raises(Permanent) as others:
        client.delete_comment(account, top)
    assert others.value.error_code == ErrorCode.PERMISSION_MISSING
    assert top in _comments(account, post_id)


def test_favourite_once_and_no_hiding(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.MASTODON)
    post_id = _with_comments(account, 1, "Favourite")
    doc = _expected(account, post_id)[0]
    target = sim.comment_status_id(doc)
    client.like_comment(account, target)
    client.like_comment(account, target)
    assert _comments(account, post_id)[target].like_count == doc["likeCount"] + 1
    with pytest.raises(NotSupported):
        client.set_comment_hidden(account, target, True)


def test_a_status_that_is_gone_has_no_replies(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.MASTODON)
    post_id = _publish(account, "Soon gone")
    client.delete(account, post_id)
    assert client.list_comments(account, post_id).comments == ()


def _arm(sandbox: str, kind: str, path: str, **extra: Any) -> None:
    body = {"kind": kind, "path": path, **extra}
    assert requests.post(f"{sandbox}/_control/{SLUG}/faults", json=body, timeout=10).status_code == 201


def test_errors_are_classified(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.MASTODON)
    post_id = _with_comments(account, 1, "Errors")
    target = sim.comment_status_id(_expected(account, post_id)[0])
    _arm(sandbox, "rate_limited", "/context")
    with pytest.raises(RateLimited) as limited:
        client.list_comments(account, post_id)
    assert limited.value.retry_at is not None
    _arm(sandbox, "server_error", "/favourite")
    with pytest.raises(Transient):
        client.like_comment(account, target)
    _arm(sandbox, "timeout", "/api/v1/statuses", method="POST", seconds=2)
    slow = get_client(Platform.MASTODON)
    slow.timeout = 0.5
    request = reply_request("ms-lost", "Did it arrive?", post_id, target)
    with pytest.raises(UnknownOutcome):
        slow.reply_comment(account, request, {})
    again = client.reply_comment(account, request, {})  # the key finds the status the lost call made
    mine = [c.platform_comment_id for c in _comments(account, post_id).values() if c.from_account]
    assert mine == [again.platform_post_id]
    requests.post(f"{sandbox}/_control/{SLUG}/accounts/{account.external_id}/revoke", json={}, timeout=10)
    with pytest.raises(AuthError):
        client.list_comments(account, post_id)


def test_mastodon_py_reads_the_context_replies_and_favourites(sandbox: str) -> None:
    from urllib.parse import parse_qs, urlsplit

    from mastodon import Mastodon

    base = f"{sandbox}/mastodon"
    client_id, client_secret = Mastodon.create_app(
        "Crosspost comments check", scopes=["read", "write"], redirect_uris=REDIRECT, api_base_url=base
    )
    api = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=base, version_check_mode="none")
    authorize = api.auth_request_url(redirect_uris=REDIRECT, scopes=["read", "write"])
    code = parse_qs(urlsplit(requests.get(authorize, allow_redirects=False, timeout=10).headers["Location"]).query)
    api.log_in(code=code["code"][0], redirect_uri=REDIRECT, scopes=["read", "write"])
    me = api.account_verify_credentials()
    creds = Credentials(access_token=str(api.access_token), external_id=str(me.id))
    post_id = _with_comments(creds, 1, "SDK thread")
    context = api.status_context(post_id)
    first = context.descendants[0]
    assert str(first.in_reply_to_id) == post_id and first.account.acct.endswith("@fans.example")
    answer = api.status_reply(first, "Thanks from Mastodon.py", idempotency_key="sdk-reply-1")
    assert api.status_reply(first, "Thanks from Mastodon.py", idempotency_key="sdk-reply-1").id == answer.id
    assert api.status_favourite(first).favourited
    again = api.status_context(post_id).descendants
    replied = next(s for s in again if s.id == first.id)
    assert replied.favourites_count == first.favourites_count + 1
    assert any(s.id == answer.id and str(s.in_reply_to_id) == str(first.id) for s in again)
