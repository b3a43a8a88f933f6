from __future__ import annotations

from django.db import models
from django.db.models import Q

from core.ids import id_factory
from workspaces.models import Organization


class ActorType(models.TextChoices):
    API_KEY = "api_key", "API key"
    OAUTH = "oauth", "OAuth sign-in"
    STAFF = "staff", "Staff user"
    SYSTEM = "system", "System"  # a command line or a scheduled job


class AuditEvent(models.Model):
    """One change to keys, workspaces, webhooks, accounts, plans, or a post deletion: who (a key,
    a member, a staff user or the system), where (organization, workspace), what (action, target,
    the changed values, never a secret), when, and from which request. Written in the same
    transaction as the change (``audit.services.record``). The workspace is kept as its id, so
    that the record outlives a purged workspace; kept ``AUDIT_RETENTION_DAYS``."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("aud"), editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="audit_events")
    workspace_ref = models.CharField(max_length=40, blank=True, default="", help_text="The workspace's id, if any.")
    actor_type = models.CharField(max_length=10, choices=ActorType.choices)
    actor_id = models.CharField(max_length=60, help_text="Key id, user id, or the command's name.")
    actor_label = models.CharField(max_length=200, blank=True, default="")
    action = models.CharField(max_length=60)
    target_type = models.CharField(max_length=40)
    target_id = models.CharField(max_length=60)
    changes = models.JSONField(default=dict, blank=True)
    request_id = models.CharField(max_length=64, blank=True, default="")
    source_address = models.GenericIPAddressField(null=True, blank=True)
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.CheckConstraint(condition=Q(actor_type__in=ActorType.values), name="audit_actor_valid")]
        indexes = [
            models.Index(fields=["organization", "-created_at", "-id"], name="audit_org_time"),
            models.Index(fields=["organization", "workspace_ref", "-created_at"], name="audit_org_workspace_time"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.target_type} {self.target_id} by {self.actor_type}:{self.actor_id}"
