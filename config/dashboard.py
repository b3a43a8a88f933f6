"""The staff dashboard (``/admin/dashboard/``): what is failing, late or stuck, overall or for one
workspace. A fixed number of queries whatever the data (each an aggregate over an index, lists
capped), plus a few Redis reads; nothing here writes. It shows every workspace, so staff need
the ``workspaces.view_dashboard`` permission (superusers have it): without it, 403.

The workspace is chosen by name with the admin's own autocomplete (a search of the workspace
list, a page of names at a time), which answers staff who may view workspaces; the others type
the workspace's id."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin
from django.contrib.admin.widgets import AutocompleteSelect
from django.contrib.auth.decorators import permission_required
from django.db.models import Count, Min, Q, QuerySet
from django.db.models.functions import TruncDate
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from accounts.models import AccountStatus, SocialAccount
from core import health
from engagement.selectors import inbox_state
from posts.models import Post, PostStatus, PostTarget, TargetStatus
from webhooks.models import Delivery, DeliveryStatus, Webhook
from workspaces.models import ApiKey, Workspace
from workspaces.usage import organizations_usage

LIST_LIMIT = 10
TOP_ERROR_CODES = 3
CHART_DAYS = 30


@dataclass
class PlatformPublishes:
    platform: str
    published: int = 0
    failed: int = 0
    top_error_codes: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class DayBar:
    day: dt.date
    completed: int = 0
    partial: int = 0
    failed: int = 0

    @property
    def total(self) -> int:
        return self.completed + self.partial + self.failed


def _posts(workspace_id: str | None) -> QuerySet[Post]:
    posts = Post.objects.all()
    return posts.filter(workspace_id=workspace_id) if workspace_id else posts


def _targets(workspace_id: str | None) -> QuerySet[PostTarget]:
    targets = PostTarget.objects.all()
    return targets.filter(post__workspace_id=workspace_id) if workspace_id else targets


def posts_by_status(workspace_id: str | None, since: dt.datetime) -> dict[str, int]:
    """Posts created since ``since`` by status, every status present (0 when none)."""
    rows = _posts(workspace_id).filter(created_at__gte=since).values("status").annotate(n=Count("*")).order_by()
    counts = dict.fromkeys(PostStatus.values, 0)
    counts.update({row["status"]: row["n"] for row in rows})
    return counts


def publishes_per_platform(workspace_id: str | None, since: dt.datetime) -> list[PlatformPublishes]:
    """Entries published and failed since ``since`` per platform, with the most frequent errorCodes."""
    by_platform: dict[str, PlatformPublishes] = {}
    published = (
        _targets(workspace_id)
        .filter(status=TargetStatus.PUBLISHED, published_at__gte=since)
        .values("platform")
        .annotate(n=Count("*"))
        .order_by()
    )
    for row in published:
        by_platform.setdefault(row["platform"], PlatformPublishes(row["platform"])).published = row["n"]
    failed = (
        _targets(workspace_id)
        .filter(status=TargetStatus.FAILED, updated_at__gte=since)
        .values("platform", "error_code")
        .annotate(n=Count("*"))
        .order_by("platform", "-n", "error_code")
    )
    for row in failed:
        entry = by_platform.setdefault(row["platform"], PlatformPublishes(row["platform"]))
        entry.failed += row["n"]
        if len(entry.top_error_codes) < TOP_ERROR_CODES:
            entry.top_error_codes.append((row["error_code"] or "(none)", row["n"]))
    return sorted(by_platform.values(), key=lambda p: p.platform)


def finished_per_day(workspace_id: str | None, today: dt.date) -> list[DayBar]:
    """Posts that finished on each of the last ``CHART_DAYS`` days (UTC), by final status."""
    first = today - dt.timedelta(days=CHART_DAYS - 1)
    start = dt.datetime.combine(first, dt.time.min, tzinfo=dt.UTC)
    rows = (
        _posts(workspace_id)
        .filter(finished_at__gte=start)
        .annotate(day=TruncDate("finished_at", tzinfo=dt.UTC))
        .values("day", "status")
        .annotate(n=Count("*"))
        .order_by()
    )
    bars = {first + dt.timedelta(days=i): DayBar(first + dt.timedelta(days=i)) for i in range(CHART_DAYS)}
    attribute: dict[str, str] = {
        PostStatus.COMPLETED.value: "completed",
        PostStatus.PARTIAL_FAILURE.value: "partial",
        PostStatus.FAILED.value: "failed",
    }
    for row in rows:
        bar, name = bars.get(row["day"]), attribute.get(str(row["status"]))
        if bar is not None and name is not None:
            setattr(bar, name, getattr(bar, name) + row["n"])
    return list(bars.values())


def scheduler_state(workspace_id: str | None, now: dt.datetime) -> dict[str, Any]:
    """The oldest due post the dispatcher has not claimed, and the oldest due entry waiting for a
    worker: how late the scheduler and the publish workers are."""
    due_posts = _posts(workspace_id).filter(status=PostStatus.SCHEDULED, scheduled_at__lte=now)
    posts = due_posts.aggregate(count=Count("pk"), oldest=Min("scheduled_at"))
    due_targets = _targets(workspace_id).filter(status=TargetStatus.PENDING, next_attempt_at__lte=now)
    targets = due_targets.aggregate(count=Count("pk"), oldest=Min("next_attempt_at"))
    return {
        "due_posts": posts["count"],
        "post_lag_seconds": (now - posts["oldest"]).total_seconds() if posts["oldest"] else 0.0,
        "due_entries": targets["count"],
        "entry_lag_seconds": (now - targets["oldest"]).total_seconds() if targets["oldest"] else 0.0,
    }


def unauthorized_accounts(workspace_id: str | None) -> tuple[int, list[SocialAccount]]:
    accounts = SocialAccount.objects.filter(status=AccountStatus.UNAUTHORIZED)
    if workspace_id:
        accounts = accounts.filter(workspace_id=workspace_id)
    listed = list(accounts.select_related("workspace").order_by("-last_checked_at", "id")[:LIST_LIMIT])
    return (len(listed) if len(listed) < LIST_LIMIT else accounts.count()), listed


def webhook_state(workspace_id: str | None, now: dt.datetime) -> dict[str, Any]:
    """Disabled webhooks, the active ones failing (past the webhook.failing threshold, on their way
    to being disabled), most failures first, and the delivery backlog. The lists are capped; a
    count is asked for only when a list is full."""
    disabled = Webhook.objects.filter(active=False)
    failing = Webhook.objects.filter(active=True, consecutive_failures__gte=settings.WEBHOOK_FAILING_AFTER_FAILURES)
    pending = Delivery.objects.filter(status=DeliveryStatus.PENDING)
    if workspace_id:
        disabled = disabled.filter(workspace_id=workspace_id)
        failing = failing.filter(workspace_id=workspace_id)
        pending = pending.filter(webhook__workspace_id=workspace_id)
    listed = list(disabled.select_related("workspace").order_by("-disabled_at", "id")[:LIST_LIMIT])
    failing_listed = list(
        failing.select_related("workspace").order_by("-consecutive_failures", "-last_failure_at", "id")[:LIST_LIMIT]
    )
    backlog = pending.aggregate(
        count=Count("pk"), due=Count("pk", filter=Q(next_attempt_at__lte=now)), oldest=Min("next_attempt_at")
    )
    oldest = backlog["oldest"]
    return {
        "disabled_count": len(listed) if len(listed) < LIST_LIMIT else disabled.count(),
        "disabled": listed,
        "failing_count": len(failing_listed) if len(failing_listed) < LIST_LIMIT else failing.count(),
        "failing": failing_listed,
        "pending": backlog["count"],
        "due": backlog["due"],
        "oldest_due_lag_seconds": (now - oldest).total_seconds() if oldest and oldest <= now else 0.0,
    }


def dashboard_context(workspace_id: str | None) -> dict[str, Any]:
    now = timezone.now()
    bars = finished_per_day(workspace_id, now.astimezone(dt.UTC).date())
    return {
        "now": now,
        "windows": [
            ("last 24 hours", posts_by_status(workspace_id, now - dt.timedelta(hours=24))),
            ("last 30 days", posts_by_status(workspace_id, now - dt.timedelta(days=30))),
        ],
        "statuses": PostStatus.values,
        "platforms": publishes_per_platform(workspace_id, now - dt.timedelta(hours=24)),
        "scheduler": scheduler_state(workspace_id, now),
        "unauthorized": unauthorized_accounts(workspace_id),
        "webhooks": webhook_state(workspace_id, now),
        "inbox": inbox_state(workspace_id=workspace_id, now=now),
        "queues": health.queue_depths(),
        "beat_age_seconds": health.beat_age_seconds(),
        "chart": chart_geometry(bars),
        "organizations": organizations_usage() if workspace_id is None else [],
    }


def chart_geometry(bars: list[DayBar]) -> dict[str, Any]:
    """Coordinates of a stacked bar chart (server-rendered SVG: no script, no CDN)."""
    width, height, gap = 720, 180, 4
    slot = width / max(1, len(bars))
    peak = max((bar.total for bar in bars), default=0) or 1
    columns = []
    for i, bar in enumerate(bars):
        x, bottom, parts = i * slot + gap / 2, float(height), []
        for name, value in (("completed", bar.completed), ("partial", bar.partial), ("failed", bar.failed)):
            size = height * value / peak
            parts.append({"name": name, "value": value, "y": bottom - size, "height": size})
            bottom -= size
        columns.append({"bar": bar, "x": x, "width": slot - gap, "parts": parts})
    return {"width": width, "height": height, "peak": peak, "columns": columns}


class DashboardFilter(forms.Form):
    def __init__(self, *args: Any, by_name: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        widget: forms.Widget = forms.TextInput(attrs={"placeholder": "a workspace's id", "size": 32})
        if by_name:
            # The autocomplete view names a foreign key to Workspace whose admin may search it;
            # an API key's workspace is one (ApiKeyAdmin.autocomplete_fields).
            widget = AutocompleteSelect(ApiKey._meta.get_field("workspace"), admin.site, attrs={"style": "width: 24em"})
        self.fields["workspace"] = forms.ModelChoiceField(Workspace.objects.all(), required=False, widget=widget)


@permission_required("workspaces.view_dashboard", raise_exception=True)
def dashboard_view(request: HttpRequest) -> HttpResponse:
    workspace_id = request.GET.get("workspace", "").strip()
    form = DashboardFilter({"workspace": workspace_id}, by_name=request.user.has_perm("workspaces.view_workspace"))
    workspace = form.cleaned_data["workspace"] if form.is_valid() else None
    context = {
        **admin.site.each_context(request),
        "title": f"Dashboard: {workspace.name}" if workspace else "Dashboard: all workspaces",
        "form": form,
        "workspace": workspace,
        "workspace_id": workspace_id,
        "unknown_workspace": bool(workspace_id) and workspace is None,
        **dashboard_context(workspace.pk if workspace else None),
    }
    return TemplateResponse(request, "admin/crosspost_dashboard.html", context)
