"""Reads of the webhooks app, always scoped by workspace."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from core.errors import NotFound
from core.pagination import Page, paginate
from webhooks.models import Attempt, Delivery, Webhook
from workspaces.models import Workspace

WEBHOOK_NOT_FOUND = "Webhook not found"


def webhook_list(*, workspace: Workspace) -> QuerySet[Webhook]:
    return Webhook.objects.filter(workspace=workspace).order_by("created_at", "id")


def webhook_get(*, workspace: Workspace, webhook_id: str, for_update: bool = False) -> Webhook:
    queryset = Webhook.objects.filter(workspace=workspace, pk=webhook_id)
    if for_update:
        queryset = queryset.select_for_update()
    webhook = queryset.first()
    if webhook is None:
        raise NotFound(WEBHOOK_NOT_FOUND)
    return webhook


def webhook_secret(*, workspace: Workspace, webhook_id: str) -> str | None:
    """The plaintext secret of a webhook (decrypted), or None when it no longer exists."""
    webhook = Webhook.objects.filter(workspace=workspace, pk=webhook_id).only("secret").first()
    return None if webhook is None else webhook.secret


def delivery_get(*, webhook: Webhook, delivery_id: str) -> Delivery:
    delivery = Delivery.objects.filter(webhook=webhook, pk=delivery_id).first()
    if delivery is None:
        raise NotFound("Delivery not found")
    return delivery


def attempt_recent(*, webhook_id: str, limit: int) -> list[Attempt]:
    """The latest attempts of one webhook across its deliveries, newest first (staff views)."""
    queryset = (
        Attempt.objects.filter(delivery__webhook_id=webhook_id)
        .select_related("delivery__event")
        .only("created_at", "status_code", "duration_ms", "error", "delivery__id", "delivery__event__name")
        .order_by("-created_at", "-id")
    )
    return list(queryset[:limit])


def _with_attempts(queryset: QuerySet[Delivery]) -> QuerySet[Delivery]:
    return (
        queryset.select_related("event")
        .defer("event__payload")
        .prefetch_related(Prefetch("attempts", queryset=Attempt.objects.order_by("created_at", "id")))
    )


def delivery_page(*, workspace: Workspace, webhook_id: str, limit: int, offset: int) -> Page:
    """Deliveries of one webhook, newest first, each with its attempts: a fixed number of queries."""
    webhook = webhook_get(workspace=workspace, webhook_id=webhook_id)
    queryset = _with_attempts(Delivery.objects.filter(webhook=webhook).order_by("-created_at", "-id"))
    return paginate(queryset, limit=limit, offset=offset)
