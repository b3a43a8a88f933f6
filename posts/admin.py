from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from core.errors import ApplicationError
from posts.models import Post, PostTarget, RecurringPost, RecurringStatus


class PostTargetInline(admin.TabularInline):
    model = PostTarget
    extra = 0
    fields = ("platform", "account", "status", "platform_post_id", "error_code", "error_message", "attempts")
    readonly_fields = fields
    can_delete = False


@admin.register(Post)
class PostAdmin(admin.ModelAdmin):
    list_display = ("id", "workspace", "status", "content_type", "scheduled_at", "created_at")
    list_filter = ("status", "content_type")
    search_fields = ("id", "workspace__id")
    inlines = [PostTargetInline]
    readonly_fields = ("created_at", "updated_at", "finished_at")


@admin.register(RecurringPost)
class RecurringPostAdmin(admin.ModelAdmin):
    """Series with their status and next occurrence; pause and resume go through the services
    (the upcoming post is deleted or created exactly as through the API)."""

    list_display = (
        "id",
        "workspace",
        "status",
        "pause_reason",
        "frequency",
        "interval",
        "next_occurrence_at",
        "occurrence_count",
        "consecutive_failures",
    )
    list_filter = ("status", "pause_reason", "frequency")
    search_fields = ("id", "workspace__id")
    ordering = ("-created_at", "-id")
    actions = ["pause_series", "resume_series"]
    readonly_fields = (
        "status",
        "pause_reason",
        "last_error",
        "next_occurrence_at",
        "occurrence_count",
        "consecutive_failures",
        "created_at",
        "updated_at",
    )

    @admin.action(description="Pause the selected series (deletes their upcoming posts)")
    def pause_series(self, request: HttpRequest, queryset: QuerySet[RecurringPost]) -> None:
        from posts.recurrence import series_pause

        paused = 0
        for series in queryset.filter(status=RecurringStatus.ACTIVE):
            series_pause(workspace_id=series.workspace_id, series_id=series.id)
            paused += 1
        self.message_user(request, f"{paused} series paused.", messages.SUCCESS)

    @admin.action(description="Resume the selected series (from the next occurrence after now)")
    def resume_series(self, request: HttpRequest, queryset: QuerySet[RecurringPost]) -> None:
        from posts.recurrence import series_resume

        resumed, failed = 0, []
        for series in queryset.filter(status=RecurringStatus.PAUSED):
            try:
                series_resume(workspace_id=series.workspace_id, series_id=series.id)
                resumed += 1
            except ApplicationError as exc:
                failed.append(f"{series.id}: {exc}")
        self.message_user(request, f"{resumed} series resumed.", messages.SUCCESS)
        for problem in failed:
            self.message_user(request, problem, messages.ERROR)
