"""Webhooks, the events outbox (Event), one Delivery per (event, webhook), and its Attempts."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from core.crypto import EncryptedTextField
from core.ids import id_factory
from workspaces.models import Workspace


class Webhook(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=id_factory("wh"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="webhooks")
    url = models.CharField(max_length=2048)
    # Scheme and host lower case, default port dropped: what "the same URL" means for the 409.
    normalized_url = models.CharField(max_length=2048, editable=False)
    secret = EncryptedTextField(editable=False)
    active = models.BooleanField(default=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    last_failure_at = models.DateTimeField(null=True, blank=True)
    disabled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "normalized_url"], name="webhook_unique_url_per_workspace"),
        ]

    def __str__(self) -> str:
        return f"{self.id} → {self.url}"


class Event(models.Model):
    """One emitted event. ``payload`` is the envelope serialized once; every attempt of every
    delivery sends exactly these bytes (UTF-8)."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("evt"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="events")
    name = models.CharField(max_length=64)
    payload = models.TextField()
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at", "id"]
        indexes = [models.Index(fields=["workspace", "-created_at"], name="event_ws_created")]

    def __str__(self) -> str:
        return f"{self.id} {self.name}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class Delivery(models.Model):
    """The obligation to get one event to one webhook: retried until a 2xx or the attempts run out.

    ``next_attempt_at`` is when it is due; ``lease_until`` is set by the worker sending it (a claim);
    ``swept_at`` by the sweeper when it re-enqueues a delivery whose task was lost."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("dlv"), editable=False)
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempt_count = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    swept_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "deliveries"
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(
                fields=["next_attempt_at"], name="delivery_pending_due", condition=Q(status=DeliveryStatus.PENDING)
            ),
            models.Index(fields=["webhook", "-created_at"], name="delivery_webhook_created"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=DeliveryStatus.values), name="delivery_status_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.status})"


class Attempt(models.Model):
    """One HTTP POST of a delivery. ``status_code`` is null when no response arrived."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempts")
    status_code = models.PositiveIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField()
    error = models.TextField(blank=True, default="")
    response_body = models.TextField(blank=True, default="")
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"attempt of {self.delivery_id}: {self.status_code or self.error}"
