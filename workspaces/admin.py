"""Staff admin for support: workspaces with their members and keys, members (also from the user
page), API keys (created here shown once; revocable; found by name, workspace, or the key or
its public part as a customer pastes it). OAuth applications use django-oauth-toolkit's admin."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from workspaces.models import ApiKey, Membership, Workspace
from workspaces.services import api_key_create, api_keys_revoke, split_key


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


class ApiKeyInline(admin.TabularInline):
    """The workspace's keys at a glance; keys are created and changed on their own page."""

    model = ApiKey
    extra = 0
    can_delete = False
    show_change_link = True
    fields = ("name", "public_part", "role", "created_at", "last_used_at", "expires_at", "revoked_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["name", "id", "member_count", "active_key_count", "created_at"]
    search_fields = ["name", "id", "memberships__user__username", "memberships__user__email"]
    ordering = ["name", "id"]  # the list, and the dashboard's choice of a workspace by name
    date_hierarchy = "created_at"
    inlines = [MembershipInline, ApiKeyInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Workspace]:
        return (
            super()
            .get_queryset(request)
            .annotate(
                _members=Count("memberships", distinct=True),
                _active_keys=Count("api_keys", filter=Q(api_keys__revoked_at__isnull=True), distinct=True),
            )
        )

    @admin.display(description="members", ordering="_members")
    def member_count(self, obj: Any) -> int:
        return int(obj._members)

    @admin.display(description="unrevoked keys", ordering="_active_keys")
    def active_key_count(self, obj: Any) -> int:
        return int(obj._active_keys)


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "workspace", "role", "is_default", "created_at"]
    list_filter = ["role", "is_default"]
    search_fields = ["user__username", "user__email", "workspace__name", "workspace__id"]
    autocomplete_fields = ["user", "workspace"]


class UserMembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["workspace"]
    verbose_name_plural = "workspace memberships"


User = get_user_model()
if admin.site.is_registered(User):
    admin.site.unregister(User)


@admin.register(User)
class UserWithMembershipsAdmin(UserAdmin):
    """Django's user admin, plus the workspaces a member reaches and their role in each."""

    inlines = [*UserAdmin.inlines, UserMembershipInline]


class KeyStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("active", "Active"), ("expired", "Expired"), ("revoked", "Revoked")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> QuerySet[ApiKey]:
        now = timezone.now()
        if self.value() == "active":
            return queryset.filter(revoked_at__isnull=True).filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        if self.value() == "expired":
            return queryset.filter(revoked_at__isnull=True, expires_at__lte=now)
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        return queryset


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Creating a key here shows its plaintext once, on the page that answers the add itself; only
    the hash is kept. (Not a message shown after the redirect: a message waits in the session,
    a database row, until a page displays it, or forever if none does.)"""

    list_display = [
        "name",
        "public_part",
        "workspace",
        "role",
        "rate_limit",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    ]
    list_filter = [KeyStatusFilter, "role", ("last_used_at", admin.EmptyFieldListFilter), "created_at"]
    search_fields = ["name", "lookup", "id", "workspace__name", "workspace__id"]
    readonly_fields = ["id", "public_part", "created_at", "last_used_at", "revoked_at", "created_by"]
    fields = ["workspace", "name", "role", "expires_at", "rate_limit", *readonly_fields]
    actions = ["revoke_keys"]
    autocomplete_fields = ["workspace"]
    list_select_related = ["workspace"]

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[ApiKey], search_term: str
    ) -> tuple[QuerySet[ApiKey], bool]:
        # A customer pastes the whole key or its public part (cpk_<lookup>): find it by the lookup.
        parsed = split_key(search_term)
        if parsed is not None:
            return queryset.filter(lookup=parsed[0]), False
        return super().get_search_results(request, queryset, search_term)

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
        request._issued_api_key = issued.plaintext  # type: ignore[attr-defined]  # read by response_add

    def response_add(self, request: HttpRequest, obj: ApiKey, post_url_continue: str | None = None) -> HttpResponse:
        plaintext = getattr(request, "_issued_api_key", None)
        if plaintext is None:
            return super().response_add(request, obj, post_url_continue)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "New API key",
            "api_key": obj,
            "plaintext": plaintext,
        }
        # Like every admin page, answered with Cache-Control: no-store.
        return TemplateResponse(request, "admin/workspaces/apikey/issued.html", context)

    @admin.action(description="Revoke selected keys")
    def revoke_keys(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        count = api_keys_revoke(ids=list(queryset.values_list("pk", flat=True)))
        messages.success(request, f"Revoked {count} key(s).")
