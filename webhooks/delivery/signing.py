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


def signed_headers(*, secret: str, webhook_id: str, event_name: str, body: bytes) -> dict[str, str]:
    """The headers of one attempt; each attempt is signed afresh with the current time."""
    timestamp = str(int(time.time()))
    return {
        "Content-Type": "application/json",
        "User-Agent": "Crosspost-Webhooks/1.0",
        "x-service-event": event_name,
        "x-service-webhook-id": webhook_id,
        "x-service-timestamp": timestamp,
        "x-service-signature": sign(secret=secret, timestamp=timestamp, body=body),
    }
