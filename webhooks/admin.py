"""Staff views: webhooks with their state and recent attempts, and a re-enable action.
The secret is never shown."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from webhooks.models import Attempt, Delivery, Webhook
from webhooks.services import webhook_update

READ_ONLY_ATTEMPT_FIELDS = ("created_at", "status_code", "duration_ms", "error", "response_body")


class RecentDeliveryInline(admin.TabularInline):
    model = Delivery
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = True
    fields = ("id", "event", "status", "attempt_count", "last_attempt_at", "next_attempt_at", "last_error")
    readonly_fields = fields
    ordering = ["-created_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Delivery]:
        return super().get_queryset(request).select_related("event").defer("event__payload")


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
    )
    readonly_fields = fields
    inlines = [RecentDeliveryInline]
    actions = ["reenable"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Re-enable (and reset the failure counter)")
    def reenable(self, request: HttpRequest, queryset: QuerySet[Webhook]) -> None:
        count = 0
        for webhook in queryset.select_related("workspace"):
            webhook_update(workspace=webhook.workspace, webhook_id=webhook.pk, active=True)
            count += 1
        self.message_user(request, f"Re-enabled {count} webhook(s).", messages.SUCCESS)


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["id", "webhook", "event", "status", "attempt_count", "created_at", "last_attempt_at"]
    list_filter = ["status"]
    search_fields = ["id", "webhook__id", "event__id"]
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

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> QuerySet[Delivery]:
        return super().get_queryset(request).select_related("webhook", "event")
