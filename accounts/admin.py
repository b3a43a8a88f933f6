"""Staff admin: accounts (never their tokens) with check-now and disconnect actions."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts import services
from accounts.disconnect import account_disconnect
from accounts.models import ConnectLink, PostingQueue, QueueSlot, SocialAccount
from audit.actors import staff_actor
from core.errors import ApplicationError
from platforms.base import PlatformError


@admin.register(SocialAccount)
class SocialAccountAdmin(admin.ModelAdmin):
    list_display = ["display_name", "platform", "status", "workspace", "page_id", "connected_at", "last_checked_at"]
    list_filter = ["status", "platform", "workspace"]
    search_fields = ["id", "display_name", "username", "external_id", "page_id", "workspace__name", "workspace__id"]
    list_select_related = ["workspace"]
    exclude = ["access_token", "refresh_token"]
    readonly_fields = [
        "id",
        "workspace",
        "platform",
        "external_id",
        "page_id",
        "display_name",
        "username",
        "avatar_url",
        "status",
        "unauthorized_reason",
        "supports_instagram_audio",
        "scopes",
        "token_expires_at",
        "credentials_extra",
        "disconnected_at",
        "token_revocation",
        "token_revocation_error",
        "connected_at",
        "updated_at",
        "last_checked_at",
    ]
    actions = ["check_now", "disconnect"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # accounts are connected through connect links

    def has_delete_permission(self, request: HttpRequest, obj: SocialAccount | None = None) -> bool:
        return False  # use the "disconnect" action, which goes through the service

    @admin.action(description="Check now (ask the platform whether the token works)")
    def check_now(self, request: HttpRequest, queryset: QuerySet[SocialAccount]) -> None:
        for account in queryset:
            try:
                checked = services.account_verify(account_id=account.id)
            except (ApplicationError, PlatformError) as exc:
                self.message_user(request, f"{account}: check failed ({exc})", messages.WARNING)
                continue
            self.message_user(request, f"{checked}: {checked.status}", messages.INFO)

    @admin.action(description="Disconnect (revoke and drop the tokens; history stays)")
    def disconnect(self, request: HttpRequest, queryset: QuerySet[SocialAccount]) -> None:
        count = 0
        for account in queryset:
            account_disconnect(workspace_id=account.workspace_id, account_id=account.id, actor=staff_actor(request))
            count += 1
        self.message_user(request, f"Disconnected {count} account(s).", messages.SUCCESS)


@admin.register(ConnectLink)
class ConnectLinkAdmin(admin.ModelAdmin):
    list_display = ["id", "workspace", "created_at", "expires_at", "connections"]
    list_filter = ["workspace"]
    search_fields = ["id", "workspace__name", "workspace__id"]
    readonly_fields = ["id", "workspace", "created_at", "expires_at", "connections"]
    exclude = ["token_hash"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


class QueueSlotInline(admin.TabularInline):
    model = QueueSlot
    fields = ["weekday", "local_time"]
    readonly_fields = ["weekday", "local_time"]
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(PostingQueue)
class PostingQueueAdmin(admin.ModelAdmin):
    """Posting queues, to look at: they change through PUT /social-accounts/{id}/queue only, whose
    lock keeps a queued create from reading half a queue."""

    list_display = ["account", "timezone", "updated_at"]
    list_select_related = ["account"]
    search_fields = ["account__id", "account__display_name", "account__workspace__id"]
    readonly_fields = ["account", "timezone", "updated_at"]
    inlines = [QueueSlotInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
