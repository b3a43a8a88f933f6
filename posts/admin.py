from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from core.errors import ApplicationError
from posts.models import Post, PostTarget, RecurringPost, RecurringStatus
from posts.recurrence.services import series_pause, series_resume
from posts.services.transitions import post_retry


class PostTargetInline(admin.TabularInline):
    model = PostTarget
    extra = 0
    fields = ("platform", "account", "status", "platform_post_id", "error_code", "error_message", "attempts")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Post | None = None) -> bool:
        return False  # a post's entries are set when it is created, through the API


@admin.register(Post)
class PostAdmin(admin.ModelAdmin):
    """Posts with their entries and results. Read-only: every change goes through the services
    (the retry action here calls the same one as ``POST /social-posts/{id}/retry``), so a post's
    page, whatever its state, offers no Save and no new entry."""

    list_display = ("id", "workspace", "status", "content_type", "scheduled_at", "created_at", "finished_at")
    list_filter = ("status", "content_type", "targets__platform", "targets__error_code")
    search_fields = ("id", "workspace__id", "workspace__name", "targets__platform_post_id")
    list_select_related = ("workspace",)
    inlines = [PostTargetInline]
    date_hierarchy = "created_at"
    actions = ["retry_failed_entries"]
    show_full_result_count = False  # no count(*) over every post on each page of the list

    def get_readonly_fields(self, request: HttpRequest, obj: Post | None = None) -> list[str]:
        return [f.name for f in Post._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # posts are created through the API

    def has_change_permission(self, request: HttpRequest, obj: Post | None = None) -> bool:
        # The list keeps the permission (its retry action); a post's own page has nothing to save.
        return obj is None and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Post | None = None) -> bool:
        return False  # deleting bypasses the API's rules (published posts, series)

    @admin.action(description="Retry the failed platform entries of the selected posts")
    def retry_failed_entries(self, request: HttpRequest, queryset: QuerySet[Post]) -> None:
        retried, skipped = 0, []
        for post in queryset.only("id", "workspace_id"):
            try:
                retried += len(post_retry(workspace_id=post.workspace_id, post_id=post.id, platform_ids=None))
            except ApplicationError as exc:
                skipped.append(f"{post.id}: {exc}")
        self.message_user(
            request, f"{retried} failed entr{'y' if retried == 1 else 'ies'} queued again.", messages.SUCCESS
        )
        for problem in skipped:
            self.message_user(request, problem, messages.WARNING)


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
    search_fields = ("id", "workspace__id", "workspace__name")
    list_select_related = ("workspace",)
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

    def get_readonly_fields(self, request: HttpRequest, obj: RecurringPost | None = None) -> list[str]:
        # Editing the rule or content here would skip the service that re-plans the upcoming post.
        return [f.name for f in RecurringPost._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: RecurringPost | None = None) -> bool:
        return obj is None and super().has_change_permission(request, obj)  # every field is read-only

    def has_delete_permission(self, request: HttpRequest, obj: RecurringPost | None = None) -> bool:
        return False  # DELETE /recurring-posts/{id} stops the series and removes its upcoming post

    @admin.action(description="Pause the selected series (deletes their upcoming posts)")
    def pause_series(self, request: HttpRequest, queryset: QuerySet[RecurringPost]) -> None:
        paused = 0
        for series in queryset.filter(status=RecurringStatus.ACTIVE):
            series_pause(workspace_id=series.workspace_id, series_id=series.id)
            paused += 1
        self.message_user(request, f"{paused} series paused.", messages.SUCCESS)

    @admin.action(description="Resume the selected series (from the next occurrence after now)")
    def resume_series(self, request: HttpRequest, queryset: QuerySet[RecurringPost]) -> None:
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
