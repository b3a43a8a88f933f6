"""A thread end to end with real web, sandbox, worker and beat processes: the worker is killed
with SIGKILL while it waits for the platform's answer to item 2 (which the platform has already
created), and the thread still ends with every item on the platform exactly once, in order, each a
reply to the one before it.

The kill lands mid-item by construction, not by timing: a ``timeout`` fault armed on the item's
text makes the simulator create item 2 and then hold its answer; the test waits until the
simulator's log shows item 2 created and the entry is still PUBLISHING with two confirmed items,
then kills the worker. The bounds below (the held answer, the client's timeout, the lease) only
have to exceed how long that wait-and-kill takes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from tests.e2e.harness import E2EStack, start_stack, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

HELD_SECONDS = 30.0
THREAD_ENV = {
    "PLATFORM_HTTP_TIMEOUT": str(HELD_SECONDS),  # the worker is still waiting when it is killed
    "PUBLISH_LEASE_SECONDS": str(HELD_SECONDS + 5),  # nobody takes the item over before the kill
    "PUBLISH_LOST_TASK_SECONDS": "5",
    "PUBLISH_SWEEP_INTERVAL_SECONDS": "2",
}
TEXTS = ["Thread e2e: the post", "Thread e2e: item one", "Thread e2e: item two (held)", "Thread e2e: item three"]


@pytest.fixture(scope="module")
def thread_stack() -> Iterator[E2EStack]:
    with start_stack(**THREAD_ENV) as stack:
        yield stack


def _created(stack: E2EStack) -> list[dict[str, object]]:
    return [
        entry
        for entry in stack.sandbox_requests("MASTODON")
        if entry.get("publish") and 200 <= int(str(entry.get("status", 0))) < 300 and not entry.get("repeat")
    ]


def _entry_state(stack: E2EStack, post_id: str) -> tuple[str, int]:
    [(status, confirmed)] = stack.sql(
        "SELECT status, jsonb_array_length(thread_items) FROM posts_posttarget WHERE post_id = %s", (post_id,)
    )
    return str(status), int(confirmed)


def test_a_worker_killed_mid_thread_leaves_no_duplicate_and_loses_nothing(thread_stack: E2EStack) -> None:
    stack = thread_stack
    masto = stack.connect_account("MASTODON")
    fault = requests.post(
        f"{stack.sandbox_url}/sandbox/_control/mastodon/faults",
        json={
            "kind": "timeout",
            "path": "/api/v1/statuses",
            "method": "POST",
            "body": TEXTS[2],
            "seconds": HELD_SECONDS,
        },
        timeout=30,
    )
    assert fault.status_code == 201, fault.text

    created = stack.create_text_post(masto, TEXTS[0], thread=[{"text": text} for text in TEXTS[1:]])
    assert created.status_code == 201, created.text
    post_id = created.json()["postId"]

    # Item 2 is on the platform, its answer held; the worker holds the entry with two items confirmed.
    wait_for(lambda: any(e.get("text") == TEXTS[2] for e in _created(stack)), timeout=120, what="item 2 sent")
    assert _entry_state(stack, post_id) == ("PUBLISHING", 2)
    stack.kill_worker()
    assert _entry_state(stack, post_id) == ("PUBLISHING", 2)
    stack.start_worker()

    def settled() -> bool:
        return stack.api("GET", f"/social-posts/{post_id}").json()["status"] in ("COMPLETED", "FAILED")

    wait_for(settled, timeout=180, interval=0.5, what="the thread to finish")
    record = stack.api("GET", f"/social-posts/{post_id}").json()
    assert record["status"] == "COMPLETED", record
    [entry] = record["platforms"]
    items = entry["threadItems"]
    ids = [item["platformPostId"] for item in items]
    assert len(ids) == 4 and entry["platformPostId"] == ids[0] and entry["status"] == "PUBLISHED"

    sent = _created(stack)
    assert [e["text"] for e in sent] == TEXTS  # each item created exactly once, in order: no duplicate, none lost
    assert [e["remoteId"] for e in sent] == ids
    assert [e.get("inReplyTo") for e in sent] == [None, *ids[:-1]]
    log = stack.sandbox_requests("MASTODON")
    # Item 2 was sent again after the kill with the same key and answered with the status it created.
    repeats = [e for e in log if e.get("publish") and e.get("repeat")]
    assert [(e["remoteId"], e["text"]) for e in repeats] == [(ids[2], TEXTS[2])]
    assert len({e["marker"] for e in log if e.get("publish")}) == 4  # one idempotency key per item
