from django.contrib import admin

from analytics.models import AccountSyncState, TrackedPost


@admin.register(TrackedPost)
class TrackedPostAdmin(admin.ModelAdmin):
    list_display = ["platform", "platform_post_id", "workspace", "published_at", "views", "likes", "last_refreshed_at"]
    list_filter = ["platform"]
    search_fields = ["platform_post_id", "post_id", "workspace__name"]
    raw_id_fields = ["workspace", "account"]


@admin.register(AccountSyncState)
class AccountSyncStateAdmin(admin.ModelAdmin):
    list_display = ["account", "status", "last_synced_at", "history_imported_at"]
    list_filter = ["status"]
    raw_id_fields = ["account", "workspace"]
