"""Thread items as replies: each client sends its platform's reply parameter (the wire body checked
with ``responses``), the simulators accept and record it, refuse a parent that does not exist, and
a request without ``reply_to`` sends exactly the body it sent before."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
import responses

from platforms.base import Credentials, Permanent, Platform, PostRef, PublishRequest, ReplyTo, Transient
from platforms.registry import get_client
from tests.platforms.conftest import drive, publish_calls, sim_requests

FOUR = [Platform.TWITTER, Platform.BLUESKY, Platform.THREADS, Platform.MASTODON]


def _request(text: str, key: str, reply_to: ReplyTo | None = None) -> PublishRequest:
    return PublishRequest(target_id=key, content_type="TEXT", text=text, reply_to=reply_to)


def _reply_to(root: Any, parent: Any) -> ReplyTo:
    return ReplyTo(root=PostRef(root.platform_post_id, root.cid), parent=PostRef(parent.platform_post_id, parent.cid))


@pytest.mark.parametrize("platform", FOUR)
def test_a_reply_names_its_parent_and_the_simulator_records_it(
    sandbox: str, connect_one: Any, platform: Platform
) -> None:
    creds: Credentials = connect_one(platform).credentials
    client = get_client(platform)
    first = drive(client, creds, _request("the first", "pt_reply_test"))[-1]
    second = drive(client, creds, _request("the second", "pt_reply_test.1", _reply_to(first, first)))[-1]
    third = drive(client, creds, _request("the third", "pt_reply_test.2", _reply_to(first, second)))[-1]
    ids = [r.platform_post_id for r in (first, second, third)]
    assert len(set(ids)) == 3
    assert [e["remoteId"] for e in publish_calls(sandbox, platform.slug)] == ids
    if platform == Platform.BLUESKY:
        assert all(r.cid for r in (first, second, third))
        replies = [e.get("replyTo") for e in publish_calls(sandbox, platform.slug)]
        assert replies[0] is None
        assert replies[1] == {"root": {"uri": ids[0], "cid": first.cid}, "parent": {"uri": ids[0], "cid": first.cid}}
        assert replies[2] == {"root": {"uri": ids[0], "cid": first.cid}, "parent": {"uri": ids[1], "cid": second.cid}}
    elif platform == Platform.THREADS:
        containers = [
            e for e in sim_requests(sandbox, "threads") if e["method"] == "POST" and e["path"].endswith("/threads")
        ]
        assert [e.get("replyTo") for e in containers] == [None, ids[0], ids[1]]
    else:
        assert [e.get("inReplyTo") for e in publish_calls(sandbox, platform.slug)] == [None, ids[0], ids[1]]


@pytest.mark.parametrize("platform", FOUR)
def test_a_reply_to_a_post_that_does_not_exist_is_refused(sandbox: str, connect_one: Any, platform: Platform) -> None:
    creds: Credentials = connect_one(platform).credentials
    client = get_client(platform)
    missing = {
        Platform.TWITTER: PostRef("1900000000000000001"),
        Platform.BLUESKY: PostRef(f"at://{creds.external_id}/app.bsky.feed.post/3kabcdefghij2", "bafyreinothing"),
        Platform.THREADS: PostRef("18000000000000000"),
        Platform.MASTODON: PostRef("999999999"),
    }[platform]
    with pytest.raises(Permanent):
        drive(client, creds, _request("an orphan", "pt_orphan.1", ReplyTo(root=missing, parent=missing)))
    assert publish_calls(sandbox, platform.slug) == [] or all(
        int(e["status"]) >= 400 for e in publish_calls(sandbox, platform.slug)
    )


CREDS = Credentials(access_token="tok", external_id="42", extra={"username": "me", "handle": "me.test"})
PARENT = ReplyTo(root=PostRef("100", "cid-root"), parent=PostRef("200", "cid-parent"))


@responses.activate
def test_x_sends_reply_in_reply_to_tweet_id_only_for_a_reply() -> None:
    client = get_client(Platform.TWITTER)
    responses.add(responses.POST, f"{client.base_url}/2/tweets", json={"data": {"id": "300", "text": "x"}}, status=201)
    client.publish(CREDS, _request("plain", "pt_1"), {})
    client.publish(CREDS, _request("reply", "pt_1.1", PARENT), {})
    bodies = [json.loads(call.request.body) for call in responses.calls]
    assert bodies == [{"text": "plain"}, {"text": "reply", "reply": {"in_reply_to_tweet_id": "200"}}]


@responses.activate
def test_mastodon_sends_in_reply_to_id_only_for_a_reply() -> None:
    client = get_client(Platform.MASTODON)
    status = {"id": "300", "url": "https://m.test/@me/300", "created_at": "2026-01-01T00:00:00.000Z"}
    responses.add(responses.POST, f"{client.base_url}/api/v1/statuses", json=status)
    client.publish(CREDS, _request("plain", "pt_1"), {})
    client.publish(CREDS, _request("reply", "pt_1.1", PARENT), {})
    bodies = [json.loads(call.request.body) for call in responses.calls]
    assert bodies == [
        {"status": "plain", "visibility": "public"},
        {"status": "reply", "visibility": "public", "in_reply_to_id": "200"},
    ]
    assert [call.request.headers["Idempotency-Key"] for call in responses.calls] == ["pt_1", "pt_1.1"]


@responses.activate
def test_bluesky_sends_the_reply_strong_refs_only_for_a_reply() -> None:
    client = get_client(Platform.BLUESKY)
    created = {"uri": "at://did:plc:me/app.bsky.feed.post/3kabc", "cid": "bafy-new"}
    responses.add(responses.POST, f"{client.base_url}/xrpc/com.atproto.repo.createRecord", json=created)
    plain = client.publish(CREDS, _request("plain", "pt_1"), {})
    client.publish(CREDS, _request("reply", "pt_1.1", PARENT), {})
    records = [json.loads(call.request.body)["record"] for call in responses.calls]
    assert "reply" not in records[0] and plain.cid == "bafy-new"
    assert records[1]["reply"] == {
        "root": {"uri": "100", "cid": "cid-root"},
        "parent": {"uri": "200", "cid": "cid-parent"},
    }


def test_a_fault_armed_on_a_body_holds_only_the_call_that_carries_it(sandbox: str, connect_one: Any) -> None:
    creds: Credentials = connect_one(Platform.MASTODON).credentials
    client = get_client(Platform.MASTODON)
    armed = requests.post(
        f"{sandbox}/_control/mastodon/faults",
        json={"kind": "server_error", "path": "/api/v1/statuses", "body": "item two"},
        timeout=10,
    )
    assert armed.status_code == 201 and armed.json()["body"] == "item two"
    first = client.publish(creds, _request("item one", "pt_body_fault"), {})
    assert first.done
    with pytest.raises(Transient):
        client.publish(creds, _request("item two", "pt_body_fault.1"), {})
    assert client.publish(creds, _request("item two", "pt_body_fault.1"), {}).done  # used up: once only
    assert [e.get("fault") for e in sim_requests(sandbox, "mastodon", "/api/v1/statuses")] == [
        None,
        "server_error",
        None,
    ]
