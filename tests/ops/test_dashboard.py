"""The staff dashboard: staff with its permission only, its figures equal to the tables, per workspace, and a fixed
number of queries whatever the amount of data."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core import health
from tests.factories import WorkspaceFactory
from tests.factories.webhooks import WebhookFactory
from tests.ops.seed import expected_figures, seed

pytestmark = pytest.mark.django_db

FIGURE = re.compile(r'data-figure="([^"]+)">(?:<span[^>]*>)?([^<]*)<')


def shown_figures(html: str) -> dict[str, int]:
    return {name: int(value) for name, value in FIGURE.findall(html) if value.strip().isdigit()}


def test_staff_only(client, django_user_model):
    anonymous = client.get("/admin/dashboard/")
    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith("/admin/login/")
    user = django_user_model.objects.create_user("nonstaff", password="pw-123456789")
    client.force_login(user)
    response = client.get("/admin/dashboard/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def _staff(django_user_model, username: str, *, may_view: bool):
    user = django_user_model.objects.create_user(username, password="pw-123456789", is_staff=True)
    if may_view:
        user.user_permissions.add(
            Permission.objects.get(codename="view_dashboard", content_type__app_label="workspaces")
        )
    return user


def test_staff_need_the_dashboard_permission(client, django_user_model):
    """Every workspace's figures are on it: a staff user without the permission gets 403 and no
    link from the admin index; with it, or as a superuser, the dashboard and the link."""
    client.force_login(_staff(django_user_model, "support", may_view=False))
    assert client.get("/admin/dashboard/").status_code == 403
    assert 'href="/admin/dashboard/"' not in client.get("/admin/").content.decode()

    client.force_login(_staff(django_user_model, "oncall", may_view=True))
    assert client.get("/admin/dashboard/").status_code == 200
    assert 'href="/admin/dashboard/"' in client.get("/admin/").content.decode()

    client.force_login(django_user_model.objects.create_superuser("root", password="pw-123456789"))
    assert client.get("/admin/dashboard/").status_code == 200
    assert 'href="/admin/dashboard/"' in client.get("/admin/").content.decode()


def test_figures_equal_the_tables_overall_and_per_workspace(admin_client):
    ours, theirs = WorkspaceFactory(), WorkspaceFactory()
    seed(ours)
    seed(theirs, scale=2)
    overall = admin_client.get("/admin/dashboard/")
    assert overall.status_code == 200
    expected = expected_figures()
    shown = shown_figures(overall.content.decode())
    assert {name: shown[name] for name in expected} == expected
    # Spot checks against what the seed wrote (3 units overall), so the helper cannot drift.
    assert (shown["failed-TELEGRAM"], shown["published-MASTODON"], shown["due-posts"]) == (6, 3, 3)
    assert (shown["disabled-webhooks"], shown["pending-deliveries"], shown["due-deliveries"]) == (3, 9, 6)

    one = admin_client.get("/admin/dashboard/", {"workspace": ours.pk})
    assert one.status_code == 200
    assert one.context["workspace"] == ours
    expected_one = expected_figures(ours.pk)
    shown_one = shown_figures(one.content.decode())
    assert {name: shown_one[name] for name in expected_one} == expected_one
    assert (shown_one["failed-TELEGRAM"], shown_one["unauthorized-accounts"]) == (2, 1)
    top = {row.platform: row.top_error_codes for row in one.context["platforms"]}
    assert top["TELEGRAM"] == [("invalid_media", 1), ("rate_limited", 1)]
    assert one.context["scheduler"]["post_lag_seconds"] >= 90


def test_an_unknown_workspace_says_so_and_shows_all(admin_client):
    response = admin_client.get("/admin/dashboard/", {"workspace": "ws_nope"})
    assert response.status_code == 200
    assert "No workspace has the id ws_nope" in response.content.decode()


def test_the_chart_counts_finished_posts_per_day(admin_client):
    seed(WorkspaceFactory())
    chart = admin_client.get("/admin/dashboard/").context["chart"]
    bars = [column["bar"] for column in chart["columns"]]
    assert len(bars) == 30
    assert (bars[-1].completed, bars[-1].failed, bars[-1].partial) == (1, 1, 0)
    assert (bars[-3].partial, bars[-3].total) == (1, 1)
    assert sum(bar.total for bar in bars) == 3


def _queries_for_dashboard(admin_client, **params) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert admin_client.get("/admin/dashboard/", params).status_code == 200
    return len(captured)


def test_a_fixed_number_of_queries_whatever_the_data(admin_client):
    workspace = WorkspaceFactory()
    seed(workspace)
    small, small_one = (
        _queries_for_dashboard(admin_client),
        _queries_for_dashboard(admin_client, workspace=workspace.pk),
    )
    seed(workspace, scale=12)  # more than a list holds: the counts come from count(), not the lists
    assert _queries_for_dashboard(admin_client) == small + 2
    assert _queries_for_dashboard(admin_client, workspace=workspace.pk) == small_one + 2
    assert small <= 21  # 20 before the inbox's figures (comment sync lag and backlog: three aggregates)


def test_queue_depths_come_from_the_broker(admin_client):
    from core.redis import get_redis

    get_redis().rpush("publish", "m1", "m2")
    get_redis().rpush("webhooks\x06\x163", "m3")
    queues = admin_client.get("/admin/dashboard/").context["queues"]
    assert queues == {"publish": 2, "webhooks": 1, "analytics": 0, "default": 0}
    assert health.queue_depths() == queues


def test_the_admin_index_links_the_dashboard_and_the_api_reference(admin_client):
    html = admin_client.get("/admin/").content.decode()
    assert 'href="/admin/dashboard/"' in html
    assert 'href="/api/v1/docs/"' in html
    assert 'href="/api/v1/redoc/"' in html


def test_failing_and_disabled_webhooks_are_listed_with_a_bounded_query(admin_client):
    ours, theirs = WorkspaceFactory(), WorkspaceFactory()
    now = timezone.now()
    worst = WebhookFactory(workspace=ours, consecutive_failures=19, last_failure_at=now)
    crossing = WebhookFactory(workspace=ours, consecutive_failures=15, last_failure_at=now)
    WebhookFactory(workspace=ours, consecutive_failures=14)  # not yet failing
    disabled = WebhookFactory(workspace=ours, active=False, consecutive_failures=20, disabled_at=now)
    elsewhere = WebhookFactory(workspace=theirs, consecutive_failures=16, last_failure_at=now)
    response = admin_client.get("/admin/dashboard/")
    state = response.context["webhooks"]
    assert state["failing"] == [worst, elsewhere, crossing] and state["failing_count"] == 3
    assert state["disabled"] == [disabled] and state["disabled_count"] == 1
    html = response.content.decode()
    assert shown_figures(html)["failing-webhooks"] == 3
    assert f"{worst.pk}</a></td><td>{ours.name}, 19 failures in a row" in html
    one = admin_client.get("/admin/dashboard/", {"workspace": ours.pk}).context["webhooks"]
    assert one["failing"] == [worst, crossing] and one["failing_count"] == 2

    few = _queries_for_dashboard(admin_client)
    for _ in range(12):  # more than the list holds: the figure comes from count()
        WebhookFactory(workspace=theirs, consecutive_failures=15, last_failure_at=now)
    assert _queries_for_dashboard(admin_client) == few + 1
    state = admin_client.get("/admin/dashboard/").context["webhooks"]
    assert len(state["failing"]) == 10 and state["failing_count"] == 15


def test_the_dashboards_links_open_objects_whose_ids_look_like_admin_escapes(client, django_user_model):
    """The admin reads ``_22`` … ``_40`` in a URL's id as escapes: a link written with the raw id
    of an object whose random id starts so ("wh_22…", about one in 43) led to "doesn't
    exist". The dashboard quotes ids as the admin does."""
    WebhookFactory(id="wh_22" + "0" * 22, disabled_at=timezone.now(), active=False)
    client.force_login(django_user_model.objects.create_superuser("root", password="pw-123456789"))
    page = client.get("/admin/dashboard/").content.decode()
    links = re.findall(r'href="(/admin/webhooks/webhook/[^"]+/change/)"', page)
    assert links, page[:2000]
    for link in links:
        opened = client.get(link)
        assert opened.status_code == 200, (link, opened.status_code, opened.get("Location"))
