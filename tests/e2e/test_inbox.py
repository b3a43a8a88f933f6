"""The inbox end to end with real web, sandbox, worker and beat processes (issue 33's "Done when"): a
post published on eleven platforms (a video; Google Business, which takes none, is its review feed),
the simulators' audiences comment, ``POST /comments/sync`` and beat read it all, each comment arrives
in ``comment.received`` once whatever the number of syncs, a reply goes out once per request even
when the worker is killed with SIGKILL mid-reply (Facebook: looked up among the post's comments;
Mastodon: sent again under its Idempotency-Key, which the platform deduplicates), a hide and a delete
are reflected on the simulators, and the inbox's filters return what they promise.

The kill lands mid-call by construction: a ``timeout`` fault holds the simulator's answer after it
acted; the test waits until the call is logged and the action is SENDING with its start recorded."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from platforms.sandbox import audience
from posts.payloads import CONNECTION_FIELDS
from tests.e2e.harness import E2EStack, WebhookReceiver, start_stack, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HELD_SECONDS = 20.0
ENV = {
    "PLATFORM_HTTP_TIMEOUT": str(HELD_SECONDS),  # the worker is still waiting when it is killed
    "PUBLISH_LEASE_SECONDS": str(HELD_SECONDS + 5),
    "PUBLISH_LOST_TASK_SECONDS": "5",
    "PUBLISH_SWEEP_INTERVAL_SECONDS": "2",
    "COMMENT_SYNC_INTERVAL_SECONDS": "2",
}
VIDEO = [
    "FACEBOOK",
    "INSTAGRAM",
    "THREADS",
    "TIKTOK",
    "TWITTER",
    "BLUESKY",
    "LINKEDIN",
    "PINTEREST",
    "YOUTUBE",
    "MASTODON",
    "TELEGRAM",
]
READ = ["FACEBOOK", "INSTAGRAM", "THREADS", "TWITTER", "BLUESKY", "LINKEDIN", "YOUTUBE", "MASTODON"]
REPLY_TEXT = {"FACEBOOK": "Thanks! We DM'd you the details", "MASTODON": "Thanks! It ships on Monday"}


@pytest.fixture(scope="module")
def stack() -> Iterator[E2EStack]:
    with start_stack(**ENV) as started:
        yield started


def _upload(stack: E2EStack, name: str, mime: str) -> str:
    answer = stack.api("POST", "/upload-urls", json={"files": [{"fileName": name, "mimeType": mime}]})
    assert answer.status_code in (200, 201), answer.text
    item = answer.json()["urls"][0]
    put = requests.put(item["uploadUrl"], data=(FIXTURES / name).read_bytes(), headers={"Content-Type": mime})
    assert put.status_code in (200, 201, 204), put.text
    return str(item["publicUrl"])


def _publish(stack: E2EStack) -> dict[str, dict[str, Any]]:
    """The video post on eleven platforms, published; its entries by platform."""
    accounts = {platform: stack.connect_account(platform) for platform in VIDEO}
    stack.connect_account("GOOGLE_BUSINESS")
    video = _upload(stack, "sample-reel.mp4", "video/mp4")
    boards = stack.api("GET", f"/social-accounts/{accounts['PINTEREST']['id']}/pinterest-boards").json()
    board_id = (boards["boards"] if isinstance(boards, dict) else boards)[0]["id"]
    body = {
        "timezone": "UTC",
        "platforms": VIDEO,
        **{CONNECTION_FIELDS[p]: [accounts[p]["id"]] for p in VIDEO},
        "contentType": "VIDEO",
        "text": "Inbox e2e: our spring collection",
        "mediaUrls": [video],
        "pinterestConfigs": [{"connectionId": accounts["PINTEREST"]["id"], "boardId": board_id, "title": "E2E"}],
        "youtubeConfigs": [
            {"connectionId": accounts["YOUTUBE"]["id"], "videoTitle": "E2E", "privacyStatus": "private"}
        ],
        "instagramConfigs": [{"connectionId": accounts["INSTAGRAM"]["id"], "postType": "REEL"}],
        "tiktokConfigs": [{"connectionId": accounts["TIKTOK"]["id"], "privacyLevel": "SELF_ONLY"}],
    }
    created = stack.api("POST", "/social-posts", json=body)
    assert created.status_code == 201, created.text
    post_id = created.json()["postId"]

    def published() -> dict[str, Any] | None:
        post = stack.api("GET", f"/social-posts/{post_id}").json()
        return post if post["status"] == "COMPLETED" else None

    post = wait_for(published, timeout=180, what="the post on eleven platforms")
    return {entry["platform"]: {**entry, "postId": post_id} for entry in post["platforms"]}


def _expected(entries: dict[str, dict[str, Any]]) -> Counter[tuple[str, str, bool]]:
    """What the audiences wrote under the post (no pace: all at once), as (platform, text, a reply)
    (a platform's comment ids may depend on the simulator's own state, which another process keeps)."""
    found: Counter[tuple[str, str, bool]] = Counter()
    for platform in READ:
        remote = entries[platform]["platformPostId"]
        for comment in audience.expected(platform.lower(), remote, 0.0, now=10**12):
            found[(platform, comment["text"], bool(comment["parentId"]))] += 1
    return found


def _written(listed: list[dict[str, Any]]) -> Counter[tuple[str, str, bool]]:
    return Counter(
        (c["platform"], c["text"], bool(c["parentId"]))
        for c in listed
        if c["platform"] in READ and not c["fromAccount"]
    )


def _inbox(stack: E2EStack, **params: Any) -> list[dict[str, Any]]:
    """Every comment the inbox lists for these filters, following the cursor."""
    found: list[dict[str, Any]] = []
    after = None
    while True:
        query = {"limit": 100, **params, **({"after": after} if after else {})}
        page = stack.api("GET", "/comments", params=query).json()
        found += page["comments"]
        if not page["hasMore"]:
            return found
        after = page["nextCursor"]


def _resync(stack: E2EStack, *, full: bool = False) -> None:
    """Make every source due (and its next pass a full one), then wait until beat and the worker
    have read them all again."""
    before = stack.sql("SELECT max(last_synced_at) FROM engagement_commentsource")[0][0]
    extra = ", full_synced_at = NULL" if full else ""
    stack.sql(f"UPDATE engagement_commentsource SET next_due_at = now(){extra} RETURNING id")  # noqa: S608 (constant)

    def read_again() -> bool:
        [(waiting, oldest)] = stack.sql(
            "SELECT count(*) FILTER (WHERE next_due_at <= now()), min(last_synced_at) FROM engagement_commentsource"
        )
        return waiting == 0 and oldest is not None and oldest > before

    wait_for(read_again, timeout=120, interval=0.5, what="every source read again")


def _action(stack: E2EStack, action_id: str) -> tuple[str, str]:
    [(status, sending)] = stack.sql("SELECT status, sending FROM engagement_commentaction WHERE id = %s", (action_id,))
    return str(status), str(sending)


def _hold_reply(stack: E2EStack, platform: str, path: str) -> None:
    fault = requests.post(
        f"{stack.sandbox_url}/sandbox/_control/{platform.lower()}/faults",
        json={"kind": "timeout", "path": path, "method": "POST", "seconds": HELD_SECONDS},
        timeout=30,
    )
    assert fault.status_code == 201, fault.text


def test_the_inbox_end_to_end(stack: E2EStack) -> None:
    receiver = WebhookReceiver()
    try:
        hook = stack.api(
            "POST",
            "/webhooks",
            json={
                "url": receiver.url,
                "events": ["comment.received", "comment.replied", "comment.hidden", "comment.deleted"],
            },
        )
        assert hook.status_code == 201, hook.text
        entries = _publish(stack)
        expected = _expected(entries)

        # --- the audiences' comments, read on demand and again by beat ---------------------------
        sync = stack.api("POST", "/comments/sync", json={})
        assert (sync.status_code, sync.json()["queued"]) == (202, True)

        def all_there() -> list[dict[str, Any]] | None:
            listed = _inbox(stack)
            reviews = [c for c in listed if c["platform"] == "GOOGLE_BUSINESS"]
            return listed if _written(listed) == expected and reviews else None

        listed = wait_for(all_there, timeout=180, interval=1.0, what="every comment in the inbox")
        assert {c["platform"] for c in listed} == {*READ, "GOOGLE_BUSINESS"}  # none from TikTok, Pinterest, Telegram
        _resync(stack)
        _resync(stack, full=True)

        def named_once() -> dict[str, int] | None:
            counts: dict[str, int] = {}
            seen_events: set[str] = set()
            for delivery in receiver.events("comment.received"):
                envelope = delivery.envelope
                if envelope["id"] in seen_events:
                    continue  # a retried delivery of the same event
                seen_events.add(envelope["id"])
                for comment in envelope["data"]["comments"]:
                    counts[comment["id"]] = counts.get(comment["id"], 0) + 1
            return counts if set(counts) == {c["id"] for c in listed} else None

        counts = wait_for(named_once, timeout=60, what="comment.received for every comment")
        assert set(counts.values()) == {1}, {k: v for k, v in counts.items() if v != 1}

        # --- a reply on Facebook and one on Mastodon, the worker killed while both are held -------
        by_platform = {p: [c for c in listed if c["platform"] == p and not c["parentId"]] for p in READ}
        targets = {p: by_platform[p][0] for p in ("FACEBOOK", "MASTODON")}
        _hold_reply(stack, "FACEBOOK", f"/{targets['FACEBOOK']['platformCommentId']}/comments")
        _hold_reply(stack, "MASTODON", "/api/v1/statuses")
        actions = {}
        for platform, comment in targets.items():
            answer = stack.api("POST", f"/comments/{comment['id']}/replies", json={"text": REPLY_TEXT[platform]})
            assert answer.status_code == 202, answer.text
            actions[platform] = answer.json()["id"]

        def both_held() -> bool:
            return all(_action(stack, a)[0] == "SENDING" and _action(stack, a)[1] for a in actions.values()) and all(
                any(REPLY_TEXT[p][:20] in json.dumps(e) for e in stack.sandbox_requests(p)) for p in actions
            )

        wait_for(both_held, timeout=60, interval=0.2, what="both replies held mid-call")
        stack.kill_worker()
        stack.start_worker()
        wait_for(
            lambda: all(_action(stack, a)[0] == "DONE" for a in actions.values()),
            timeout=120,
            interval=0.5,
            what="both replies done after the kill",
        )
        _resync(stack, full=True)
        for platform, comment in targets.items():
            mine = [c for c in _inbox(stack, postId=entries[platform]["postId"], q=REPLY_TEXT[platform])]
            assert [(c["fromAccount"], c["parentId"]) for c in mine] == [(True, comment["id"])], (platform, mine)
            detail = stack.api("GET", f"/comments/{comment['id']}").json()
            assert detail["answered"] is True
            assert [(a["status"], a["replyId"]) for a in detail["actions"]] == [("DONE", mine[0]["id"])]
        replied = {d.envelope["id"]: d.envelope for d in receiver.events("comment.replied")}
        assert sorted(e["data"]["action"]["id"] for e in replied.values()) == sorted(actions.values())

        # --- a hide on Facebook, a delete of another's comment on Instagram -----------------------
        hidden_target = by_platform["FACEBOOK"][1] if len(by_platform["FACEBOOK"]) > 1 else by_platform["FACEBOOK"][0]
        deleted_target = by_platform["INSTAGRAM"][0]
        hide = stack.api("POST", f"/comments/{hidden_target['id']}/hide", json={}).json()
        delete = stack.api("DELETE", f"/comments/{deleted_target['id']}").json()
        wait_for(
            lambda: _action(stack, hide["id"])[0] == "DONE" and _action(stack, delete["id"])[0] == "DONE",
            timeout=60,
            what="the hide and the delete",
        )
        _resync(stack, full=True)  # what the simulators show now
        assert hidden_target["id"] in {c["id"] for c in _inbox(stack, hidden="true")}
        gone = stack.api("GET", f"/comments/{deleted_target['id']}").json()
        assert gone["deletedAt"] is not None
        assert deleted_target["id"] not in {c["id"] for c in _inbox(stack)}
        instagram = requests.get(f"{stack.sandbox_url}/sandbox/_control/instagram/requests", timeout=30).json()
        assert [
            e
            for e in instagram["requests"]
            if e.get("delete") and e.get("remoteId") == deleted_target["platformCommentId"]
        ]

        # --- the filters ------------------------------------------------------------------------
        unanswered = {c["id"] for c in _inbox(stack, unanswered="true")}
        assert not unanswered & {c["id"] for c in targets.values()}
        assert all(not c["fromAccount"] and not c["answered"] for c in _inbox(stack, unanswered="true"))
        assert {c["platform"] for c in _inbox(stack, platforms="MASTODON")} == {"MASTODON"}
        mastodon_account = entries["MASTODON"]["connectionId"]
        assert {c["accountId"] for c in _inbox(stack, accountId=mastodon_account)} == {mastodon_account}
        assert {c["postId"] for c in _inbox(stack, postId=entries["FACEBOOK"]["postId"])} == {
            entries["FACEBOOK"]["postId"]
        }
        reviews = _inbox(stack, platforms="GOOGLE_BUSINESS")
        assert reviews and all(1 <= c["rating"] <= 5 and c["postId"] is None for c in reviews)
    finally:
        receiver.close()
