"""The pages a new staff member or developer opens first, in a real browser (Debian's chromium)
against the live server: the API reference (Swagger UI and ReDoc), the admin index, the dashboard
and a connect page load with no failed request, no console error and no request to any other
host; the dashboard's workspace is chosen by name; every admin list fits a 1400 px window."""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model

from accounts.connect import connect_link_create
from accounts.models import PostingQueue, QueueSlot
from analytics.models import AccountSyncState
from audit.actors import system_actor
from audit.services import record
from media.models import AiUsage
from posts.models import PostStatus, RecurringPost, TargetStatus
from tests.browser.test_connect_page import CHROMIUM, CHROMIUM_ARGS
from tests.factories import MembershipFactory, WorkspaceFactory
from tests.factories.analytics import TrackedPostFactory
from tests.factories.media import AiImageJobFactory, MediaFileFactory
from tests.factories.posts import PostFactory, PostTargetFactory, account
from tests.factories.webhooks import WebhookFactory
from webhooks.models import Attempt, Delivery, DeliveryStatus, Event
from workspaces.models import Plan
from workspaces.services import api_key_create

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        shutil.which(CHROMIUM) is None, reason="no chromium on this machine (apt-get install chromium to run this test)"
    ),
]


def staff_session() -> str:
    """The session cookie of a signed-in superuser (made before Playwright starts: its event loop
    keeps the ORM out of the browser's block)."""
    user = get_user_model().objects.create_superuser("staff", "staff@example.com", "not-used-here")
    client = Client()
    client.force_login(user)
    return str(client.cookies["sessionid"].value)


