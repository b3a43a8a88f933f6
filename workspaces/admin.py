"""Staff admin for support: organizations with their workspaces, workspaces with their members
and keys, members (also from the user page), API keys of a workspace or of an organization
(created here shown once; revocable; found by name, workspace, organization, or the key or its
public part as a customer pastes it). OAuth applications use django-oauth-toolkit's admin."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from audit.actors import staff_actor
from audit.services import record
from workspaces.models import DEFAULT_PLAN_NAME, ApiKey, Membership, Organization, Plan, Workspace
from workspaces.roles import ORGANIZATION_PERMISSIONS
from workspaces.services import (
    api_key_create,
    api_keys_revoke,
    organization_key_create,
    record_key_change,
    split_key,
)


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


class OrganizationWorkspaceInline(admin.TabularInline):
    model = Workspace
    extra = 0
    can_delete = False
    show_change_link = True
    fields = ("name", "id", "created_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class OrganizationKeyInline(ApiKeyInline):
    verbose_name_plural = "organization keys"


PLAN_LIMIT_FIELDS = [
    "max_workspaces",
    "max_connected_accounts",
    "max_posts_per_month",
    "max_ai_generations_per_month",
    "max_webhooks_per_workspace",
]


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin):
    """Plans and their limits (empty: no limit); every change is recorded in the audit log of each
    organization on the plan, in the same transaction."""

    list_display = ["name", *PLAN_LIMIT_FIELDS, "organization_count", "updated_at"]
    search_fields = ["name", "id"]
    readonly_fields = ["id", "created_at", "updated_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Plan]:
        return super().get_queryset(request).annotate(_organizations=Count("organizations"))

    @admin.display(description="organizations", ordering="_organizations")
    def organization_count(self, obj: Any) -> int:
        return int(getattr(obj, "_organizations", 0))

    def save_model(self, request: HttpRequest, obj: Plan, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        changes = {name: form.cleaned_data.get(name) for name in form.changed_data}
        on_plan = Q(plan=obj)
        if DEFAULT_PLAN_NAME in (obj.name, form.initial.get("name")):
            # An organization with no plan chosen is on the default plan (plans.plan_of): its
            # limits changed too (also when the default plan is renamed away or to).
            on_plan |= Q(plan__isnull=True)
        for organization_id in Organization.objects.filter(on_plan).values_list("id", flat=True):
            record(
                actor=staff_actor(request),
                action="plan.update",
                organization_id=organization_id,
                target_type="plan",
                target_id=obj.pk,
                changes={"plan": obj.name, **changes},
            )


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["name", "id", "plan", "created_at"]
    list_filter = ["plan"]
    search_fields = ["name", "id"]
    ordering = ["name", "id"]
    fields = ["name", "plan"]
    inlines = [OrganizationWorkspaceInline, OrganizationKeyInline]
    list_select_related = ["plan"]

    def save_model(self, request: HttpRequest, obj: Organization, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if "plan" in form.changed_data:
            record(
                actor=staff_actor(request),
                action="organization.plan_change",
                organization_id=obj.pk,
                target_type="organization",
                target_id=obj.pk,
                changes={"plan": obj.plan.name if obj.plan else None},
            )


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["name", "id", "organization", "member_count", "active_key_count", "created_at"]
    search_fields = ["name", "id", "organization__name", "memberships__user__username", "memberships__user__email"]
    ordering = ["name", "id"]  # the list, and the dashboard's choice of a workspace by name
    date_hierarchy = "created_at"
    inlines = [MembershipInline, ApiKeyInline]
    autocomplete_fields = ["organization"]
    list_select_related = ["organization"]

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


class ApiKeyForm(forms.ModelForm):
    """A key belongs to a workspace or to an organization, never both; organization permissions
    are for organization keys only (the table's constraints say the same)."""

    organization_permissions = forms.MultipleChoiceField(
        choices=[(p, p) for p in ORGANIZATION_PERMISSIONS],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="For an organization key only.",
    )

    class Meta:
        model = ApiKey
        fields = ["workspace", "organization", "name", "role", "organization_permissions", "expires_at", "rate_limit"]

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        workspace, organization = cleaned.get("workspace"), cleaned.get("organization")
        if self.instance.pk is None and (workspace is None) == (organization is None):
            raise forms.ValidationError(
                "Choose a workspace (a workspace key) or an organization (an organization key)."
            )
        if workspace is not None and cleaned.get("organization_permissions"):
            raise forms.ValidationError("Organization permissions are for organization keys only.")
        return cleaned


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Creating a key here shows its plaintext once, on the page that answers the add itself; only
    the hash is kept. (Not a message shown after the redirect: a message waits in the session,
    a database row, until a page displays it, or forever if none does.)"""

    list_display = [
        "name",
        "public_part",
        "workspace",
        "organization",
        "role",
        "rate_limit",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    ]
    list_filter = [KeyStatusFilter, "role", ("last_used_at", admin.EmptyFieldListFilter), "created_at"]
    search_fields = [
        "name",
        "lookup",
        "id",
        "workspace__name",
        "workspace__id",
        "organization__name",
        "organization__id",
    ]
    readonly_fields = ["id", "public_part", "created_at", "last_used_at", "revoked_at", "created_by"]
    fields = [
        "workspace",
        "organization",
        "name",
        "role",
        "organization_permissions",
        "expires_at",
        "rate_limit",
        *readonly_fields,
    ]
    form = ApiKeyForm
    actions = ["revoke_keys"]
    autocomplete_fields = ["workspace", "organization"]
    list_select_related = ["workspace", "organization"]

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> list[str]:
        # Which workspace or organization a key belongs to is fixed at creation.
        fixed = ["workspace", "organization"] if obj is not None else []
        return [*fixed, *self.readonly_fields]

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
            record_key_change(api_key=obj, action="api_key.update", actor=staff_actor(request))
            return
        created_by_id = getattr(request.user, "pk", None)
        if obj.organization is not None:
            issued = organization_key_create(
                organization=obj.organization,
                name=obj.name,
                role=obj.role,
                permissions=list(obj.organization_permissions),
                created_by_id=created_by_id,
                expires_at=obj.expires_at,
                rate_limit=obj.rate_limit,
                actor=staff_actor(request),
            )
        else:
            assert obj.workspace is not None, "ApiKeyForm asks for a workspace or an organization"
            issued = api_key_create(
                workspace=obj.workspace,
                name=obj.name,
                role=obj.role,
                created_by_id=created_by_id,
                expires_at=obj.expires_at,
                rate_limit=obj.rate_limit,
                actor=staff_actor(request),
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
        count = api_keys_revoke(ids=list(queryset.values_list("pk", flat=True)), actor=staff_actor(request))
        messages.success(request, f"Revoked {count} key(s).")
