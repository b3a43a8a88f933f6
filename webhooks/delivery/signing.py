"""The signature receivers verify (spec §6, CONTRACT.md §10)."""

from __future__ import annotations

import hashlib
import hmac
import time

SIGNATURE_PREFIX = "sha256="


def sign(*, secret: str, timestamp: str, body: bytes) -> str:
    """``sha256=`` + lowercase hex HMAC-SHA256 keyed with the whole secret string (UTF-8) over
    ``<timestamp>.<rawBody>``."""
    mac = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return SIGNATURE_PREFIX + mac.hexdigest()


def signature_header(*, secrets: list[str], timestamp: str, body: bytes) -> str:
    """The ``x-service-signature`` value: one ``sha256=`` value per secret, space-separated, the
    current secret first. One secret gives exactly the spec's single value; during a rotation's
    grace period the old secret signs too (the Standard Webhooks way), so a receiver still
    holding the old secret verifies, and one holding the new secret verifies already."""
    return " ".join(sign(secret=secret, timestamp=timestamp, body=body) for secret in secrets)


def signed_headers(
    *, secret: str, webhook_id: str, event_name: str, body: bytes, previous_secret: str | None = None
) -> dict[str, str]:
    """The headers of one attempt; each attempt is signed afresh with the current time, by
    ``secret`` and, while a rotation's grace period runs, by ``previous_secret`` too."""
    timestamp = str(int(time.time()))
    secrets = [secret] if not previous_secret else [secret, previous_secret]
    return {
        "Content-Type": "application/json",
        "User-Agent": "Crosspost-Webhooks/1.0",
        "x-service-event": event_name,
        "x-service-webhook-id": webhook_id,
        "x-service-timestamp": timestamp,
        "x-service-signature": signature_header(secrets=secrets, timestamp=timestamp, body=body),
    }