@contextmanager
def staff_browser(site: str, session: str, *, width: int) -> Iterator[tuple[Any, list[str]]]:
    """A page signed in as staff, and the list its problems go to: a request to any other host
    (refused, so nothing leaves the machine), a failed request, an answer of 400 or more, a
    console error, an uncaught script error."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": width, "height": 900})
            context.add_cookies([{"name": "sessionid", "value": session, "url": site}])
            yield _watched(context, site)
        finally:
            browser.close()


def _watched(context: Any, site: str) -> tuple[Any, list[str]]:
    problems: list[str] = []
    ours = urlsplit(site).netloc

    def route(route: Any) -> None:
        if urlsplit(route.request.url).netloc == ours:
            route.continue_()
        else:
            problems.append(f"request to another host: {route.request.url}")
            route.abort()

    context.route("**/*", route)
    # A request the page cancels itself (the autocomplete drops its search for "g" once "glob" is
    # typed) is not a failure; any other is.
    context.on(
        "requestfailed",
        lambda request: (
            problems.append(f"failed: {request.url} {request.failure}")
            if request.failure != "net::ERR_ABORTED"
            else None
        ),
    )
    context.on(
        "response",
        lambda response: problems.append(f"{response.status}: {response.url}") if response.status >= 400 else None,
    )
    context.on(
        "console", lambda message: problems.append(f"console: {message.text}") if message.type == "error" else None
    )
    context.on("weberror", lambda error: problems.append(f"script error: {error.error}"))
    return context.new_page(), problems


def test_first_pages_load_with_no_failed_request_and_nothing_from_another_host(site: str) -> None:
    acme, globex = WorkspaceFactory(name="Acme"), WorkspaceFactory(name="Globex")
    PostFactory(workspace=globex, status=PostStatus.FAILED)
    connect_url = connect_link_create(workspace_id=acme.id).url
    with staff_browser(site, staff_session(), width=1280) as (page, problems):
        seen = visit_first_pages(page, problems, site, connect_url)
    assert seen == {name: [] for name in seen}


def visit_first_pages(page: Any, problems: list[str], site: str, connect_url: str) -> dict[str, list[str]]:
    """The problems that appeared while each page was open, by page."""
    seen: dict[str, list[str]] = {}

    def done(name: str) -> None:
        page.wait_for_load_state("networkidle")
        seen[name] = problems[sum(len(shown) for shown in seen.values()) :]

    page.goto(f"{site}/api/v1/docs/")
    page.locator(".swagger-ui .info .title", has_text="Crosspost API").wait_for()
    page.locator(".swagger-ui .opblock").first.wait_for()
    done("swagger")

    page.goto(f"{site}/api/v1/redoc/")
    page.get_by_role("heading", name="Crosspost API", exact=False).first.wait_for()
    done("redoc")

    page.goto(f"{site}/admin/")
    assert page.get_by_role("link", name="View site").get_attribute("href") == "/api/v1/docs/"
    done("admin index")

    page.get_by_role("link", name="Dashboard").click()
    page.wait_for_url(f"{site}/admin/dashboard/")
    # The workspace is picked by its name: type part of it, choose it, show.
    page.locator(".dashboard-filter .select2-selection").click()
    page.locator(".select2-search__field").fill("glob")
    page.locator(".select2-results__option", has_text="Globex").click()
    page.get_by_role("button", name="Show").click()
    page.get_by_role("heading", name="Dashboard: Globex").wait_for()
    assert page.locator('[data-figure="posts-24h-FAILED"]').inner_text() == "1"
    done("dashboard")

    page.goto(connect_url)
    page.get_by_role("heading", name="Connect your accounts").wait_for()
    done("connect page")
    return seen


def seed_every_list() -> None:
    """At least one row for each list of the admin, with names and addresses as long as real
    ones get."""
    now = timezone.now()
    workspace = WorkspaceFactory(name="Northwind Traders Marketing EMEA")
    user = get_user_model().objects.create_user(
        "marketing.lead.emea", "marketing.lead.emea@northwind-traders.example.com", "not-used-here"
    )
    MembershipFactory(user=user, workspace=workspace, role="admin")
    # A run's earlier transactional tests flush the data migrations' rows (the Default plan) too.
    Plan.objects.get_or_create(
        name="Agency Growth (annual, EUR)",
        defaults={"max_workspaces": 250, "max_connected_accounts": 5000, "max_posts_per_month": 100000},
    )
    with transaction.atomic():
        record(
            actor=system_actor("manage.py create_api_key"),
            action="api_key.create",
            organization_id=workspace.organization_id,
            workspace_id=workspace.id,
            target_type="api_key",
            target_id="key_0123456789abcdef01234567",
            changes={"name": "Production scheduler (eu-west-1)", "role": "editor"},
        )
    issued = api_key_create(workspace=workspace, name="Production scheduler (eu-west-1)", role="editor")
    page_account = account(
        workspace, "FACEBOOK", display_name="Northwind Traders Europe Official", page_id="104857600123456789"
    )
    connect_link_create(workspace_id=workspace.id)
    queue = PostingQueue.objects.create(account=page_account, timezone="America/Argentina/Buenos_Aires")
    QueueSlot.objects.create(queue=queue, weekday=1, local_time=dt.time(9, 30))
    MediaFileFactory(workspace=workspace, uploaded=True, file_name="spring-campaign-hero-image-final.jpg")
    AiImageJobFactory(workspace=workspace)
    AiUsage.objects.create(
        workspace=workspace, month=now.date().replace(day=1), kind="caption", member=f"key:{issued.api_key.id}"
    )
    webhook = WebhookFactory(
        workspace=workspace,
        url="https://automation.northwind-traders.example.com/hooks/crosspost/production",
        consecutive_failures=3,
        last_success_at=now,
        last_failure_at=now,
    )
    event = Event.objects.create(workspace=workspace, name="post.partial_failure", payload="{}", created_at=now)
    delivery = Delivery.objects.create(
        webhook=webhook, event=event, status=DeliveryStatus.FAILED, attempt_count=8, last_attempt_at=now
    )
    Attempt.objects.create(delivery=delivery, status_code=503, duration_ms=1200, created_at=now)
    post = PostFactory(
        workspace=workspace, status=PostStatus.PARTIAL_FAILURE, content_type="TEXT", scheduled_at=now, finished_at=now
    )
    PostTargetFactory(post=post, platform="FACEBOOK", status=TargetStatus.FAILED, error_code="media_rejected")
    RecurringPost.objects.create(
        workspace=workspace,
        status="PAUSED",
        pause_reason="ACCOUNT_UNAUTHORIZED",
        frequency="WEEKLY",
        starts_at=now,
        timezone="Europe/Amsterdam",
        next_occurrence_at=now,
        occurrence_count=12,
        consecutive_failures=2,
    )
    TrackedPostFactory(account=page_account, platform_post_id="104857600123456789_998877665544332211", views=120345)
    AccountSyncState.objects.create(account=page_account, workspace=workspace, last_synced_at=now)
    Group.objects.create(name="Support (tier 2)")
    application = get_application_model().objects.create(
        name="Northwind Traders scheduling assistant",
        user=user,
        client_type="confidential",
        authorization_grant_type="authorization-code",
        redirect_uris="https://assistant.northwind-traders.example.com/oauth/callback",
    )
    access = get_access_token_model().objects.create(
        user=user, application=application, token="a" * 40, expires=now + dt.timedelta(hours=1)
    )
    get_refresh_token_model().objects.create(user=user, application=application, token="r" * 40, access_token=access)
    agent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
    AccessAttempt.objects.create(
        username="marketing.lead.emea", ip_address="203.0.113.77", user_agent=agent, failures_since_start=3
    )
    AccessLog.objects.create(username="marketing.lead.emea", ip_address="203.0.113.77", user_agent=agent)
    AccessFailureLog.objects.create(username="marketing.lead.emea", ip_address="203.0.113.77", user_agent=agent)


def test_every_admin_list_fits_a_1400_px_window(site: str) -> None:
    seed_every_list()
    lists = sorted(f"/admin/{model._meta.app_label}/{model._meta.model_name}/" for model in admin.site._registry)
    measured: dict[str, tuple[int, int, int]] = {}
    with staff_browser(site, staff_session(), width=1400) as (page, problems):
        for path in lists:
            page.goto(f"{site}{path}")
            rows = page.locator("#result_list tbody tr").count()
            scroll, width = page.locator("#changelist .results").evaluate("e => [e.scrollWidth, e.clientWidth]")
            measured[path] = (rows, scroll, width)
    assert problems == []
    assert {path for path, (rows, _, _) in measured.items() if rows == 0} == set()
    assert {path: (scroll, width) for path, (_, scroll, width) in measured.items() if scroll > width} == {}
