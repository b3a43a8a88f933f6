"""Verifying the signature of a webhook delivery (CONTRACT.md §10).

The service signs ``<x-service-timestamp>.<raw body>`` with HMAC-SHA256 keyed by the whole
secret string (``whsec_…`` as UTF-8) and sends ``x-service-signature: sha256=<hex>``. While a
secret is being rotated the header holds two space-separated values (new, then old); any one of
them matching is enough.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

from crosspost.errors import InvalidSignature

SIGNATURE_HEADER = "x-service-signature"
TIMESTAMP_HEADER = "x-service-timestamp"
DEFAULT_TOLERANCE_SECONDS = 300


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The ``sha256=<hex>`` value the service sends for ``body`` at ``timestamp``."""
    mac = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify_webhook(
    headers: Mapping[str, str],
    body: bytes,
    secret: str | list[str],
    *,
    tolerance_seconds: int | None = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> dict[str, Any]:
    """Return the delivered event (``{id, event, createdAt, data}``) when its signature verifies
    against ``secret`` (or any of several secrets); raise :class:`InvalidSignature` otherwise.

    ``headers`` is any mapping (names compared case-insensitively); ``body`` the raw bytes as
    received. A timestamp more than ``tolerance_seconds`` from ``now`` is refused (``None``
    disables the check, e.g. to verify a stored delivery)."""
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    timestamp = lowered.get(TIMESTAMP_HEADER, "").strip()
    header = lowered.get(SIGNATURE_HEADER, "").strip()
    if not timestamp.isdigit():
        raise InvalidSignature(f"missing or malformed {TIMESTAMP_HEADER} header")
    if not header:
        raise InvalidSignature(f"missing {SIGNATURE_HEADER} header")
    if tolerance_seconds is not None:
        current = time.time() if now is None else now
        if abs(current - int(timestamp)) > tolerance_seconds:
            raise InvalidSignature(f"timestamp is more than {tolerance_seconds} s away from now")
    if isinstance(body, str):
        raise TypeError("body must be the raw bytes received, not a decoded string")
    secrets = [secret] if isinstance(secret, str) else list(secret)
    offered = [value for value in header.split() if value.startswith("sha256=")]
    expected = [sign(s, timestamp, body) for s in secrets]
    if not any(hmac.compare_digest(o, e) for o in offered for e in expected):
        raise InvalidSignature("signature does not match")
    try:
        event = json.loads(body)
    except ValueError as exc:
        raise InvalidSignature("signed body is not JSON") from exc
    if not isinstance(event, dict):
        raise InvalidSignature("signed body is not a JSON object")
    return event
