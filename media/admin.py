from __future__ import annotations

from django.contrib import admin

from media.models import AiImageJob, AiUsage, MediaFile


@admin.register(MediaFile)
class MediaFileAdmin(admin.ModelAdmin):
    list_display = ("id", "workspace", "kind", "mime_type", "size", "source", "uploaded_at", "created_at")
    list_filter = ("kind", "source", "preview_status")
    search_fields = ("id", "key")
    readonly_fields = [f.name for f in MediaFile._meta.fields]

    def has_add_permission(self, request: object) -> bool:
        return False


@admin.register(AiImageJob)
class AiImageJobAdmin(admin.ModelAdmin):
    list_display = ("id", "workspace", "status", "aspect_ratio", "attempts", "created_at", "finished_at")
    list_filter = ("status",)
    search_fields = ("id", "session_id")
    readonly_fields = [f.name for f in AiImageJob._meta.fields]

    def has_add_permission(self, request: object) -> bool:
        return False


@admin.register(AiUsage)
class AiUsageAdmin(admin.ModelAdmin):
    """Read-only: rows are written by the generation services (charged, refunded on failure)."""

    list_display = ("month", "workspace", "member", "kind", "calls", "units", "updated_at")
    list_filter = ("kind", "month")
    list_select_related = ("workspace",)
    search_fields = ("workspace__name", "workspace__id", "member")
    readonly_fields = [f.name for f in AiUsage._meta.fields]

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False
