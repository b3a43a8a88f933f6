"""GET /usage: what an organization (or one workspace) uses of its plan in the current period,
in a fixed number of queries whatever the number of workspaces."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Count, Q, Sum

from accounts.models import SocialAccount
from core.fields import format_instant
from media.models import AiUsage
from webhooks.models import Webhook
from workspaces.models import MonthlyUsage, Organization, Workspace
from workspaces.plans import LIMITS, limit_value, month_start, plan_of


def _by_workspace(rows: Any) -> dict[str, int]:
    return {row["workspace_id"]: int(row["n"] or 0) for row in rows}


def usage_report(*, organization: Organization, workspace: Workspace | None = None) -> dict[str, Any]:
    """The plan, its limits, the period, the totals and one entry per active workspace (only
    ``workspace`` when given: a workspace key sees its own workspace and nothing of its siblings)."""
    plan = plan_of(organization)
    month = month_start()
    start = dt.datetime.combine(month, dt.time.min, tzinfo=dt.UTC)
    end = dt.datetime.combine((month + dt.timedelta(days=32)).replace(day=1), dt.time.min, tzinfo=dt.UTC)
    workspaces = Workspace.objects.filter(organization_id=organization.id, deleted_at__isnull=True)
    if workspace is not None:
        workspaces = workspaces.filter(pk=workspace.pk)
    listed = list(workspaces.order_by("name", "id"))
    ids = [w.id for w in listed]
    accounts = _by_workspace(
        SocialAccount.objects.filter(workspace_id__in=ids).values("workspace_id").annotate(n=Count("id"))
    )
    posts = _by_workspace(
        MonthlyUsage.objects.filter(workspace_id__in=ids, month=month).values("workspace_id").annotate(n=Sum("posts"))
    )
    generations = _by_workspace(
        AiUsage.objects.filter(workspace_id__in=ids, month=month).values("workspace_id").annotate(n=Sum("calls"))
    )
    webhooks = _by_workspace(
        Webhook.objects.filter(workspace_id__in=ids).values("workspace_id").annotate(n=Count("id"))
    )
    items: list[dict[str, Any]] = [
        {
            "id": w.id,
            "name": w.name,
            "externalId": w.external_id,
            "connectedAccounts": accounts.get(w.id, 0),
            "postsPerMonth": posts.get(w.id, 0),
            "aiGenerationsPerMonth": generations.get(w.id, 0),
            "webhooks": webhooks.get(w.id, 0),
        }
        for w in listed
    ]
    totals = {
        "workspaces": len(items),
        "connectedAccounts": sum(i["connectedAccounts"] for i in items),
        "postsPerMonth": sum(i["postsPerMonth"] for i in items),
        "aiGenerationsPerMonth": sum(i["aiGenerationsPerMonth"] for i in items),
    }
    return {
        "organizationId": organization.id,
        "plan": {"id": plan.id, "name": plan.name},
        "period": {"start": format_instant(start), "end": format_instant(end)},
        "limits": {limit.key: limit_value(plan, limit) for limit in LIMITS},
        "usage": totals,
        "workspaces": items,
    }


DASHBOARD_ORGANIZATIONS = 50


def _by_organization(rows: Any) -> dict[str, int]:
    return {row["workspace__organization_id"]: int(row["n"] or 0) for row in rows}


def organizations_usage(*, limit: int = DASHBOARD_ORGANIZATIONS) -> list[dict[str, Any]]:
    """For the staff dashboard: each organization (the ``limit`` with most active workspaces) with
    its plan, and its counts of this month against the plan's limits, in five queries."""
    month = month_start()
    organizations = list(
        Organization.objects.select_related("plan")
        .annotate(active=Count("workspaces", filter=Q(workspaces__deleted_at__isnull=True)))
        .order_by("-active", "name")[:limit]
    )
    ids = [o.id for o in organizations]
    active = {"workspace__organization_id__in": ids, "workspace__deleted_at__isnull": True}
    group = ("workspace__organization_id",)
    accounts = _by_organization(SocialAccount.objects.filter(**active).values(*group).annotate(n=Count("id")))
    posts = _by_organization(MonthlyUsage.objects.filter(**active, month=month).values(*group).annotate(n=Sum("posts")))
    generations = _by_organization(
        AiUsage.objects.filter(**active, month=month).values(*group).annotate(n=Sum("calls"))
    )
    default = None
    rows = []
    for organization in organizations:
        if organization.plan is None and default is None:
            default = plan_of(organization)
        plan = organization.plan or default
        assert plan is not None
        used = {
            "workspaces": int(getattr(organization, "active", 0)),
            "connectedAccounts": accounts.get(organization.id, 0),
            "postsPerMonth": posts.get(organization.id, 0),
            "aiGenerationsPerMonth": generations.get(organization.id, 0),
        }
        rows.append(
            {
                "organization": organization,
                "plan": plan,
                "figures": [
                    (limit.key, used[limit.key], limit_value(plan, limit)) for limit in LIMITS if limit.key in used
                ],
            }
        )
    return rows
