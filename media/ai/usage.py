"""AI usage: who spent how many units on what, and the optional monthly quota per workspace.

A generation is charged before the provider is called and refunded if it fails, so the quota
holds under concurrency (a charge that would pass the limit is refused under a lock on the
workspace's row) and a failure costs nothing."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import F, Sum
from django.utils import timezone

from media.ai.errors import AiQuotaExhausted
from media.models import AiUsage, AiUsageKind
from workspaces.models import Workspace
from workspaces.plans import AI_GENERATIONS_PER_MONTH, require_within
from workspaces.principal import Principal

UNITS: dict[str, int] = {AiUsageKind.CAPTION: 2, AiUsageKind.IMAGE: 2}


@dataclass(frozen=True)
class UsageMember:
    """Whom a generation is charged to: ``user:<id>`` or, for a key nobody created, ``key:<id>``."""

    member: str
    user_id: int | None = None
    api_key_id: str | None = None


@dataclass(frozen=True)
class Charge:
    usage_id: int
    units: int


def usage_member_of(principal: Principal) -> UsageMember:
    """The member who signed in, or the one who created the API key, else the key itself."""
    if principal.api_key is not None:
        creator = principal.api_key.created_by_id
        if creator is not None:
            return UsageMember(member=f"user:{creator}", user_id=creator)
        return UsageMember(member=f"key:{principal.api_key.id}", api_key_id=principal.api_key.id)
    assert principal.user_id is not None, "an OAuth principal always has a user"
    return UsageMember(member=f"user:{principal.user_id}", user_id=principal.user_id)


def month_of(instant: dt.datetime) -> dt.date:
    return instant.astimezone(dt.UTC).date().replace(day=1)


def units_used(*, workspace_id: str, month: dt.date) -> int:
    total = AiUsage.objects.filter(workspace_id=workspace_id, month=month).aggregate(total=Sum("units"))["total"]
    return int(total or 0)


@transaction.atomic
def usage_charge(*, workspace_id: str, member: UsageMember, kind: str) -> Charge:
    """Count one call of ``kind`` and its units for the member in this month. With
    ``AI_MONTHLY_UNITS`` set, raises 402 ``ai_quota_exhausted`` instead when the charge would
    take the workspace past it; concurrent charges of one workspace queue on its row lock, so
    the limit is exact. Past the organization plan's monthly AI generation limit: 403
    ``subscription_required`` (nothing charged). Joins the caller's transaction when there is one."""
    units = UNITS[kind]
    month = month_of(timezone.now())
    limit = settings.AI_MONTHLY_UNITS
    if limit is not None:
        Workspace.objects.select_for_update().filter(id=workspace_id).values_list("id", flat=True).first()
        used = units_used(workspace_id=workspace_id, month=month)
        if used + units > limit:
            raise AiQuotaExhausted(
                f"This workspace has used {used} of its {limit} AI units this month; "
                f"this generation needs {units}. The quota renews on the first day of next month (UTC)."
            )
    require_within(AI_GENERATIONS_PER_MONTH, workspace_id=workspace_id)
    row, _ = AiUsage.objects.get_or_create(
        workspace_id=workspace_id,
        month=month,
        kind=kind,
        member=member.member,
        defaults={"user_id": member.user_id, "api_key_id": member.api_key_id},
    )
    AiUsage.objects.filter(id=row.id).update(calls=F("calls") + 1, units=F("units") + units)
    return Charge(usage_id=row.id, units=units)


def usage_refund(*, charge: Charge) -> None:
    """Take back one call and its units (the generation failed). The caller makes sure a charge
    is refunded once."""
    AiUsage.objects.filter(id=charge.usage_id, calls__gte=1, units__gte=charge.units).update(
        calls=F("calls") - 1, units=F("units") - charge.units
    )
