"""Staff view of the audit log: read-only (a record is never changed nor deleted by hand)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from audit.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ["created_at", "organization", "workspace_ref", "action", "actor_type", "actor_label", "target_id"]
    list_filter = ["action", "actor_type", "created_at"]
    search_fields = ["organization__name", "organization__id", "workspace_ref", "actor_id", "target_id", "request_id"]
    date_hierarchy = "created_at"
    list_select_related = ["organization"]
    ordering = ["-created_at", "-id"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in AuditEvent._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
