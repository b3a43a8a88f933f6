"""Plan limits: what an organization's plan allows, checked where a thing is created.

Every creating call that a plan limits (a workspace, a connected account, a post, an AI
generation, a webhook) calls :func:`require_within` inside its own transaction, before it
commits. When the plan sets that limit, the organization's row is locked (``SELECT … FOR
UPDATE``) and the count is read under the lock, so two requests at the limit never both pass:
the second waits for the first to commit and then counts its row. Without a limit nothing is
locked (an unlimited organization never queues on its row). Over the limit: 403
``subscription_required`` naming the limit, the plan, its value and the count.

Posts are counted by :class:`~workspaces.models.MonthlyUsage` (a deleted post stays counted);
the other counts are the rows themselves (AI generations: ``media.AiUsage`` calls, refunded
when a generation fails)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import F, Sum
from django.utils import timezone

from accounts.models import SocialAccount
from core.errors import SubscriptionRequired
from media.models import AiUsage
from webhooks.models import Webhook
from workspaces.models import DEFAULT_PLAN_NAME, MonthlyUsage, Organization, Plan, Workspace


@dataclass(frozen=True)
class Limit:
    key: str  # as the API names it (GET /usage, the 403's ``limit``)
    field: str  # the Plan column
    label: str
    monthly: bool = False


WORKSPACES = Limit("workspaces", "max_workspaces", "workspaces")
CONNECTED_ACCOUNTS = Limit("connectedAccounts", "max_connected_accounts", "connected accounts")
POSTS_PER_MONTH = Limit("postsPerMonth", "max_posts_per_month", "posts this month", monthly=True)
AI_GENERATIONS_PER_MONTH = Limit(
    "aiGenerationsPerMonth", "max_ai_generations_per_month", "AI generations this month", monthly=True
)
WEBHOOKS_PER_WORKSPACE = Limit("webhooksPerWorkspace", "max_webhooks_per_workspace", "webhooks in this workspace")
LIMITS = (WORKSPACES, CONNECTED_ACCOUNTS, POSTS_PER_MONTH, AI_GENERATIONS_PER_MONTH, WEBHOOKS_PER_WORKSPACE)


def month_start(instant: dt.datetime | None = None) -> dt.date:
    """The first day of the calendar month (UTC) of ``instant`` (now)."""
    return (instant or timezone.now()).astimezone(dt.UTC).date().replace(day=1)


def default_plan() -> Plan:
    plan, _ = Plan.objects.get_or_create(name=DEFAULT_PLAN_NAME)
    return plan


def plan_of(organization: Organization) -> Plan:
    """The organization's plan; the default plan when none was chosen."""
    return organization.plan if organization.plan_id is not None and organization.plan else default_plan()


def limit_value(plan: Plan, limit: Limit) -> int | None:
    value = getattr(plan, limit.field)
    return None if value is None else int(value)


# --- counts ------------------------------------------------------------------------------------


def count_of(limit: Limit, *, organization_id: str, workspace_id: str | None = None) -> int:
    """How much of ``limit`` the organization uses now (for the per-workspace limit: the workspace)."""
    month = month_start()
    active = {"workspace__organization_id": organization_id, "workspace__deleted_at__isnull": True}
    if limit is WORKSPACES:
        return Workspace.objects.filter(organization_id=organization_id, deleted_at__isnull=True).count()
    if limit is CONNECTED_ACCOUNTS:
        return SocialAccount.objects.filter(**active).count()
    if limit is POSTS_PER_MONTH:
        total = MonthlyUsage.objects.filter(**active, month=month).aggregate(n=Sum("posts"))["n"]
        return int(total or 0)
    if limit is AI_GENERATIONS_PER_MONTH:
        total = AiUsage.objects.filter(**active, month=month).aggregate(n=Sum("calls"))["n"]
        return int(total or 0)
    assert limit is WEBHOOKS_PER_WORKSPACE and workspace_id is not None
    return Webhook.objects.filter(workspace_id=workspace_id).count()


