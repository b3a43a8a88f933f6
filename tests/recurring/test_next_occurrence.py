"""Issue 29 item 9, as the published clients read a series: ``nextOccurrenceAt`` is the next slot
NOT yet created as a post (the upcoming scheduled post holds the one before it), in the get and
the list alike; and a series' upcoming post published ahead of time moves the series on."""

from __future__ import annotations

import datetime as dt
from typing import Any

import time_machine

from posts.models import PostStatus
from tests.recurring.conftest import POSTS, SERIES, claim_at, iso, start, upcoming

NOW = dt.datetime(2026, 1, 5, 12, 0, tzinfo=dt.UTC)  # a Monday


def _read(api: Any, series_id: str) -> tuple[str | None, str | None]:
    """nextOccurrenceAt as the get and as the list answer it."""
    got = api.get(f"{SERIES}/{series_id}").json()["nextOccurrenceAt"]
    [listed] = [s for s in api.get(SERIES).json()["recurringPosts"] if s["id"] == series_id]
    return got, listed["nextOccurrenceAt"]


def test_next_occurrence_is_the_first_slot_not_created_yet(api: Any, masto: Any) -> None:
    first = NOW + dt.timedelta(hours=1)
    with time_machine.travel(NOW, tick=False):
        series = start(api, masto, first, {"frequency": "DAILY", "maxOccurrences": 3})
        assert [p.occurrence_at for p in upcoming(series)] == [first]  # created: the first post
        assert _read(api, series.id) == (iso(first + dt.timedelta(days=1)),) * 2
    claim_at(first)  # the dispatcher takes the first post and creates the second
    with time_machine.travel(first, tick=False):
        assert [p.occurrence_at for p in upcoming(series)] == [first + dt.timedelta(days=1)]
        assert _read(api, series.id) == (iso(first + dt.timedelta(days=2)),) * 2
    claim_at(first + dt.timedelta(days=1))  # the third and last is created: none is left to create
    with time_machine.travel(first + dt.timedelta(days=1), tick=False):
        assert [p.occurrence_at for p in upcoming(series)] == [first + dt.timedelta(days=2)]
        assert _read(api, series.id) == (None, None)
        assert api.get(f"{SERIES}/{series.id}").json()["status"] == "ACTIVE"


def test_a_series_ending_on_a_date_has_no_next_occurrence_past_it(api: Any, masto: Any) -> None:
    with time_machine.travel(NOW, tick=False):
        series = start(api, masto, NOW + dt.timedelta(hours=1), {"frequency": "DAILY", "endsOn": "2026-01-05"})
        assert _read(api, series.id) == (None, None)


def test_publishing_the_upcoming_post_now_moves_the_series_on(api: Any, masto: Any) -> None:
    first = NOW + dt.timedelta(hours=1)
    with time_machine.travel(NOW, tick=False):
        series = start(api, masto, first, {"frequency": "DAILY"})
        [post] = upcoming(series)
        response = api.post(f"{POSTS}/{post.id}/publish", {}, format="json")
        assert response.status_code == 201, response.json()
        post.refresh_from_db()
        assert (post.status, post.occurrence_at) == (PostStatus.PENDING, first)
        # the next occurrence is scheduled at once, as the dispatcher's claim would have done
        assert [p.occurrence_at for p in upcoming(series)] == [first + dt.timedelta(days=1)]
        assert _read(api, series.id) == (iso(first + dt.timedelta(days=2)),) * 2
    assert claim_at(first) == 0  # at its old time nothing is due: the post went out once, already
    assert [p.occurrence_at for p in upcoming(series)] == [first + dt.timedelta(days=1)]
