from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q

from core.ids import id_factory
from workspaces.roles import ORGANIZATION_PERMISSIONS, Role

# ``<prefix>_<lookup>_<secret>``: the prefix says which kind of key it is, so that one pasted in
# the wrong place is recognised (and refused) by its text alone.
WORKSPACE_KEY_PREFIX = "cpk"
ORGANIZATION_KEY_PREFIX = "cpo"


class Organization(models.Model):
    """The customer above workspaces: a builder's product, each of whose customers is a workspace.
    Its keys (``cpo_``) act in any of its workspaces."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("org"), editable=False)
    name = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Workspace(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=id_factory("ws"), editable=False)
    name = models.CharField(max_length=200, unique=True)
    organization = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="workspaces")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        # The staff dashboard (config/dashboard.py) shows every workspace's posts, errors and
        # queues: staff see it only with this permission (superusers have every permission).
        permissions = [("view_dashboard", "Can view the operations dashboard")]

    def __str__(self) -> str:
        return self.name


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
