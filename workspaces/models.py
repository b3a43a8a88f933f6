from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.ids import id_factory
from workspaces.roles import ORGANIZATION_PERMISSIONS, Role

# ``<prefix>_<lookup>_<secret>``: the prefix says which kind of key it is, so that one pasted in
# the wrong place is recognised (and refused) by its text alone.
WORKSPACE_KEY_PREFIX = "cpk"
ORGANIZATION_KEY_PREFIX = "cpo"


class Plan(models.Model):
    """What an organization may use: each limit is a number, or empty for no limit. Staff edit
    plans in the admin; every organization has one (the default plan when none was chosen)."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("plan"), editable=False)
    name = models.CharField(max_length=100, unique=True)
    max_workspaces = models.PositiveIntegerField(null=True, blank=True, help_text="Active workspaces; empty: no limit.")
    max_connected_accounts = models.PositiveIntegerField(
        null=True, blank=True, help_text="Connected accounts over every workspace; empty: no limit."
    )
    max_posts_per_month = models.PositiveIntegerField(
        null=True, blank=True, help_text="Posts created per calendar month (UTC); empty: no limit."
    )
    max_ai_generations_per_month = models.PositiveIntegerField(
        null=True, blank=True, help_text="AI captions and images per calendar month (UTC); empty: no limit."
    )
    max_webhooks_per_workspace = models.PositiveIntegerField(
        null=True, blank=True, help_text="Webhooks of one workspace; empty: the service's own limit only."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


DEFAULT_PLAN_NAME = "Default"


class Organization(models.Model):
    """The customer above workspaces: a builder's product, each of whose customers is a workspace.
    Its keys (``cpo_``) act in any of its workspaces."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("org"), editable=False)
    name = models.CharField(max_length=200, unique=True)
    plan = models.ForeignKey(
        Plan,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="organizations",
        help_text="Empty: the default plan (no limits unless staff set some on it).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Workspace(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=id_factory("ws"), editable=False)
    name = models.CharField(max_length=200)
    organization = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="workspaces")
    external_id = models.CharField(
        max_length=200,
        null=True,
        blank=True,
        help_text="The builder's own id of its customer; unique per organization.",
    )
    metadata = models.JSONField(default=dict, blank=True, help_text="The builder's own small JSON object.")
    deleted_at = models.DateTimeField(
        null=True, blank=True, help_text="Deletion requested: inactive (its keys refused) until restored or purged."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        # The staff dashboard (config/dashboard.py) shows every workspace's posts, errors and
        # queues: staff see it only with this permission (superusers have every permission).
        permissions = [("view_dashboard", "Can view the operations dashboard")]
        constraints = [
            # Names were unique over the whole service before organizations made workspaces through
            # the API: unique per organization now, so one organization learns nothing of another's.
            models.UniqueConstraint(fields=["organization", "name"], name="workspace_unique_name_per_organization"),
            models.UniqueConstraint(
                fields=["organization", "external_id"],
                condition=Q(external_id__isnull=False),
                name="workspace_unique_external_id_per_organization",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_active(self) -> bool:
        return self.deleted_at is None


class Membership(models.Model):
    """A Django user's place in a workspace; OAuth sign-ins act with this role."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices)
    is_default = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "workspace"], name="membership_unique_user_workspace"),
            models.UniqueConstraint(fields=["user"], condition=Q(is_default=True), name="membership_one_default"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="membership_role_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"


class ApiKey(models.Model):
    """An API key: ``cpk_<lookup>_<secret>`` of one workspace, or ``cpo_<lookup>_<secret>`` of an
    organization (acting in any of its workspaces, named by ``X-Workspace-Id``, with ``role``);
    only SHA-256 of the secret is stored, the same way for both."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("key"), editable=False)
    workspace = models.ForeignKey(Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="api_keys")
    organization = models.ForeignKey(
        Organization,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="api_keys",
        help_text="Set for an organization key (and then no workspace).",
    )
    name = models.CharField(max_length=200)
    role = models.CharField(
        max_length=20,
        choices=Role.choices,
        help_text="Its role in a workspace (any of its organization's, for an organization key).",
    )
    organization_permissions = ArrayField(
        models.CharField(max_length=40, choices=[(p, p) for p in ORGANIZATION_PERMISSIONS]),
        default=list,
        blank=True,
        help_text="An organization key's own permissions: " + ", ".join(ORGANIZATION_PERMISSIONS) + ".",
    )
    lookup = models.CharField(max_length=32, unique=True, editable=False)
    secret_hash = models.CharField(max_length=64, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    rate_limit = models.PositiveIntegerField(
        null=True, blank=True, help_text="Requests per 60 s window; empty means the service default."
    )

    class Meta:
        verbose_name = "API key"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(role__in=Role.values), name="apikey_role_valid"),
            models.CheckConstraint(
                condition=Q(workspace__isnull=False, organization__isnull=True, organization_permissions=[])
                | Q(workspace__isnull=True, organization__isnull=False),
                name="apikey_of_a_workspace_or_an_organization",
            ),
            models.CheckConstraint(
                condition=Q(organization_permissions__contained_by=list(ORGANIZATION_PERMISSIONS)),
                name="apikey_organization_permissions_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.public_part})"

    @property
    def is_organization_key(self) -> bool:
        return self.organization_id is not None

    @property
    def public_part(self) -> str:
        prefix = ORGANIZATION_KEY_PREFIX if self.is_organization_key else WORKSPACE_KEY_PREFIX
        return f"{prefix}_{self.lookup}"


class DeletionStatus(models.TextChoices):
    PENDING = "pending", "Pending"  # requested; step one (disconnect, cancel, stop) queued
    DEACTIVATED = "deactivated", "Deactivated"  # step one done; purged when the grace period ends
    RESTORED = "restored", "Restored"
    PURGED = "purged", "Purged"


class WorkspaceDeletion(models.Model):
    """A workspace's deletion, a two-step job: step one (``workspaces.deletion_deactivate``)
    disconnects its accounts, cancels its scheduled posts and stops its series; step two
    (``workspaces.deletions_purge``, beat) removes its data once ``purge_after`` has passed,
    unless it was restored before. Kept after the purge (the workspace's id as text), so that the
    job's status stays readable."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("wsdel"), editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="workspace_deletions")
    workspace = models.ForeignKey(Workspace, null=True, blank=True, on_delete=models.SET_NULL, related_name="deletions")
    workspace_ref = models.CharField(max_length=40, help_text="The workspace's id (kept after the purge).")
    status = models.CharField(max_length=20, choices=DeletionStatus.choices, default=DeletionStatus.PENDING)
    requested_at = models.DateTimeField(default=timezone.now)
    deactivated_at = models.DateTimeField(null=True, blank=True)
    purge_after = models.DateTimeField()
    restored_at = models.DateTimeField(null=True, blank=True)
    purged_at = models.DateTimeField(null=True, blank=True)
    accounts_disconnected = models.PositiveIntegerField(default=0)
    posts_cancelled = models.PositiveIntegerField(default=0)
    series_stopped = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-requested_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=DeletionStatus.values), name="workspacedeletion_status_valid"
            ),
            # At most one deletion in progress per workspace.
            models.UniqueConstraint(
                fields=["workspace_ref"],
                condition=Q(status__in=["pending", "deactivated"]),
                name="workspacedeletion_one_open_per_workspace",
            ),
        ]
        indexes = [models.Index(fields=["status", "purge_after"])]

    def __str__(self) -> str:
        return f"deletion of {self.workspace_ref} ({self.status})"


class MonthlyUsage(models.Model):
    """What a workspace used of its organization's plan in one calendar month (UTC) that no table
    keeps a count of by itself: posts created (a deleted post stays counted)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="monthly_usage")
    month = models.DateField(help_text="First day of the calendar month (UTC)")
    posts = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name_plural = "monthly usage"
        ordering = ["-month", "workspace_id"]
        constraints = [models.UniqueConstraint(fields=["workspace", "month"], name="monthlyusage_unique_month")]

    def __str__(self) -> str:
        return f"{self.workspace_id} {self.month:%Y-%m}: {self.posts} posts"
