"""Recurring series end to end, with real web, worker and beat processes over HTTP: the first
occurrence, brought forward to now, publishes through the real pipeline and the next occurrence
appears as a SCHEDULED post (post.scheduled delivered for each); pause deletes it; resume
publishes the next occurrence after now and none of those missed; delete stops the series and
keeps what was published."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.harness import E2EStack, WebhookReceiver, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

FINAL = ("COMPLETED", "PARTIAL_FAILURE", "FAILED")


def instant(moment: dt.datetime) -> str:
    """As the API writes an instant: UTC, milliseconds, ``Z``."""
    return moment.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def receiver(e2e: E2EStack) -> Iterator[WebhookReceiver]:
    hook = WebhookReceiver()
    response = e2e.api("POST", "/webhooks", json={"url": hook.url})
    assert response.status_code == 201, response.text
    yield hook
    hook.close()


def series_posts(e2e: E2EStack, series_id: str) -> list[dict[str, Any]]:
    body = e2e.api("GET", "/social-posts", params={"limit": 100}).json()
    return sorted((p for p in body["posts"] if p["recurringPostId"] == series_id), key=lambda p: p["occurrenceAt"])


def wait_final(e2e: E2EStack, post_id: str) -> dict[str, Any]:
    def final() -> dict[str, Any] | None:
        post = e2e.api("GET", f"/social-posts/{post_id}").json()
        return post if post["status"] in FINAL else None

    return dict(wait_for(final, timeout=60, what=f"post {post_id} to publish"))


def _events_of(hook: WebhookReceiver, post_id: str, count: int) -> list[Any] | None:
    found = [r for r in hook.events() if (r.envelope["data"].get("post") or {}).get("id") == post_id]
    return sorted(found, key=lambda r: r.envelope["createdAt"]) if len(found) >= count else None


def bring_forward(e2e: E2EStack, post_id: str) -> None:
    """Make a SCHEDULED occurrence due now. Occurrences are created an hour or more ahead, so they
    are SCHEDULED however slow the machine; a PATCH of scheduledAt keeps a post SCHEDULED whenever
    it lands (up to a minute into the past) and keeps its occurrence time, from which the series
    goes on."""
    moved = e2e.api("PATCH", f"/social-posts/{post_id}", json={"scheduledAt": instant(dt.datetime.now(dt.UTC))})
    assert (moved.status_code, moved.json()["status"]) == (200, "SCHEDULED"), moved.text


def scheduled_ids(hook: WebhookReceiver) -> list[str]:
    return [r.envelope["data"]["post"]["id"] for r in hook.events("post.scheduled")]


def test_a_series_publishes_pauses_resumes_without_catch_up_and_is_deleted(
    e2e: E2EStack, receiver: WebhookReceiver
) -> None:
    masto = e2e.connect_account("MASTODON")
    first_at = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(hours=1)
    response = e2e.api(
        "POST",
        "/social-posts",
        json={
            "contentType": "TEXT",
            "timezone": "Europe/Berlin",
            "text": "Daily news",
            "platforms": ["MASTODON"],
            "mastodonConnectionIds": [masto["id"]],
            "scheduledAt": instant(first_at),
            "recurrence": {"frequency": "DAILY"},
        },
    )
    assert response.status_code == 201, response.text
    created = response.json()
    series_id, first_id = created["recurringPostId"], created["postId"]
    assert created["isScheduled"] is True

    # The first occurrence goes out through the real pipeline when it falls due...
    bring_forward(e2e, first_id)
    first = wait_final(e2e, first_id)
    assert first["status"] == "COMPLETED" and first["occurrenceAt"] == instant(first_at)
    assert first["platforms"][0]["platformPostId"]
    # ... and the next one exists as a SCHEDULED post, a day later on the Berlin wall clock.
    second_at = first_at + dt.timedelta(days=1)
    posts = series_posts(e2e, series_id)
    assert [(p["id"], p["status"]) for p in posts][0] == (first_id, "COMPLETED")
    assert [(p["status"], p["occurrenceAt"], p["scheduledAt"]) for p in posts[1:]] == [
        ("SCHEDULED", instant(second_at), instant(second_at))
    ]
    second_id = posts[1]["id"]
    series = e2e.api("GET", f"/recurring-posts/{series_id}").json()
    # nextOccurrenceAt: the next occurrence not created yet, the one after the SCHEDULED post
    assert (series["status"], series["nextOccurrenceAt"], series["occurrenceCount"]) == (
        "ACTIVE",
        instant(second_at + dt.timedelta(days=1)),
        2,
    )
    wait_for(lambda: {first_id, second_id} <= set(scheduled_ids(receiver)), timeout=30, what="post.scheduled x2")
    first_events = wait_for(lambda: _events_of(receiver, first_id, 2), timeout=30, what="post.published")
    assert [r.envelope["event"] for r in first_events] == ["post.scheduled", "post.published"]

    # Pause: the upcoming post is deleted.
    paused = e2e.api("POST", f"/recurring-posts/{series_id}/pause", json={}).json()
    assert (paused["status"], paused["pauseReason"], paused["nextOccurrenceAt"]) == ("PAUSED", "USER", None)
    assert e2e.api("GET", f"/social-posts/{second_id}").status_code == 404

    # Three days "pass" while paused: the rule is moved so that three occurrences lie in the past
    # and the next one is two hours away (however slow the calls up to the resume, still ahead).
    resume_next = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(hours=2)
    e2e.sql(
        "UPDATE posts_recurringpost SET starts_at = %s WHERE id = %s RETURNING id",
        (resume_next - dt.timedelta(days=3), series_id),
    )
    preview = e2e.api("GET", f"/recurring-posts/{series_id}/occurrences", params={"limit": 2}).json()
    assert preview == {"occurrences": [instant(resume_next), instant(resume_next + dt.timedelta(days=1))]}
    resumed = e2e.api("POST", f"/recurring-posts/{series_id}/resume", json={}).json()
    assert (resumed["status"], resumed["pauseReason"], resumed["nextOccurrenceAt"]) == (
        "ACTIVE",
        None,
        instant(resume_next + dt.timedelta(days=1)),  # resume_next itself is created: the post below
    )
    posts = series_posts(e2e, series_id)
    assert [(p["status"], p["occurrenceAt"]) for p in posts] == [
        ("COMPLETED", instant(first_at)),
        ("SCHEDULED", instant(resume_next)),
    ]  # nothing for the missed occurrences
    bring_forward(e2e, posts[1]["id"])
    third = wait_final(e2e, posts[1]["id"])
    assert third["status"] == "COMPLETED"
    wait_for(lambda: len(series_posts(e2e, series_id)) == 3, timeout=30, what="the occurrence after the resume")
    upcoming = series_posts(e2e, series_id)[-1]
    assert (upcoming["status"], upcoming["occurrenceAt"]) == ("SCHEDULED", instant(resume_next + dt.timedelta(days=1)))
    published = e2e.sql(
        "SELECT count(*) FROM posts_post WHERE recurring_post_id = %s AND status = 'COMPLETED'", (series_id,)
    )
    assert published == [(2,)]

    # Delete: the upcoming post goes, the published ones stay (unlinked).
    assert e2e.api("DELETE", f"/recurring-posts/{series_id}").json() == {"deleted": True}
    assert e2e.api("GET", f"/recurring-posts/{series_id}").status_code == 404
    assert e2e.api("GET", f"/social-posts/{upcoming['id']}").status_code == 404
    for post_id in (first_id, third["id"]):
        kept = e2e.api("GET", f"/social-posts/{post_id}").json()
        assert (kept["status"], kept["recurringPostId"]) == ("COMPLETED", None)
    # The simulator saw exactly two publications: nothing for the missed occurrences, nothing twice.
    assert sum(1 for r in e2e.sandbox_requests("MASTODON") if r.get("publish")) == 2


def test_deleting_the_upcoming_post_schedules_the_next(e2e: E2EStack) -> None:
    masto = e2e.connect_account("MASTODON")
    first_at = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(hours=1)
    created = e2e.api(
        "POST",
        "/social-posts",
        json={
            "contentType": "TEXT",
            "timezone": "UTC",
            "text": "Weekly",
            "platforms": ["MASTODON"],
            "mastodonConnectionIds": [masto["id"]],
            "scheduledAt": instant(first_at),
            "recurrence": {"frequency": "WEEKLY", "maxOccurrences": 2},
        },
    ).json()
    assert e2e.api("DELETE", f"/social-posts/{created['postId']}").json() == {"deleted": True}
    [following] = series_posts(e2e, created["recurringPostId"])
    assert (following["status"], following["occurrenceAt"]) == ("SCHEDULED", instant(first_at + dt.timedelta(days=7)))
    assert e2e.api("DELETE", f"/social-posts/{following['id']}").json() == {"deleted": True}
    # Neither deleted occurrence went out, so neither counts toward maxOccurrences: the series goes on.
    third_at = instant(first_at + dt.timedelta(days=14))
    series = e2e.api("GET", f"/recurring-posts/{created['recurringPostId']}").json()
    fourth_at = instant(first_at + dt.timedelta(days=21))  # the next not created: the third is
    assert (series["status"], series["nextOccurrenceAt"], series["occurrenceCount"]) == ("ACTIVE", fourth_at, 1)
    assert [(p["status"], p["occurrenceAt"]) for p in series_posts(e2e, created["recurringPostId"])] == [
        ("SCHEDULED", third_at)
    ]
