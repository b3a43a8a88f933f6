"""A first comment end to end with real web, sandbox, worker and beat processes: the worker is killed
with SIGKILL while it waits for the platform's answer to the comment (which the platform has already
created), and the entry still ends with exactly one comment on the platform: on Mastodon the sweeper
sends it again under the same Idempotency-Key and the platform answers with the comment it created;
on LinkedIn, which has no such key, it is never sent again and ends FAILED ``unknown_outcome``. The
post itself is COMPLETED with ``post.published`` before the comment is even sent.

The kill lands mid-call by construction, not by timing: a ``timeout`` fault armed on the comment's
text makes the simulator create the comment and then hold its answer; the test waits until the
simulator's log shows the comment created and the entry's comment is still SENDING, then kills the
worker. The bounds below (the held answer, the client's timeout, the lease) only have to exceed how
long that wait-and-kill takes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.e2e.harness import E2EStack, start_stack, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

HELD_SECONDS = 30.0
COMMENT_ENV = {
    "PLATFORM_HTTP_TIMEOUT": str(HELD_SECONDS),  # the worker is still waiting when it is killed
    "PUBLISH_LEASE_SECONDS": str(HELD_SECONDS + 5),  # nobody takes the comment over before the kill
    "PUBLISH_LOST_TASK_SECONDS": "5",
    "PUBLISH_SWEEP_INTERVAL_SECONDS": "2",
}
COMMENT_PATHS = {"MASTODON": "/api/v1/statuses", "LINKEDIN": "/comments"}


@pytest.fixture(scope="module")
def comment_stack() -> Iterator[E2EStack]:
    with start_stack(**COMMENT_ENV) as stack:
        yield stack


def _comments(stack: E2EStack, platform: str, text: str) -> list[dict[str, Any]]:
    """The simulator's calls that created (or, ``repeat``, answered again) the comment ``text``."""
    found = []
    for entry in stack.sandbox_requests(platform):
        if not 200 <= int(str(entry.get("status", 0))) < 300:
            continue
        body_text = (entry.get("body") or {}).get("message", {}).get("text") if entry.get("comment") else None
        if entry.get("text") == text or body_text == text:
            found.append(entry)
    return found


def _comment_state(stack: E2EStack, post_id: str) -> tuple[str, str]:
    [(status, comment_status)] = stack.sql(
        "SELECT status, comment_status FROM posts_posttarget WHERE post_id = %s", (post_id,)
    )
    return str(status), str(comment_status)


def _kill_mid_comment(stack: E2EStack, platform: str, text: str) -> str:
    account = stack.connect_account(platform)
    fault = requests.post(
        f"{stack.sandbox_url}/sandbox/_control/{platform.lower()}/faults",
        json={
            "kind": "timeout",
            "path": COMMENT_PATHS[platform],
            "method": "POST",
            "body": text,
            "seconds": HELD_SECONDS,
        },
        timeout=30,
    )
    assert fault.status_code == 201, fault.text
    created = stack.create_text_post(
        account, f"First comment e2e on {platform}: the post", firstComment={"text": text, "delaySeconds": 0}
    )
    assert created.status_code == 201, created.text
    post_id = str(created.json()["postId"])
    # The comment is on the platform, its answer held; the worker holds the comment's lease.
    wait_for(lambda: _comments(stack, platform, text), timeout=120, what="the comment sent")
    assert _comment_state(stack, post_id) == ("PUBLISHED", "SENDING")
    record = stack.api("GET", f"/social-posts/{post_id}").json()
    assert record["status"] == "COMPLETED"  # the post did not wait for its comment
    stack.kill_worker()
    assert _comment_state(stack, post_id) == ("PUBLISHED", "SENDING")
    stack.start_worker()
    return post_id


def _settled_comment(stack: E2EStack, post_id: str) -> dict[str, Any]:
    def settled() -> bool:
        entry = stack.api("GET", f"/social-posts/{post_id}").json()["platforms"][0]
        return entry["firstComment"]["status"] in ("PUBLISHED", "FAILED")

    wait_for(settled, timeout=180, interval=0.5, what="the comment to settle")
    record = stack.api("GET", f"/social-posts/{post_id}").json()
    assert record["status"] == "COMPLETED", record
    [entry] = record["platforms"]
    assert entry["status"] == "PUBLISHED"
    return dict(entry)


def _events(stack: E2EStack, post_id: str) -> list[str]:
    rows = stack.sql(
        "SELECT name FROM webhooks_event WHERE payload::jsonb -> 'data' -> 'post' ->> 'id' = %s ORDER BY created_at, id",
        (post_id,),
    )
    return [str(row[0]) for row in rows]


def test_a_worker_killed_mid_comment_on_mastodon_leaves_exactly_one_comment(comment_stack: E2EStack) -> None:
    stack = comment_stack
    text = "First comment e2e: Mastodon (held)"
    post_id = _kill_mid_comment(stack, "MASTODON", text)
    entry = _settled_comment(stack, post_id)
    calls = _comments(stack, "MASTODON", text)
    created = [c for c in calls if not c.get("repeat")]
    assert len(created) == 1  # no duplicate, nothing lost
    assert created[0]["inReplyTo"] == entry["platformPostId"]
    # sent again after the kill under the same key, answered with the comment it created
    assert [c["remoteId"] for c in calls if c.get("repeat")] == [created[0]["remoteId"]]
    assert len({c["marker"] for c in calls}) == 1
    assert entry["firstComment"] == {"status": "PUBLISHED", "platformCommentId": created[0]["remoteId"]}
    assert _events(stack, post_id) == ["post.published", "post.first_comment.published"]


def test_a_worker_killed_mid_comment_on_linkedin_is_never_sent_again(comment_stack: E2EStack) -> None:
    stack = comment_stack
    text = "First comment e2e: LinkedIn (held)"
    post_id = _kill_mid_comment(stack, "LINKEDIN", text)
    entry = _settled_comment(stack, post_id)
    calls = _comments(stack, "LINKEDIN", text)
    assert len(calls) == 1 and calls[0]["on"] == entry["platformPostId"]  # the one call, never repeated
    assert entry["firstComment"] == {"status": "FAILED", "platformCommentId": None, "errorCode": "unknown_outcome"}
    assert _events(stack, post_id) == ["post.published", "post.first_comment.failed"]
