"""The API: creating a series through POST /social-posts (and every 400 rule), then list, get,
pause, resume, delete and the occurrences preview, with their errors, permissions and
cross-workspace 404s."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.fields import format_instant
from posts.models import Post, PostStatus, RecurringPost
from posts.recurrence.rules import Rule
from posts.rendering import post_record
from tests.factories.posts import account, uploaded
from tests.recurring.conftest import POSTS, SERIES, iso, scheduled_events, series_body, start, upcoming

NOW = dt.datetime(2026, 1, 5, 12, 0, tzinfo=dt.UTC)  # a Monday


@pytest.fixture(autouse=True)
def clock() -> Any:
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


def _slot_after_the_upcoming_post(series: RecurringPost) -> dt.datetime | None:
    """What ``nextOccurrenceAt`` answers: the next slot not created yet (the concrete values are
    checked by the tests below)."""
    if series.status != "ACTIVE" or series.next_occurrence_at is None:
        return None
    if series.max_occurrences is not None and series.occurrence_count >= series.max_occurrences:
        return None
    return Rule.of(series).next_after(series.next_occurrence_at)


def record(series: RecurringPost) -> dict[str, Any]:
    series.refresh_from_db()
    return {
        "id": series.id,
        "status": series.status,
        "pauseReason": series.pause_reason,
        "lastError": series.last_error or None,
        "frequency": series.frequency,
        "interval": series.interval,
        "weekdays": series.weekdays,
        "startsAt": format_instant(series.starts_at),
        "timezone": series.timezone,
        "endsOn": series.ends_on.isoformat() if series.ends_on else None,
        "maxOccurrences": series.max_occurrences,
        "nextOccurrenceAt": format_instant(_slot_after_the_upcoming_post(series)),
        "occurrenceCount": series.occurrence_count,
        "userId": None if series.created_by_id is None else str(series.created_by_id),
        "contentType": "TEXT",
        "text": "Every time",
        "mediaUrls": [],
        "mediaAltTexts": [],
        "thumbnailUrl": None,
        "platformTypes": ["MASTODON"],
        "platforms": [
            {
                "platform": "MASTODON",
                "connectionId": series.template["targets"][0]["accountId"],
                "pageId": None,
                "accountName": "Masto",
                "text": "Every time",
            }
        ],
        "createdAt": format_instant(series.created_at),
        "updatedAt": format_instant(series.updated_at),
    }


# --- create ----------------------------------------------------------------------------------


def test_create_starts_a_series_with_the_post_as_first_occurrence(api: Any, workspace: Any, masto: Any) -> None:
    when = NOW + dt.timedelta(hours=2)
    payload = series_body(masto, when, {"frequency": "WEEKLY", "weekdays": ["FRIDAY"], "maxOccurrences": 5})
    payload["timezone"] = "Europe/Berlin"
    response = api.post(POSTS, payload, format="json")
    assert response.status_code == 201, response.json()
    series = RecurringPost.objects.get()
    post = Post.objects.get()
    assert response.json() == {
        "postId": post.id,
        "status": "SCHEDULED",
        "queuedPlatforms": [],
        "skippedPlatforms": [],
        "isScheduled": True,
        "scheduledAt": iso(when),
        "recurringPostId": series.id,
    }
    assert post.recurring_post_id == series.id and post.occurrence_at == when and post.status == "SCHEDULED"
    expected = record(series)
    assert expected["weekdays"] == ["MONDAY", "FRIDAY"]  # the first post's weekday is always included
    # the first occurrence is created (the post); the next one not created yet is Friday's
    friday = dt.datetime(2026, 1, 9, 14, tzinfo=dt.UTC)
    assert (expected["status"], expected["nextOccurrenceAt"], expected["occurrenceCount"]) == ("ACTIVE", iso(friday), 1)
    assert (expected["timezone"], expected["maxOccurrences"], expected["endsOn"]) == ("Europe/Berlin", 5, None)
    assert api.get(f"{SERIES}/{series.id}").json() == expected
    # post.scheduled carries the first occurrence, linked to its series.
    [event] = scheduled_events(workspace.id)
    assert event == post_record(Post.objects.get()) and event["recurringPostId"] == series.id
    assert event["occurrenceAt"] == iso(when)


def test_create_daily_defaults(api: Any, masto: Any) -> None:
    series = start(api, masto, NOW + dt.timedelta(hours=1), {"frequency": "DAILY", "endsOn": "2026-01-20"})
    assert (series.interval, series.weekdays, series.ends_on) == (1, [], dt.date(2026, 1, 20))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"saveAsDraft": True}, "recurrence: a recurring series cannot be saved as a draft (saveAsDraft)"),
        ({"scheduledAt": None}, "scheduledAt: a recurring series needs a future scheduledAt (its first occurrence)"),
        ({"scheduledAt": "2026-01-05T11:00:00Z"}, "scheduledAt: a recurring series needs a future scheduledAt"),
        (
            {"recurrence": {"frequency": "DAILY", "endsOn": "2026-01-10", "maxOccurrences": 3}},
            "recurrence.endsOn: give endsOn or maxOccurrences, not both",
        ),
        (
            {"recurrence": {"frequency": "DAILY", "endsOn": "2026-01-04"}},
            "recurrence.endsOn: is before the first post (2026-01-05 in UTC)",
        ),
        ({"recurrence": {"frequency": "DAILY", "weekdays": ["MONDAY"]}}, "recurrence.weekdays: only with frequency"),
        ({"recurrence": {"frequency": "HOURLY"}}, "recurrence.frequency"),
        ({"recurrence": {"frequency": "DAILY", "interval": 31}}, "recurrence.interval"),
        ({"recurrence": {"frequency": "DAILY", "interval": 0}}, "recurrence.interval"),
        ({"recurrence": {"frequency": "DAILY", "maxOccurrences": 1}}, "recurrence.maxOccurrences"),
        ({"recurrence": {"frequency": "DAILY", "maxOccurrences": 366}}, "recurrence.maxOccurrences"),
        ({"recurrence": {"frequency": "WEEKLY", "weekdays": ["FUNDAY"]}}, "recurrence.weekdays"),
        ({"recurrence": {"interval": 2}}, "recurrence.frequency"),
        ({"recurrence": "DAILY"}, "recurrence"),
    ],
)
def test_create_refusals(api: Any, masto: Any, change: dict[str, Any], message: str) -> None:
    payload = {**series_body(masto, NOW + dt.timedelta(hours=1), {"frequency": "DAILY"}), **change}
    response = api.post(POSTS, payload, format="json")
    assert response.status_code == 400, response.json()
    body = response.json()
    assert body["statusCode"] == 400 and body["error"] == "Bad Request"
    assert any(m.startswith(message) for m in body["message"]), body
    assert not Post.objects.exists() and not RecurringPost.objects.exists()


def test_create_refuses_tiktok(api: Any, workspace: Any, masto: Any) -> None:
    tiktok = account(workspace, "TIKTOK")
    video = uploaded(workspace, "video")
    payload = series_body(
        masto,
        NOW + dt.timedelta(hours=1),
        {"frequency": "DAILY"},
        contentType="VIDEO",
        mediaUrls=[video],
        platforms=["MASTODON", "TIKTOK"],
        tiktokConnectionIds=[tiktok.id],
        tiktokConfigs=[{"privacyLevel": "SELF_ONLY"}],
    )
    response = api.post(POSTS, payload, format="json")
    assert response.status_code == 400, response.json()
    assert response.json()["message"] == ["recurrence: TIKTOK posts cannot recur; remove TIKTOK from platforms"]
    # Also when the TIKTOK target would be skipped for want of an account.
    payload = series_body(masto, NOW + dt.timedelta(hours=1), {"frequency": "DAILY"}, platforms=["MASTODON", "TIKTOK"])
    response = api.post(POSTS, payload, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == ["recurrence: TIKTOK posts cannot recur; remove TIKTOK from platforms"]
    assert not RecurringPost.objects.exists() and not Post.objects.exists()


def test_ends_on_the_first_day_is_allowed(api: Any, masto: Any) -> None:
    zone_payload = {"timezone": "America/New_York"}
    # 02:00 UTC on 6 January is still 5 January in New York.
    when = dt.datetime(2026, 1, 6, 2, tzinfo=dt.UTC)
    series = start(api, masto, when, {"frequency": "DAILY", "endsOn": "2026-01-05"}, **zone_payload)
    assert series.ends_on == dt.date(2026, 1, 5)


# --- list and get ----------------------------------------------------------------------------


def test_list_filters_paginates_and_counts_queries(api: Any, masto: Any, clock: Any) -> None:
    made = []
    for i in range(3):
        clock.shift(dt.timedelta(seconds=1))
        made.append(start(api, masto, NOW + dt.timedelta(hours=i + 1), {"frequency": "DAILY"}))
    api.post(f"{SERIES}/{made[0].id}/pause", format="json")
    body = api.get(SERIES).json()
    assert body == {"recurringPosts": [record(s) for s in reversed(made)], "total": 3, "hasMore": False}
    assert api.get(SERIES, {"statuses": "PAUSED"}).json()["recurringPosts"] == [record(made[0])]
    both = api.get(f"{SERIES}?statuses[0]=PAUSED&statuses[1]=ENDED").json()
    assert both["total"] == 1
    repeated = api.get(f"{SERIES}?statuses=ACTIVE&statuses=PAUSED&limit=2&offset=1").json()
    assert repeated["total"] == 3 and repeated["hasMore"] is False
    assert [s["id"] for s in repeated["recurringPosts"]] == [made[1].id, made[0].id]
    assert api.get(SERIES, {"limit": 1}).json()["hasMore"] is True


def test_list_runs_a_fixed_number_of_queries(api: Any, masto: Any) -> None:
    for i in range(6):
        start(api, masto, NOW + dt.timedelta(hours=i + 1), {"frequency": "DAILY"})
    with CaptureQueriesContext(connection) as one:
        assert len(api.get(SERIES, {"limit": 1}).json()["recurringPosts"]) == 1
    with CaptureQueriesContext(connection) as hundred:
        assert len(api.get(SERIES, {"limit": 100}).json()["recurringPosts"]) == 6
    assert len(one) == len(hundred)
    series_queries = [q["sql"] for q in hundred.captured_queries if "posts_recurringpost" in q["sql"]]
    assert len(series_queries) == 2  # the count and the page


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("status=ACTIVE", "property status should not exist"),
        ("foo=1", "property foo should not exist"),
        ("statuses=DONE", "statuses"),
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("offset=-1", "offset"),
        ("limit=x", "limit"),
    ],
)
def test_list_bad_queries(api: Any, query: str, fragment: str) -> None:
    response = api.get(f"{SERIES}?{query}")
    assert response.status_code == 400
    assert any(fragment in m for m in response.json()["message"]), response.json()


def test_get_not_found_across_workspaces(api: Any, masto: Any, client_for: Any, other_workspace: Any) -> None:
    series = start(api, masto, NOW + dt.timedelta(hours=1), {"frequency": "DAILY"})
    stranger = client_for("admin", other_workspace)
    for method, path in (
        ("get", f"{SERIES}/{series.id}"),
        ("get", f"{SERIES}/{series.id}/occurrences"),
        ("post", f"{SERIES}/{series.id}/pause"),
        ("post", f"{SERIES}/{series.id}/resume"),
        ("delete", f"{SERIES}/{series.id}"),
    ):
        response = getattr(stranger, method)(path)
        assert response.status_code == 404, (method, path)
        assert response.json() == {
            "statusCode": 404,
            "error": "Not Found",
            "message": "Recurring post not found",
            "code": "not_found",
        }
    assert stranger.get(SERIES).json() == {"recurringPosts": [], "total": 0, "hasMore": False}
    series.refresh_from_db()
    assert series.status == "ACTIVE" and len(upcoming(series)) == 1
    assert api.get(f"{SERIES}/rec_missing").status_code == 404


def test_anonymous_401_and_roles(anon: Any, api: Any, masto: Any, client_for: Any) -> None:
    series = start(api, masto, NOW + dt.timedelta(hours=1), {"frequency": "DAILY"})
    paths = [
        ("get", SERIES),
        ("get", f"{SERIES}/{series.id}"),
        ("get", f"{SERIES}/{series.id}/occurrences"),
        ("post", f"{SERIES}/{series.id}/pause"),
        ("post", f"{SERIES}/{series.id}/resume"),
        ("delete", f"{SERIES}/{series.id}"),
    ]
    for method, path in paths:
        response = getattr(anon, method)(path)
        assert response.status_code == 401, path
        assert response.json()["message"] == "API key is invalid or missing"
    viewer = client_for("viewer")
    for method, path in paths[:3]:
        assert getattr(viewer, method)(path).status_code == 200, path
    for method, path in paths[3:]:
        response = getattr(viewer, method)(path)
        assert response.status_code == 403, path
        body = response.json()
        assert (body["code"], body["requiredPermission"], body["role"]) == (
            "permission_denied",
            "posts.draft",
            "viewer",
        )
    series.refresh_from_db()
    assert series.status == "ACTIVE"
    contributor = client_for("contributor")
    assert contributor.post(f"{SERIES}/{series.id}/pause", format="json").status_code == 200


# --- pause, resume, delete -------------------------------------------------------------------


def test_pause_deletes_the_upcoming_post_and_is_harmless_twice(api: Any, masto: Any) -> None:
    series = start(api, masto, NOW + dt.timedelta(hours=1), {"frequency": "DAILY"})
    [post] = upcoming(series)
    response = api.post(f"{SERIES}/{series.id}/pause", {}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body == record(series)
    assert (body["status"], body["pauseReason"], body["nextOccurrenceAt"]) == ("PAUSED", "USER", None)
    assert not Post.objects.filter(id=post.id).exists()
    again = api.post(f"{SERIES}/{series.id}/pause", format="json")
    assert again.status_code == 200 and again.json() == body


def test_resume_continues_after_now_without_catch_up(api: Any, masto: Any, workspace: Any, clock: Any) -> None:
    first = NOW + dt.timedelta(hours=1)  # 13:00 daily
    series = start(api, masto, first, {"frequency": "DAILY"})
    api.post(f"{SERIES}/{series.id}/pause", format="json")
    clock.move_to(NOW + dt.timedelta(days=3, hours=2))  # 8 January 14:00: three occurrences missed
    response = api.post(f"{SERIES}/{series.id}/resume", format="json")
    assert response.status_code == 200
    body = response.json()
    assert body == record(series)
    expected_next = dt.datetime(2026, 1, 9, 13, tzinfo=dt.UTC)
    after_it = expected_next + dt.timedelta(days=1)  # the next occurrence not created yet
    assert (body["status"], body["pauseReason"], body["nextOccurrenceAt"]) == ("ACTIVE", None, iso(after_it))
    # The first occurrence was deleted by the pause before it went out: it does not count.
    assert body["occurrenceCount"] == 1
    [post] = upcoming(series)
    assert post.occurrence_at == post.scheduled_at == expected_next
    assert scheduled_events(workspace.id)[-1] == post_record(Post.objects.get(id=post.id))
    again = api.post(f"{SERIES}/{series.id}/resume", format="json")
    assert again.json() == body and len(upcoming(series)) == 1


def test_resume_past_the_end_ends_the_series(api: Any, masto: Any, clock: Any) -> None:
    series = start(api, masto, NOW + dt.timedelta(hours=1), {"frequency": "DAILY", "endsOn": "2026-01-07"})
    api.post(f"{SERIES}/{series.id}/pause", format="json")
    clock.move_to(dt.datetime(2026, 1, 8, tzinfo=dt.UTC))
    body = api.post(f"{SERIES}/{series.id}/resume", format="json").json()
    assert (body["status"], body["pauseReason"], body["nextOccurrenceAt"]) == ("ENDED", None, None)
    assert upcoming(series) == []
    assert api.get(f"{SERIES}/{series.id}/occurrences").json() == {"occurrences": []}
    # Pausing or resuming an ENDED series changes nothing.
    assert api.post(f"{SERIES}/{series.id}/pause", format="json").json()["status"] == "ENDED"
    assert api.post(f"{SERIES}/{series.id}/resume", format="json").json()["status"] == "ENDED"


def test_resume_drops_removed_accounts_or_refuses_when_none_left(api: Any, workspace: Any, masto: Any) -> None:
    sky = account(workspace, "BLUESKY", display_name="Sky")
    series = start(
        api,
        masto,
        NOW + dt.timedelta(hours=1),
        {"frequency": "DAILY"},
        platforms=["MASTODON", "BLUESKY"],
        blueskyConnectionIds=[sky.id],
    )
    api.post(f"{SERIES}/{series.id}/pause", format="json")
    sky.delete()
    body = api.post(f"{SERIES}/{series.id}/resume", format="json").json()
    assert body["status"] == "ACTIVE" and body["platformTypes"] == ["MASTODON"]
    assert [t.platform for t in upcoming(series)[0].targets.all()] == ["MASTODON"]
    api.post(f"{SERIES}/{series.id}/pause", format="json")
    masto.delete()
    response = api.post(f"{SERIES}/{series.id}/resume", format="json")
    assert response.status_code == 400 and response.json()["code"] == "connection_not_found"
    assert "MASTODON account Masto was removed" in response.json()["message"]
    series.refresh_from_db()
    assert series.status == "PAUSED"


def test_resume_refuses_when_the_media_is_gone(api: Any, workspace: Any, masto: Any, clock: Any) -> None:
    from media.models import MediaFile

    image = uploaded(workspace, "image")
    series = start(
        api, masto, NOW + dt.timedelta(hours=1), {"frequency": "DAILY"}, contentType="IMAGE", mediaUrls=[image]
    )
    api.post(f"{SERIES}/{series.id}/pause", format="json")
    MediaFile.objects.filter(public_url=image).delete()  # collected while nothing referenced it
    clock.move_to(NOW + dt.timedelta(days=2))
    response = api.post(f"{SERIES}/{series.id}/resume", format="json")
    assert response.status_code == 400, response.json()
    body = response.json()
    assert (body["statusCode"], body["error"], body["code"]) == (400, "Bad Request", "media_not_found")
    assert image in str(body["message"])
    # Nothing changed: still PAUSED by the user, no occurrence created (the first one, deleted by the
    # pause, no longer counts), no post.scheduled beyond the first.
    after = api.get(f"{SERIES}/{series.id}").json()
    assert (after["status"], after["pauseReason"], after["nextOccurrenceAt"], after["occurrenceCount"]) == (
        "PAUSED",
        "USER",
        None,
        0,
    )
    assert upcoming(series) == [] and len(scheduled_events(workspace.id)) == 1


def test_delete_stops_the_series_keeps_published_posts(api: Any, masto: Any) -> None:
    series = start(api, masto, NOW + dt.timedelta(hours=1), {"frequency": "DAILY"})
    [scheduled] = upcoming(series)
    published = Post.objects.create(
        workspace_id=series.workspace_id,
        status=PostStatus.COMPLETED,
        content_type="TEXT",
        recurring_post=series,
        occurrence_at=NOW - dt.timedelta(days=1),
    )
    response = api.delete(f"{SERIES}/{series.id}")
    assert response.status_code == 200 and response.json() == {"deleted": True}
    assert not RecurringPost.objects.filter(id=series.id).exists()
    assert not Post.objects.filter(id=scheduled.id).exists()
    published.refresh_from_db()
    assert published.status == "COMPLETED" and published.recurring_post_id is None
    assert api.delete(f"{SERIES}/{series.id}").status_code == 404
    assert api.get(f"{SERIES}/{series.id}").status_code == 404


def test_empty_json_bodies_on_actions(api: Any, masto: Any) -> None:
    series = start(api, masto, NOW + dt.timedelta(hours=1), {"frequency": "DAILY"})
    for action in ("pause", "resume"):
        response = api.generic("POST", f"{SERIES}/{series.id}/{action}", "", content_type="application/json")
        assert response.status_code == 200, response.content
    response = api.generic("DELETE", f"{SERIES}/{series.id}", "", content_type="application/json")
    assert response.status_code == 200


# --- occurrences preview ---------------------------------------------------------------------


def test_occurrences_preview(api: Any, masto: Any, clock: Any) -> None:
    first = dt.datetime(2026, 1, 31, 9, tzinfo=dt.UTC)
    series = start(api, masto, first, {"frequency": "MONTHLY"}, timezone="Europe/Berlin")
    body = api.get(f"{SERIES}/{series.id}/occurrences", {"limit": 4}).json()
    assert body == {
        "occurrences": [
            "2026-01-31T09:00:00.000Z",
            "2026-02-28T09:00:00.000Z",
            "2026-03-31T08:00:00.000Z",
            "2026-04-30T08:00:00.000Z",
        ]
    }
    assert len(api.get(f"{SERIES}/{series.id}/occurrences").json()["occurrences"]) == 10
    assert len(api.get(f"{SERIES}/{series.id}/occurrences?limit=100").json()["occurrences"]) == 100
    # Paused: what resuming now would publish (after now).
    api.post(f"{SERIES}/{series.id}/pause", format="json")
    clock.move_to(dt.datetime(2026, 3, 1, tzinfo=dt.UTC))
    assert api.get(f"{SERIES}/{series.id}/occurrences?limit=2").json() == {
        "occurrences": ["2026-03-31T08:00:00.000Z", "2026-04-30T08:00:00.000Z"]
    }
    for query in ("limit=0", "limit=101", "limit=x", "offset=1", "limit=1&limit=2"):
        response = api.get(f"{SERIES}/{series.id}/occurrences?{query}")
        assert response.status_code == 400, query


def test_occurrences_with_max_occurrences(api: Any, masto: Any) -> None:
    series = start(api, masto, NOW + dt.timedelta(hours=1), {"frequency": "WEEKLY", "maxOccurrences": 3})
    body = api.get(f"{SERIES}/{series.id}/occurrences").json()
    assert body == {"occurrences": ["2026-01-05T13:00:00.000Z", "2026-01-12T13:00:00.000Z", "2026-01-19T13:00:00.000Z"]}


def test_garbage_recurrence_never_500(api: Any, masto: Any) -> None:
    for value in (
        None,
        1,
        "x",
        [],
        {},
        {"frequency": None},
        {"frequency": "DAILY", "endsOn": "tomorrow"},
        {"frequency": "WEEKLY", "weekdays": "MONDAY"},
        {"frequency": "DAILY", "interval": "2x"},
    ):
        response = api.post(POSTS, series_body(masto, NOW + dt.timedelta(hours=1), value), format="json")  # type: ignore[arg-type]
        assert response.status_code in (201, 400), (value, response.content)


def test_starting_a_series_needs_posts_schedule(client_for: Any, masto: Any) -> None:
    contributor = client_for("contributor")
    payload = series_body(masto, NOW + dt.timedelta(hours=1), {"frequency": "DAILY"})
    response = contributor.post(POSTS, payload, format="json")
    assert response.status_code == 403, response.json()
    body = response.json()
    assert (body["code"], body["requiredPermission"], body["role"]) == (
        "permission_denied",
        "posts.schedule",
        "contributor",
    )
    assert not Post.objects.exists() and not RecurringPost.objects.exists()
    viewer = client_for("viewer")
    assert viewer.post(POSTS, payload, format="json").json()["requiredPermission"] == "posts.draft"


@pytest.mark.parametrize("series_id", ["rec_" + "x" * 300, "rec%00", "%E2%98%83", "rec_1'--"])
def test_odd_ids_are_404(api: Any, series_id: str) -> None:
    for method, path in (
        ("get", f"{SERIES}/{series_id}"),
        ("get", f"{SERIES}/{series_id}/occurrences"),
        ("post", f"{SERIES}/{series_id}/pause"),
        ("post", f"{SERIES}/{series_id}/resume"),
        ("delete", f"{SERIES}/{series_id}"),
    ):
        response = getattr(api, method)(path)
        assert response.status_code == 404, (method, path, response.content)


def test_a_series_at_the_end_of_the_calendar_never_500(api: Any, masto: Any) -> None:
    # 9999-12-31T20:00Z is already year 10000 in Tokyo: refused.
    payload = series_body(masto, NOW, {"frequency": "WEEKLY"}, timezone="Asia/Tokyo")
    payload["scheduledAt"] = "9999-12-31T20:00:00Z"
    response = api.post(POSTS, payload, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == ["scheduledAt: too far in the future for a recurring series in Asia/Tokyo"]
    # In New York it starts; the rule ends with the calendar (the next local day is year 10000 in UTC).
    payload = series_body(masto, NOW, {"frequency": "DAILY"}, timezone="America/New_York")
    payload["scheduledAt"] = "9999-12-31T01:00:00Z"  # 20:00 on the 30th in New York
    created = api.post(POSTS, payload, format="json").json()
    path = f"{SERIES}/{created['recurringPostId']}"
    assert api.get(f"{path}/occurrences?limit=100").json() == {"occurrences": ["9999-12-31T01:00:00.000Z"]}
    # Skipping the only occurrence there is ends the series.
    assert api.delete(f"{POSTS}/{created['postId']}").json() == {"deleted": True}
    assert api.get(path).json()["status"] == "ENDED"


def test_a_series_platform_carries_its_config_values_as_a_posts_entry_does(api: Any, workspace: Any) -> None:
    """The series record and ``RecurringPostOutput`` come from one declaration; a template platform
    answers its platform's config values under the names a post's entries use."""
    from posts.recurrence.rendering import RecurringPlatformOutput, RecurringPostOutput

    series = RecurringPost.objects.create(
        workspace=workspace,
        frequency="DAILY",
        starts_at=NOW,
        timezone="UTC",
        next_occurrence_at=NOW,
        template={
            "contentType": "VIDEO",
            "text": "Weekly show",
            "targets": [
                {
                    "platform": "YOUTUBE",
                    "accountId": "acc_1",
                    "accountName": "Tube",
                    "text": "Weekly show",
                    "config": {"videoTitle": "Episode", "tags": ["show"]},
                },
                {
                    "platform": "TIKTOK",
                    "accountId": "acc_2",
                    "accountName": "Tok",
                    "text": "Weekly show",
                    "config": {"brandedContentOwnBrand": True},
                },
                {"platform": "MASTODON", "accountId": "acc_3", "accountName": "Masto", "text": "Weekly show"},
            ],
        },
    )
    body = api.get(f"{SERIES}/{series.id}").json()
    assert list(body) == list(RecurringPostOutput().fields)
    youtube, tiktok, masto = body["platforms"]
    assert youtube["youtubeVideoTitle"] == "Episode" and youtube["youtubeTags"] == ["show"]
    assert youtube["youtubePrivacyStatus"] is None and "tiktokTitle" not in youtube
    assert tiktok["tiktokBrandedContentOwnBrand"] is True and tiktok["tiktokBrandedOwnBrand"] is True
    assert list(masto) == ["platform", "connectionId", "pageId", "accountName", "text"]
    documented = list(RecurringPlatformOutput().fields)
    for entry in body["platforms"]:
        assert [key for key in documented if key in entry] == list(entry)
