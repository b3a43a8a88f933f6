from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from workspaces.models import ApiKey, Membership, Workspace
from workspaces.services import api_key_create


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["name", "id", "created_at"]
    search_fields = ["name", "id"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "workspace", "role", "is_default", "created_at"]
    list_filter = ["role", "is_default"]
    search_fields = ["user__username", "user__email", "workspace__name", "workspace__id"]
    autocomplete_fields = ["user", "workspace"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Creating a key here shows its plaintext once, in the success message; only the hash is kept."""

    list_display = [
        "name",
        "public_part",
        "workspace",
        "role",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    ]
    list_filter = ["role", ("revoked_at", admin.EmptyFieldListFilter), "workspace"]
    search_fields = ["name", "lookup", "id", "workspace__name"]
    readonly_fields = ["id", "public_part", "created_at", "last_used_at", "revoked_at", "created_by"]
    fields = ["workspace", "name", "role", "expires_at", "rate_limit", *readonly_fields]
    actions = ["revoke_keys"]
    autocomplete_fields = ["workspace"]

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        issued = api_key_create(
            workspace=obj.workspace,
            name=obj.name,
            role=obj.role,
            created_by_id=getattr(request.user, "pk", None),
            expires_at=obj.expires_at,
            rate_limit=obj.rate_limit,
        )
        obj.pk = issued.api_key.pk
        obj.lookup = issued.api_key.lookup
        obj.secret_hash = issued.api_key.secret_hash
        obj._state.adding = False
        messages.warning(request, f"New API key (shown once, copy it now): {issued.plaintext}")

    @admin.action(description="Revoke selected keys")
    def revoke_keys(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        messages.success(request, f"Revoked {count} key(s).")
