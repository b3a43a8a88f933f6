"""The staff admin: series listed with their status and next occurrence; pause and resume
actions go through the services."""

from __future__ import annotations

import datetime as dt
from typing import Any

import time_machine
from django.contrib.admin.utils import display_for_field, quote

from posts.models import RecurringPost
from tests.recurring.conftest import start, upcoming

NOW = dt.datetime(2026, 6, 1, 8, tzinfo=dt.UTC)
URL = "/admin/posts/recurringpost/"


def test_admin_lists_and_pauses_and_resumes(admin_client: Any, api: Any, masto: Any) -> None:
    with time_machine.travel(NOW, tick=False):
        series = start(api, masto, NOW + dt.timedelta(hours=1), {"frequency": "DAILY"})
        page = admin_client.get(URL)
        assert page.status_code == 200
        assert series.id.encode() in page.content and b"ACTIVE" in page.content
        # The next occurrence is a column of the list, shown as the admin shows datetimes.
        shown = display_for_field(series.next_occurrence_at, RecurringPost._meta.get_field("next_occurrence_at"), "-")
        assert b"column-next_occurrence_at" in page.content and str(shown).encode() in page.content
        # The admin quotes ids in its links: an id such as rec_25… would otherwise read as "rec%…".
        assert admin_client.get(f"{URL}{quote(series.id)}/change/").status_code == 200

        response = admin_client.post(URL, {"action": "pause_series", "_selected_action": [series.id]}, follow=True)
        assert response.status_code == 200 and b"1 series paused." in response.content
        series.refresh_from_db()
        assert (series.status, series.pause_reason) == ("PAUSED", "USER") and upcoming(series) == []
        paused_page = admin_client.get(URL, {"status__exact": "PAUSED"})
        assert series.id.encode() in paused_page.content and b"PAUSED" in paused_page.content

    with time_machine.travel(NOW + dt.timedelta(days=2), tick=False):
        response = admin_client.post(URL, {"action": "resume_series", "_selected_action": [series.id]}, follow=True)
        assert b"1 series resumed." in response.content
    series.refresh_from_db()
    assert series.status == "ACTIVE"
    assert [p.occurrence_at for p in upcoming(series)] == [dt.datetime(2026, 6, 3, 9, tzinfo=dt.UTC)]


def test_admin_resume_reports_a_series_that_cannot_resume(admin_client: Any, api: Any, masto: Any) -> None:
    with time_machine.travel(NOW, tick=False):
        series = start(api, masto, NOW + dt.timedelta(hours=1), {"frequency": "DAILY"})
        api.post(f"/api/v1/recurring-posts/{series.id}/pause", format="json")
        masto.delete()
        response = admin_client.post(URL, {"action": "resume_series", "_selected_action": [series.id]}, follow=True)
    assert b"0 series resumed." in response.content and b"cannot resume" in response.content
    assert RecurringPost.objects.get(id=series.id).status == "PAUSED"
