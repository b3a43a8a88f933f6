from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from core.ids import id_factory
from workspaces.roles import Role


class Workspace(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=id_factory("ws"), editable=False)
    name = models.CharField(max_length=200, unique=True)
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
    """An API key: ``cpk_<lookup>_<secret>``; only SHA-256 of the secret is stored."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("key"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=200)
    role = models.CharField(max_length=20, choices=Role.choices)
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
        constraints = [models.CheckConstraint(condition=Q(role__in=Role.values), name="apikey_role_valid")]

    def __str__(self) -> str:
        return f"{self.name} ({self.public_part})"

    @property
    def public_part(self) -> str:
        return f"cpk_{self.lookup}"