# --- checks ------------------------------------------------------------------------------------


def _organization_with_plan(*, organization_id: str | None, workspace_id: str | None) -> Organization:
    organizations = Organization.objects.select_related("plan")
    if organization_id is not None:
        return organizations.get(pk=organization_id)
    return organizations.get(workspaces__id=workspace_id)


def require_within(
    limit: Limit, *, organization_id: str | None = None, workspace_id: str | None = None, adding: int = 1
) -> None:
    """Refuse (403 ``subscription_required``) when ``adding`` more would take the organization
    (given, or the workspace's) past ``limit`` of its plan. Runs in the caller's transaction (it
    must be in one): the organization's row stays locked until the caller commits, so the count
    is exact under concurrency. No limit: returns at once, nothing locked."""
    assert connection.in_atomic_block, "require_within runs in the transaction of the creation it guards"
    organization = _organization_with_plan(organization_id=organization_id, workspace_id=workspace_id)
    plan = plan_of(organization)
    maximum = limit_value(plan, limit)
    if maximum is None:
        return
    Organization.objects.select_for_update().filter(pk=organization.pk).values_list("pk", flat=True).first()
    used = count_of(limit, organization_id=organization.pk, workspace_id=workspace_id)
    if used + adding > maximum:
        raise SubscriptionRequired(
            f"The {plan.name} plan allows {maximum} {limit.label}; {used} are used. "
            "Ask for a plan with a higher limit.",
            extra={"limit": limit.key, "plan": plan.name, "max": maximum, "used": used},
        )


# The monthly count when the plan sets no post limit, in one statement: the plan's limit (the
# organization's plan, else the default plan by name, as ``plan_of``) read and, when it is empty,
# this month's row added or counted up. It returns how many rows it counted: 0 when a limit is
# set (or the workspace is unknown), and nothing was written.
_COUNT_UNLIMITED_POST = """
WITH maximum AS (
    SELECT CASE WHEN o.plan_id IS NOT NULL
                THEN (SELECT p.max_posts_per_month FROM {plan} p WHERE p.id = o.plan_id)
                ELSE (SELECT p.max_posts_per_month FROM {plan} p WHERE p.name = %(default)s) END AS value
    FROM {workspace} w JOIN {organization} o ON o.id = w.organization_id
    WHERE w.id = %(workspace)s
), counted AS (
    INSERT INTO {usage} (workspace_id, month, posts)
    SELECT %(workspace)s, %(month)s, 1 FROM maximum WHERE maximum.value IS NULL
    ON CONFLICT (workspace_id, month) DO UPDATE SET posts = {usage}.posts + 1
    RETURNING 1
)
SELECT count(*) FROM counted
"""


def post_counted(*, workspace_id: str) -> None:
    """A post was created in the workspace: refuse it over the plan's monthly post limit, else
    count it in this month's usage (in the caller's transaction). Without a post limit (the
    common case) that is one statement that locks nothing but this month's usage row; with one,
    the organization's row is locked and the month counted under it (:func:`require_within`)."""
    month = month_start()
    sql = _COUNT_UNLIMITED_POST.format(
        plan=Plan._meta.db_table,
        workspace=Workspace._meta.db_table,
        organization=Organization._meta.db_table,
        usage=MonthlyUsage._meta.db_table,
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, {"default": DEFAULT_PLAN_NAME, "workspace": workspace_id, "month": month})
        row = cursor.fetchone()
    if row is not None and row[0]:
        return
    with transaction.atomic():
        require_within(POSTS_PER_MONTH, workspace_id=workspace_id)
        usage, _ = MonthlyUsage.objects.get_or_create(workspace_id=workspace_id, month=month)
        MonthlyUsage.objects.filter(pk=usage.pk).update(posts=F("posts") + 1)
