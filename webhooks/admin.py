"""Staff views: webhooks with their state and recent attempts, and a re-enable action.
The secret is never shown."""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin.utils import quote
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from audit.actors import staff_actor
from core.errors import ApplicationError
from core.fields import format_instant
from webhooks.models import Attempt, Delivery, Webhook
from webhooks.selectors import attempt_recent
from webhooks.services import delivery_redeliver, webhook_update

READ_ONLY_ATTEMPT_FIELDS = ("created_at", "status_code", "duration_ms", "error", "response_body")
RECENT_ATTEMPTS = 20


class AttemptInline(admin.TabularInline):
    model = Attempt
    extra = 0
    max_num = 0
    can_delete = False
    fields = READ_ONLY_ATTEMPT_FIELDS
    readonly_fields = READ_ONLY_ATTEMPT_FIELDS


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "workspace",
        "url",
        "active",
        "consecutive_failures",
        "last_success_at",
        "last_failure_at",
        "disabled_at",
    ]
    list_filter = ["active"]
    search_fields = ["id", "url", "workspace__name", "workspace__id"]
    fields = (
        "id",
        "workspace",
        "url",
        "active",
        "consecutive_failures",
        "created_at",
        "updated_at",
        "last_success_at",
        "last_failure_at",
        "disabled_at",
        "events",
        "failing_notified_at",
        "previous_secret_expires_at",
        "recent_attempts",
    )
    readonly_fields = fields
    actions = ["reenable"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description=f"Recent attempts (last {RECENT_ATTEMPTS})")
    def recent_attempts(self, webhook: Webhook) -> SafeString | str:
        attempts = attempt_recent(webhook_id=webhook.pk, limit=RECENT_ATTEMPTS)
        if not attempts:
            return "No attempts yet."
        rows = format_html_join(
            "",
            '<tr><td>{}</td><td><a href="{}">{}</a></td><td>{}</td><td>{}</td><td>{} ms</td><td>{}</td></tr>',
            (
                (
                    format_instant(attempt.created_at),
                    reverse("admin:webhooks_delivery_change", args=[quote(attempt.delivery_id)]),
                    attempt.delivery_id,
                    attempt.delivery.event.name,
                    attempt.status_code if attempt.status_code is not None else "no response",
                    attempt.duration_ms,
                    attempt.error or "ok",
                )
                for attempt in attempts
            ),
        )
        return format_html(
            "<table><thead><tr><th>Time</th><th>Delivery</th><th>Event</th><th>Status</th><th>Duration</th>"
            "<th>Outcome</th></tr></thead><tbody>{}</tbody></table>",
            rows,
        )

    @admin.action(description="Re-enable (and reset the failure counter)")
    def reenable(self, request: HttpRequest, queryset: QuerySet[Webhook]) -> None:
        count = 0
        for webhook in queryset.select_related("workspace"):
            webhook_update(workspace=webhook.workspace, webhook_id=webhook.pk, active=True, actor=staff_actor(request))
            count += 1
        self.message_user(request, f"Re-enabled {count} webhook(s).", messages.SUCCESS)


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["id", "webhook_url", "event_name", "status", "attempt_count", "created_at", "last_attempt_at"]
    list_filter = ["status", "event__name"]
    search_fields = ["id", "webhook__id", "event__id", "webhook__workspace__id"]
    fields = (
        "id",
        "webhook",
        "event",
        "status",
        "attempt_count",
        "next_attempt_at",
        "lease_until",
        "created_at",
        "last_attempt_at",
        "last_error",
    )
    readonly_fields = fields
    inlines = [AttemptInline]
    actions = ["redeliver"]
    list_select_related = ["webhook", "event"]
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    # The rows' own names ("wh_… → https://…", "evt_… post.published") were one unbreakable line
    # each, wider than the window; the id of each is on its page, and the list searches by it.
    @admin.display(description="webhook", ordering="webhook__url")
    def webhook_url(self, delivery: Delivery) -> str:
        return delivery.webhook.url

    @admin.display(description="event", ordering="event__name")
    def event_name(self, delivery: Delivery) -> str:
        return delivery.event.name

    @admin.action(description="Redeliver (a new delivery of the same event, as POST .../redeliver does)")
    def redeliver(self, request: HttpRequest, queryset: QuerySet[Delivery]) -> None:
        created, refused = 0, []
        for delivery in queryset.select_related("webhook__workspace"):
            try:
                delivery_redeliver(
                    workspace=delivery.webhook.workspace, webhook_id=delivery.webhook_id, delivery_id=delivery.pk
                )
                created += 1
            except ApplicationError as exc:
                refused.append(f"{delivery.pk}: {exc}")
        self.message_user(request, f"{created} redeliver{'y' if created == 1 else 'ies'} queued.", messages.SUCCESS)
        for problem in refused:
            self.message_user(request, problem, messages.WARNING)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Delivery]:
        return super().get_queryset(request).select_related("webhook", "event")
