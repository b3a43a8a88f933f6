"""Webhooks, the events outbox (Event), one Delivery per (event, webhook), and its Attempts."""

from __future__ import annotations

import datetime as dt

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
    # The secret a rotation replaced, still signing beside the new one until it expires (both
    # encrypted at rest the same way); empty when there is no grace period.
    previous_secret = EncryptedTextField(editable=False, blank=True, default="")
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    # The event names this webhook is subscribed to; null means every event (the spec's default).
    events = models.JSONField(null=True, blank=True)
    active = models.BooleanField(default=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    # When webhook.failing went out for the current run of failures: set once per crossing of the
    # threshold (the conditional UPDATE that sets it is the only emitter), cleared by a success
    # or by re-enabling.
    failing_notified_at = models.DateTimeField(null=True, blank=True)
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
        indexes = [
            # The staff dashboard's failing list: the few webhooks past the warning threshold.
            models.Index(
                fields=["-consecutive_failures"], name="webhook_failing", condition=Q(consecutive_failures__gte=15)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.id} → {self.url}"

    def previous_secret_at(self, now: dt.datetime) -> str | None:
        """The rotated-out secret while its grace period runs at ``now``, else None."""
        expires = self.previous_secret_expires_at
        if self.previous_secret and expires is not None and now < expires:
            return str(self.previous_secret)
        return None


class Event(models.Model):
    """One emitted event. ``payload`` is the envelope serialized once; every attempt of every
    delivery sends exactly these bytes (UTF-8). ``seq`` orders the events feed, given once the
    event is committed: see ``webhooks.services.events_seal``."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("evt"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="events")
    name = models.CharField(max_length=64)
    payload = models.TextField()
    created_at = models.DateTimeField()
    seq = models.BigIntegerField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at", "id"]
        indexes = [
            models.Index(fields=["workspace", "-created_at"], name="event_ws_created"),
            # The events feed: one workspace's sealed events in seq order after a cursor, and the
            # few not sealed yet, oldest first.
            models.Index(fields=["workspace", "seq"], name="event_ws_feed", condition=Q(seq__isnull=False)),
            models.Index(
                fields=["workspace", "created_at", "id"], name="event_ws_unsealed", condition=Q(seq__isnull=True)
            ),
            # Pruning past the retention window, oldest first, across workspaces.
            models.Index(fields=["created_at"], name="event_created"),
        ]

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
