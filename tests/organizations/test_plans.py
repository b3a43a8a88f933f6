"""Plans (issue 31 item 7): over a limit the creating call answers 403 subscription_required
naming the limit and the plan, exact under concurrency; GET /usage counts against the limits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import transaction
from rest_framework.test import APIClient

from audit.actors import system_actor
from core.errors import SubscriptionRequired
from tests.concurrency import raised, run_concurrently
from tests.factories import OrganizationFactory, WorkspaceFactory
from tests.factories.accounts import SocialAccountFactory
from tests.organizations.conftest import API, bearer
from workspaces.lifecycle import workspace_create
from workspaces.models import MonthlyUsage, Organization, Plan, Workspace
from workspaces.plans import CONNECTED_ACCOUNTS, month_start, post_counted, require_within
from workspaces.services import api_key_create

LIMITED = {"name": "Starter", "max_workspaces": 2, "max_posts_per_month": 1, "max_webhooks_per_workspace": 1}


def _limited(organization: Organization, **limits: Any) -> Plan:
    plan = Plan.objects.create(**{**LIMITED, **limits})
    Organization.objects.filter(pk=organization.pk).update(plan=plan)
    return plan


@pytest.mark.django_db
def test_every_organization_has_the_default_plan_without_limits(builder: APIClient, organization: Organization) -> None:
    usage = builder.get(f"{API}/usage").json()
    assert usage["plan"]["name"] == "Default"
    assert usage["limits"] == {
        "workspaces": None,
        "connectedAccounts": None,
        "postsPerMonth": None,
        "aiGenerationsPerMonth": None,
        "webhooksPerWorkspace": None,
    }


@pytest.mark.django_db
def test_over_a_limit_the_creating_call_is_a_403_naming_the_limit_and_the_plan(
    builder: APIClient, organization: Organization, org_key: Callable[..., str], settings: Any
) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    _limited(organization)
    workspace = WorkspaceFactory(organization=organization)
    account = SocialAccountFactory(workspace=workspace, platform="BLUESKY")
    in_it = bearer(org_key(), workspace.id)
    body = _draft_body(account.id)
    assert in_it.post(f"{API}/social-posts", body, format="json").status_code == 201
    over = in_it.post(f"{API}/social-posts", body, format="json")
    assert over.status_code == 403
    assert over.json() == {
        "statusCode": 403,
        "error": "Forbidden",
        "message": "The Starter plan allows 1 posts this month; 1 are used. Ask for a plan with a higher limit.",
        "code": "subscription_required",
        "limit": "postsPerMonth",
        "plan": "Starter",
        "max": 1,
        "used": 1,
    }
    assert in_it.post(f"{API}/webhooks", {"url": "http://127.0.0.1:9/a"}, format="json").status_code == 201
    hooks = in_it.post(f"{API}/webhooks", {"url": "http://127.0.0.1:9/b"}, format="json").json()
    assert (hooks["code"], hooks["limit"]) == ("subscription_required", "webhooksPerWorkspace")
    assert builder.post(f"{API}/workspaces", {"name": "second"}, format="json").status_code == 201
    third = builder.post(f"{API}/workspaces", {"name": "third"}, format="json").json()
    assert (third["code"], third["limit"], third["plan"]) == ("subscription_required", "workspaces", "Starter")
    usage = builder.get(f"{API}/usage").json()
    assert usage["usage"] == {"workspaces": 2, "connectedAccounts": 1, "postsPerMonth": 1, "aiGenerationsPerMonth": 0}
    mine = next(w for w in usage["workspaces"] if w["id"] == workspace.id)
    assert (mine["postsPerMonth"], mine["webhooks"], mine["connectedAccounts"]) == (1, 1, 1)
    # A deleted post stays counted.
    post_id = Workspace.objects.get(pk=workspace.pk).posts.get().id
    assert in_it.delete(f"{API}/social-posts/{post_id}").status_code == 200
    assert in_it.post(f"{API}/social-posts", body, format="json").status_code == 403


@pytest.mark.django_db
def test_a_workspace_admin_reads_its_own_usage_only(organization: Organization) -> None:
    mine, sibling = WorkspaceFactory(organization=organization), WorkspaceFactory(organization=organization)
    SocialAccountFactory(workspace=sibling)
    admin = bearer(api_key_create(workspace=mine, name="a", role="admin").plaintext)
    usage = admin.get(f"{API}/usage").json()
    assert [w["id"] for w in usage["workspaces"]] == [mine.id] and usage["usage"]["connectedAccounts"] == 0
    editor = bearer(api_key_create(workspace=mine, name="e", role="editor").plaintext).get(f"{API}/usage").json()
    assert (editor["code"], editor["requiredPermission"]) == ("permission_denied", "usage.read")
    assert (
        bearer(api_key_create(workspace=mine, name="a", role="admin").plaintext).get(f"{API}/usage?x=1").status_code
        == 400
    )


@pytest.mark.django_db(transaction=True)
def test_two_creates_at_the_limit_never_both_pass() -> None:
    organization = OrganizationFactory()
    _limited(organization, max_workspaces=1)

    def create(name: str) -> Workspace:
        return workspace_create(
            organization=organization, name=name, external_id=None, metadata={}, actor=system_actor("t")
        )

    results = run_concurrently([lambda: create("one"), lambda: create("two")])
    assert Workspace.objects.filter(organization=organization).count() == 1
    assert [type(e) for e in raised(results)] == [SubscriptionRequired]


@pytest.mark.django_db(transaction=True)
def test_two_accounts_at_the_limit_never_both_pass() -> None:
    organization = OrganizationFactory()
    _limited(organization, max_connected_accounts=1)
    workspace = WorkspaceFactory(organization=organization)

    def connect(n: int) -> None:
        with transaction.atomic():
            require_within(CONNECTED_ACCOUNTS, workspace_id=workspace.id)
            SocialAccountFactory(workspace=workspace, external_id=f"x{n}")

    results = run_concurrently([lambda: connect(1), lambda: connect(2)])
    assert workspace.social_accounts.count() == 1
    assert [type(e) for e in raised(results)] == [SubscriptionRequired]


def _draft_body(account_id: str) -> dict[str, Any]:
    return {
        "contentType": "TEXT",
        "text": "hi",
        "timezone": "UTC",
        "platforms": ["BLUESKY"],
        "saveAsDraft": True,
        "blueskyConnectionIds": [account_id],
    }


def _draft(in_it: APIClient, account_id: str) -> int:
    return int(in_it.post(f"{API}/social-posts", _draft_body(account_id), format="json").status_code)


@pytest.mark.django_db
def test_posts_are_counted_per_month_and_the_default_plan_is_read_as_staff_left_it(
    organization: Organization, org_key: Callable[..., str]
) -> None:
    """Without a post limit a post is counted in one statement (this month's row added, then
    counted up); the default plan is read on every post, so a limit staff set on it (or lift) in
    the admin holds from the next post on, in every process."""
    workspace = WorkspaceFactory(organization=organization)
    account = SocialAccountFactory(workspace=workspace, platform="BLUESKY")
    in_it = bearer(org_key(), workspace.id)
    assert [_draft(in_it, account.id), _draft(in_it, account.id)] == [201, 201]
    assert list(MonthlyUsage.objects.filter(workspace=workspace).values_list("month", "posts")) == [(month_start(), 2)]
    default, _ = Plan.objects.get_or_create(name="Default")
    Plan.objects.filter(pk=default.pk).update(max_posts_per_month=3)
    assert [_draft(in_it, account.id), _draft(in_it, account.id)] == [201, 403]
    Plan.objects.filter(pk=default.pk).update(max_posts_per_month=None)
    assert _draft(in_it, account.id) == 201
    assert MonthlyUsage.objects.get(workspace=workspace).posts == 4
    # The organization's own plan, without a post limit, is its limit, not the default plan's.
    Plan.objects.filter(pk=default.pk).update(max_posts_per_month=1)
    _limited(organization, max_posts_per_month=None)
    assert _draft(in_it, account.id) == 201
    assert MonthlyUsage.objects.get(workspace=workspace).posts == 5


@pytest.mark.django_db(transaction=True)
def test_two_posts_at_the_limit_never_both_pass() -> None:
    organization = OrganizationFactory()
    _limited(organization, max_posts_per_month=1)
    workspace = WorkspaceFactory(organization=organization)

    def count() -> None:
        with transaction.atomic():
            post_counted(workspace_id=workspace.id)

    results = run_concurrently([count, count])
    assert MonthlyUsage.objects.get(workspace=workspace).posts == 1
    assert [type(e) for e in raised(results)] == [SubscriptionRequired]
