from __future__ import annotations

from django.db import models

from core.crypto import EncryptedTextField


class IdempotencyRecord(models.Model):
    """The first response to a POST sent with an ``Idempotency-Key``, kept 24 h. The body is kept
    as its JSON text, encrypted like every other secret at rest: a response may carry a token, a
    key or a secret the API shows only once (connect links, webhook secrets), and the replay must
    answer it again, byte for byte."""

    workspace_id = models.CharField(max_length=40)
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    in_progress = models.BooleanField(default=True)
    response_status = models.PositiveSmallIntegerField(null=True)
    response_json = EncryptedTextField(null=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace_id", "key"], name="idempotency_unique_key")]
