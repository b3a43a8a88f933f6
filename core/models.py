from __future__ import annotations

from django.db import models


class IdempotencyRecord(models.Model):
    """The first response to a POST sent with an ``Idempotency-Key``, kept 24 h."""

    workspace_id = models.CharField(max_length=40)
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    in_progress = models.BooleanField(default=True)
    response_status = models.PositiveSmallIntegerField(null=True)
    response_body = models.JSONField(null=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace_id", "key"], name="idempotency_unique_key")]
