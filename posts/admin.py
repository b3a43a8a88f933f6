from __future__ import annotations

from django.contrib import admin

from posts.models import Post, PostTarget, RecurringPost


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
    list_display = ("id", "workspace", "status", "frequency", "next_occurrence_at")
    list_filter = ("status", "frequency")
