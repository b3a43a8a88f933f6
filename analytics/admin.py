"""Staff views of the analytics records. Both are derived (written by the sync and refresh tasks
from what the platforms report), so they are shown, never added or edited here."""

from __future__ import annotations

from django.contrib import admin
from django.db import models
from django.http import HttpRequest

from analytics.models import AccountSyncState, TrackedPost


class DerivedRecordAdmin(admin.ModelAdmin):
    """A record the service computes: no add, no edit (a hand-made row would be overwritten by the
    next sync, or be believed until then)."""

    # A platform's links (permalink, thumbnail) are https; saying so is also what Django 5 asks of
    # every forms.URLField (its default scheme turns from http to https in 6.0 and warns until then).
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(TrackedPost)
class TrackedPostAdmin(DerivedRecordAdmin):
    list_display = ["platform", "platform_post_id", "workspace", "published_at", "views", "likes", "last_refreshed_at"]
    list_filter = ["platform"]
    search_fields = ["platform_post_id", "post_id", "workspace__name"]
    list_select_related = ["workspace"]


@admin.register(AccountSyncState)
class AccountSyncStateAdmin(DerivedRecordAdmin):
    list_display = ["account", "status", "last_synced_at", "history_imported_at"]
    list_filter = ["status"]
    list_select_related = ["account"]
