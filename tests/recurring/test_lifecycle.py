"""A series over time (time-machine), driven by the real dispatcher and finalize: the next
occurrence on claim (across DST changes), idempotent hooks, the end of a series, late claims,
deleting the upcoming post, the failure streak and its self-pause, account removal, broken
templates, and hooks that never break the pipeline."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import time_machine

from accounts.disconnect import account_disconnect
from audit.actors import system_actor
from media.models import MediaFile
from posts.models import Post, PostStatus, PostTarget, RecurringPost
from posts.recurrence.occurrences import create_occurrence
from posts.recurrence.services import series_account_removed, series_occurrences_claimed
from posts.rendering import post_record
from tests.concurrency import raised, run_concurrently
from tests.factories.posts import account, uploaded
from tests.recurring.conftest import (
    POSTS,
    SERIES,
    claim_at,
    finish,
    scheduled_events,
    start,
    upcoming,
)

TEST_ACTOR = system_actor("tests")


def utc(*parts: int) -> dt.datetime:
    return dt.datetime(*parts, tzinfo=dt.UTC)


def begin(
    api: Any, masto: Any, created: dt.datetime, first: dt.datetime, rule: dict[str, Any], **extra: Any
) -> RecurringPost:
    with time_machine.travel(created, tick=False):
        return start(api, masto, first, rule, **extra)


def test_claiming_creates_the_next_occurrence_across_spring_forward(api: Any, workspace: Any, masto: Any) -> None:
    # Daily at 02:30 New York: 7 March 2026 is EST, 8 March has no 02:30 (→ 03:00 EDT), 9 March EDT.
    first = utc(2026, 3, 7, 7, 30)
    series = begin(api, masto, utc(2026, 3, 6), first, {"frequency": "DAILY"}, timezone="America/New_York")
    [post1] = upcoming(series)
    assert claim_at(first) == 1
    post1.refresh_from_db()
    assert post1.status == PostStatus.PENDING
    [post2] = upcoming(series)
    assert post2.occurrence_at == post2.scheduled_at == utc(2026, 3, 8, 7, 0)
    assert [t.account_id for t in post2.targets.all()] == [masto.id]
    assert (post2.text, post2.timezone, post2.content_type) == ("Every time", "America/New_York", "TEXT")
    series.refresh_from_db()
    assert (series.next_occurrence_at, series.occurrence_count, series.status) == (post2.occurrence_at, 2, "ACTIVE")
    assert scheduled_events(workspace.id)[-1] == post_record(Post.objects.get(id=post2.id))
    assert claim_at(utc(2026, 3, 8, 7, 0)) == 1
    [post3] = upcoming(series)
    assert post3.occurrence_at == utc(2026, 3, 9, 6, 30)


def test_claiming_across_fall_back_in_berlin(api: Any, masto: Any) -> None:
    first = utc(2026, 10, 18, 8)  # Sunday 10:00 CEST
    series = begin(api, masto, utc(2026, 10, 17), first, {"frequency": "WEEKLY"}, timezone="Europe/Berlin")
    claim_at(first)
    [following] = upcoming(series)
    assert following.occurrence_at == utc(2026, 10, 25, 9)  # Sunday 10:00 CET


def test_monthly_31st_through_the_dispatcher(api: Any, masto: Any) -> None:
    first = utc(2028, 1, 31, 12)
    series = begin(api, masto, utc(2028, 1, 30), first, {"frequency": "MONTHLY"})
    claim_at(first)
    [february] = upcoming(series)
    assert february.occurrence_at == utc(2028, 2, 29, 12)
    claim_at(february.occurrence_at)
    assert upcoming(series)[0].occurrence_at == utc(2028, 3, 31, 12)


def test_claim_hook_is_idempotent(api: Any, masto: Any) -> None:
    first = utc(2026, 5, 1, 9)
    series = begin(api, masto, utc(2026, 4, 30), first, {"frequency": "DAILY"})
    [post1] = upcoming(series)
    claim_at(first)
    with time_machine.travel(first, tick=False):
        series_occurrences_claimed(post_ids=[post1.id])
        series_occurrences_claimed(post_ids=[post1.id])
    series.refresh_from_db()
    assert [p.occurrence_at for p in upcoming(series)] == [utc(2026, 5, 2, 9)]
    assert series.occurrence_count == 2


def test_concurrent_creation_of_one_occurrence_is_harmless(api: Any, masto: Any) -> None:
    series = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"})
    at = utc(2026, 5, 2, 9)
    assert create_occurrence(series, at) is not None
    assert create_occurrence(series, at) is None
    assert Post.objects.filter(recurring_post=series, occurrence_at=at).count() == 1
    assert PostTarget.objects.filter(post__recurring_post=series, post__occurrence_at=at).count() == 1


def test_every_occurrence_carries_the_first_comment_of_the_series(api: Any, masto: Any) -> None:
    comment = {"text": "Details in here", "delaySeconds": 30}
    series = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"}, firstComment=comment)
    assert series.template["firstComment"] == comment
    occurrence = create_occurrence(series, utc(2026, 5, 2, 9))
    assert occurrence is not None and occurrence.first_comment == comment
    assert post_record(occurrence)["firstComment"] == comment
    plain = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"})
    assert "firstComment" not in plain.template
    bare = create_occurrence(plain, utc(2026, 5, 2, 9))
    assert bare is not None and bare.first_comment == {}


def test_every_occurrence_carries_the_per_platform_first_comments_of_the_series(api: Any, masto: Any) -> None:
    comment = {"text": "Details in here", "delaySeconds": 30}
    own = [{"platform": "MASTODON", "text": "Mastodon's own"}]
    series = begin(
        api,
        masto,
        utc(2026, 4, 30),
        utc(2026, 5, 1, 9),
        {"frequency": "DAILY"},
        firstComment=comment,
        platformFirstComments=own,
    )
    assert [t["firstCommentText"] for t in series.template["targets"]] == ["Mastodon's own"]
    occurrence = create_occurrence(series, utc(2026, 5, 2, 9))
    assert occurrence is not None
    assert [t.first_comment_text for t in occurrence.targets.all()] == ["Mastodon's own"]
    record = post_record(occurrence)
    assert (record["firstComment"], record["platformFirstComments"]) == (comment, own)
    plain = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"}, firstComment=comment)
    assert all("firstCommentText" not in t for t in plain.template["targets"])
    bare = create_occurrence(plain, utc(2026, 5, 2, 9))
    assert bare is not None and "platformFirstComments" not in post_record(bare)


def test_series_ends_after_its_last_occurrence(api: Any, masto: Any) -> None:
    first = utc(2026, 5, 1, 9)
    series = begin(api, masto, utc(2026, 4, 30), first, {"frequency": "DAILY", "maxOccurrences": 2})
    claim_at(first)
    [last] = upcoming(series)
    claim_at(last.occurrence_at)
    series.refresh_from_db()
    assert (series.status, series.next_occurrence_at, series.occurrence_count) == ("ENDED", None, 2)
    assert upcoming(series) == []
    claim_at(last.occurrence_at + dt.timedelta(days=1))
    assert upcoming(series) == []


def test_ends_on_ends_the_series(api: Any, masto: Any) -> None:
    first = utc(2026, 5, 1, 9)
    series = begin(api, masto, utc(2026, 4, 30), first, {"frequency": "DAILY", "interval": 2, "endsOn": "2026-05-04"})
    claim_at(first)
    [second] = upcoming(series)
    assert second.occurrence_at == utc(2026, 5, 3, 9)
    claim_at(second.occurrence_at)
    series.refresh_from_db()
    assert series.status == "ENDED" and upcoming(series) == []


def test_occurrences_deleted_before_they_went_out_do_not_count_toward_max(api: Any, masto: Any) -> None:
    first = utc(2026, 5, 1, 9)
    series = begin(api, masto, utc(2026, 4, 30), first, {"frequency": "DAILY", "maxOccurrences": 5})
    # Pause and resume before the first slot: its post is deleted and made again, one occurrence.
    with time_machine.travel(utc(2026, 4, 30, 1), tick=False):
        api.post(f"{SERIES}/{series.id}/pause", format="json")
        body = api.post(f"{SERIES}/{series.id}/resume", format="json").json()
    # 1 May is made again (its post); the next occurrence not created yet is the 2nd
    assert [p.occurrence_at for p in upcoming(series)] == [first]
    assert (body["nextOccurrenceAt"], body["occurrenceCount"]) == ("2026-05-02T09:00:00.000Z", 1)
    # Deleting an upcoming post skips its slot without using up an occurrence.
    with time_machine.travel(utc(2026, 4, 30, 2), tick=False):
        [upcoming_post] = upcoming(series)
        assert api.delete(f"{POSTS}/{upcoming_post.id}").status_code == 200
    series.refresh_from_db()
    assert (series.next_occurrence_at, series.occurrence_count) == (utc(2026, 5, 2, 9), 1)
    went_out = []
    for _ in range(10):
        posts = upcoming(series)
        if not posts:
            break
        went_out.append(posts[0].occurrence_at)
        claim_at(posts[0].occurrence_at)
    assert went_out == [utc(2026, 5, day, 9) for day in (2, 3, 4, 5, 6)]  # five, as maxOccurrences says
    series.refresh_from_db()
    assert (series.status, series.occurrence_count) == ("ENDED", 5)


def test_a_late_claim_does_not_burst_out_missed_occurrences(api: Any, masto: Any) -> None:
    first = utc(2026, 5, 1, 9)
    series = begin(api, masto, utc(2026, 4, 30), first, {"frequency": "DAILY"})
    claim_at(first + dt.timedelta(days=3, hours=1))  # the dispatcher was down for three days
    assert [p.occurrence_at for p in upcoming(series)] == [utc(2026, 5, 5, 9)]


def test_deleting_the_upcoming_post_schedules_the_next_at_once(api: Any, workspace: Any, masto: Any) -> None:
    series = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "WEEKLY"})
    [post1] = upcoming(series)
    with time_machine.travel(utc(2026, 4, 30, 1), tick=False):
        assert api.delete(f"{POSTS}/{post1.id}").json() == {"deleted": True}
    [post2] = upcoming(series)
    assert post2.occurrence_at == utc(2026, 5, 8, 9)
    series.refresh_from_db()
    # The deleted occurrence never went out: only the new upcoming one counts.
    assert (series.next_occurrence_at, series.occurrence_count, series.status) == (utc(2026, 5, 8, 9), 1, "ACTIVE")
    assert scheduled_events(workspace.id)[-1]["id"] == post2.id
    # A finished occurrence deleted later changes nothing.
    claim_at(post2.occurrence_at)
    post2.refresh_from_db()
    finish(post2, "PUBLISHED")
    with time_machine.travel(utc(2026, 5, 8, 10), tick=False):
        api.delete(f"{POSTS}/{post2.id}")
    assert [p.occurrence_at for p in upcoming(series)] == [utc(2026, 5, 15, 9)]


def test_deleting_the_last_upcoming_post_ends_the_series(api: Any, masto: Any) -> None:
    series = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY", "endsOn": "2026-05-01"})
    [post1] = upcoming(series)
    with time_machine.travel(utc(2026, 4, 30, 1), tick=False):
        api.delete(f"{POSTS}/{post1.id}")
    series.refresh_from_db()
    assert series.status == "ENDED" and upcoming(series) == []


def _run(series: RecurringPost, outcomes: list[str]) -> None:
    for outcome in outcomes:
        [post] = upcoming(series)
        claim_at(post.occurrence_at)
        post.refresh_from_db()
        finish(post, outcome, message=f"refused {post.occurrence_at:%d}")


def test_three_failed_occurrences_in_a_row_pause_the_series(api: Any, masto: Any) -> None:
    series = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"})
    _run(series, ["FAILED", "FAILED"])
    series.refresh_from_db()
    assert (series.status, series.consecutive_failures, series.last_error) == ("ACTIVE", 2, "MASTODON: refused 02")
    _run(series, ["FAILED"])
    series.refresh_from_db()
    assert (series.status, series.pause_reason, series.consecutive_failures) == ("PAUSED", "CONSECUTIVE_FAILURES", 3)
    assert series.last_error == "MASTODON: refused 03" and series.next_occurrence_at is None
    assert upcoming(series) == []
    body = api.get(f"{SERIES}/{series.id}").json()
    assert (body["status"], body["pauseReason"], body["lastError"]) == (
        "PAUSED",
        "CONSECUTIVE_FAILURES",
        "MASTODON: refused 03",
    )


def test_a_success_resets_the_streak_and_clears_the_error(api: Any, masto: Any) -> None:
    series = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"})
    _run(series, ["FAILED", "FAILED", "PUBLISHED"])
    series.refresh_from_db()
    assert (series.consecutive_failures, series.last_error) == (0, "")
    _run(series, ["FAILED", "FAILED"])
    series.refresh_from_db()
    assert (series.status, series.consecutive_failures) == ("ACTIVE", 2)


def test_a_partial_failure_breaks_the_streak(api: Any, workspace: Any, masto: Any) -> None:
    sky = account(workspace, "BLUESKY", display_name="Sky")
    series = begin(
        api,
        masto,
        utc(2026, 4, 30),
        utc(2026, 5, 1, 9),
        {"frequency": "DAILY"},
        platforms=["MASTODON", "BLUESKY"],
        blueskyConnectionIds=[sky.id],
    )
    _run(series, ["FAILED", "FAILED"])
    [post] = upcoming(series)
    claim_at(post.occurrence_at)
    targets = list(PostTarget.objects.filter(post=post).order_by("platform"))
    PostTarget.objects.filter(id=targets[0].id).update(status="FAILED", error_message="no")
    PostTarget.objects.filter(id=targets[1].id).update(status="PUBLISHED", platform_post_id="x")
    from posts.pipeline.outcomes import finalize_post

    assert finalize_post(post.id) == "post.partially_failed"
    series.refresh_from_db()
    assert (series.status, series.consecutive_failures, series.last_error) == ("ACTIVE", 0, "BLUESKY: no")


def test_a_retried_occurrence_is_never_counted_twice(api: Any, masto: Any) -> None:
    series = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"})
    _run(series, ["FAILED", "FAILED"])
    failed = Post.objects.filter(recurring_post=series, status="FAILED").order_by("-occurrence_at").first()
    assert failed is not None
    for _ in range(2):  # retried and failed again, twice
        Post.objects.filter(id=failed.id).update(status="PENDING", finished_at=None)
        PostTarget.objects.filter(post=failed).update(status="PENDING")
        finish(failed, "FAILED")
    series.refresh_from_db()
    assert (series.status, series.consecutive_failures) == ("ACTIVE", 2)


def test_resume_after_failures_starts_the_streak_afresh(api: Any, masto: Any) -> None:
    series = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"})
    _run(series, ["FAILED", "FAILED", "FAILED"])
    with time_machine.travel(utc(2026, 5, 3, 12), tick=False):
        body = api.post(f"{SERIES}/{series.id}/resume", format="json").json()
    assert [p.occurrence_at for p in upcoming(series)] == [utc(2026, 5, 4, 9)]
    assert (body["status"], body["nextOccurrenceAt"]) == ("ACTIVE", "2026-05-05T09:00:00.000Z")
    _run(series, ["FAILED"])
    series.refresh_from_db()
    assert (series.status, series.consecutive_failures) == ("ACTIVE", 1)


def test_removing_an_account_pauses_its_series(api: Any, workspace: Any, masto: Any) -> None:
    other = account(workspace, "MASTODON", display_name="Other")
    mine = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"})
    theirs = begin(api, other, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"})
    account_disconnect(workspace_id=workspace.id, account_id=masto.id, actor=TEST_ACTOR)
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert (mine.status, mine.pause_reason) == ("PAUSED", "CONNECTION_REMOVED")
    assert mine.last_error == "The MASTODON account Masto was removed from the workspace"
    assert upcoming(mine) == [] and theirs.status == "ACTIVE" and len(upcoming(theirs)) == 1
    assert series_account_removed(workspace_id=workspace.id, account_id=masto.id) == 0


def test_an_account_gone_before_the_claim_pauses_instead_of_failing(api: Any, workspace: Any, masto: Any) -> None:
    series = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"})
    [post] = upcoming(series)
    masto.delete()  # behind the services' back
    assert claim_at(post.occurrence_at) == 1
    series.refresh_from_db()
    assert (series.status, series.pause_reason) == ("PAUSED", "CONNECTION_REMOVED")
    post.refresh_from_db()
    assert post.status == PostStatus.PENDING  # the claim itself went through


def test_media_gone_pauses_with_invalid_content(api: Any, workspace: Any, masto: Any) -> None:
    image = uploaded(workspace, "image")
    series = begin(
        api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"}, contentType="IMAGE", mediaUrls=[image]
    )
    assert series.template["mediaUrls"] == [image]
    MediaFile.objects.filter(public_url=image).delete()
    claim_at(utc(2026, 5, 1, 9))
    series.refresh_from_db()
    assert (series.status, series.pause_reason) == ("PAUSED", "INVALID_CONTENT")
    assert image in series.last_error


def test_an_unexpected_error_never_breaks_the_claim(
    api: Any, masto: Any, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    series = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"})
    [post] = upcoming(series)

    def explode(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("posts.recurrence.services.create_occurrence", explode)
    assert claim_at(post.occurrence_at) == 1
    post.refresh_from_db()
    assert post.status == PostStatus.PENDING
    assert "scheduling the next occurrence failed" in caplog.text
    series.refresh_from_db()
    assert series.next_occurrence_at == post.occurrence_at  # untouched: rolled back to its savepoint


def test_pausing_while_an_occurrence_is_claimed_lets_it_publish(api: Any, masto: Any) -> None:
    series = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"})
    [post1] = upcoming(series)
    claim_at(post1.occurrence_at)
    with time_machine.travel(utc(2026, 5, 1, 9, 0, 1), tick=False):
        api.post(f"{SERIES}/{series.id}/pause", format="json")
    post1.refresh_from_db()
    assert post1.status == PostStatus.PENDING and upcoming(series) == []
    finish(post1, "PUBLISHED")
    series.refresh_from_db()
    assert series.status == "PAUSED" and upcoming(series) == []


def test_unscheduling_the_upcoming_post_moves_the_series_on(api: Any, masto: Any) -> None:
    series = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"})
    [post1] = upcoming(series)
    with time_machine.travel(utc(2026, 4, 30, 1), tick=False):
        body = api.post(f"{POSTS}/{post1.id}/unschedule", format="json").json()
    assert (body["status"], body["scheduledAt"], body["recurringPostId"]) == ("DRAFT", None, series.id)
    assert [p.occurrence_at for p in upcoming(series)] == [utc(2026, 5, 2, 9)]
    series.refresh_from_db()
    assert (series.next_occurrence_at, series.occurrence_count) == (utc(2026, 5, 2, 9), 2)


@pytest.mark.django_db(transaction=True)
def test_concurrent_claim_hooks_create_one_next_occurrence(api: Any, masto: Any) -> None:
    from django.db import transaction

    series = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"})
    [post1] = upcoming(series)

    def claim() -> None:
        with time_machine.travel(utc(2026, 5, 1, 9), tick=False), transaction.atomic():
            series_occurrences_claimed(post_ids=[post1.id])

    assert raised(run_concurrently([claim] * 4)) == []
    series.refresh_from_db()
    assert series.occurrence_count == 2
    assert Post.objects.filter(recurring_post=series, occurrence_at=utc(2026, 5, 2, 9)).count() == 1


def test_a_stalled_series_gets_its_upcoming_post_back(api: Any, masto: Any) -> None:
    from posts.recurrence.services import series_repair_stalled

    first = utc(2026, 5, 4, 9, 0)
    series = begin(api, masto, utc(2026, 5, 1), first, {"frequency": "DAILY"})
    [lost] = upcoming(series)
    Post.objects.filter(id=lost.id).delete()  # as if the hook that replaces it had failed
    with time_machine.travel(utc(2026, 5, 4, 9, 1), tick=False):
        assert series_repair_stalled() == 0  # inside the grace period nothing is touched
    with time_machine.travel(utc(2026, 5, 6, 12, 0), tick=False):
        assert series_repair_stalled() == 1
        assert series_repair_stalled() == 0  # twice: the world changes once
    [repaired] = upcoming(series)
    assert repaired.occurrence_at == utc(2026, 5, 7, 9, 0)  # the first after now, no catch-up
    series.refresh_from_db()
    assert series.next_occurrence_at == repaired.occurrence_at and series.status == "ACTIVE"


def test_resume_steps_over_an_occurrence_kept_by_an_unscheduled_draft(api: Any, masto: Any) -> None:
    series = begin(api, masto, utc(2026, 4, 30), utc(2026, 5, 1, 9), {"frequency": "DAILY"})
    [post1] = upcoming(series)
    with time_machine.travel(utc(2026, 4, 30, 1), tick=False):
        api.post(f"{POSTS}/{post1.id}/unschedule", format="json")  # the draft keeps occurrence 1 May
        api.post(f"{SERIES}/{series.id}/pause", format="json")
    with time_machine.travel(utc(2026, 4, 30, 2), tick=False):
        body = api.post(f"{SERIES}/{series.id}/resume", format="json").json()
    # 1 May belongs to the draft: the series resumes on the 2nd, with its SCHEDULED post (so the
    # next occurrence not created yet is the 3rd).
    assert (body["status"], body["nextOccurrenceAt"]) == ("ACTIVE", "2026-05-03T09:00:00.000Z")
    assert [p.occurrence_at for p in upcoming(series)] == [utc(2026, 5, 2, 9)]
    assert Post.objects.get(id=post1.id).status == PostStatus.DRAFT


def test_the_repair_task_run_twice_changes_the_world_once(api: Any, masto: Any) -> None:
    from posts.tasks import repair_stalled_series_task

    series = begin(api, masto, utc(2026, 5, 1), utc(2026, 5, 4, 9, 0), {"frequency": "WEEKLY"})
    Post.objects.filter(recurring_post=series).delete()
    with time_machine.travel(utc(2026, 5, 12, 12, 0), tick=False):
        assert repair_stalled_series_task.apply().get() == 1
        assert repair_stalled_series_task.apply().get() == 0
    assert [p.occurrence_at for p in upcoming(series)] == [utc(2026, 5, 18, 9, 0)]
