"""Scenario switches read from the text actually sent to a platform (DESIGN.md §8)."""

from __future__ import annotations

import time

from django.conf import settings

FAIL = "#sandbox-fail"
FLAKY = "#sandbox-flaky"
UNAUTHORIZED = "#sandbox-unauthorized"


def marker(text: str | None) -> str | None:
    """Which scenario the text asks for: "fail", "flaky", "unauthorized" or None."""
    text = text or ""
    if UNAUTHORIZED in text:
        return "unauthorized"
    if FAIL in text:
        return "fail"
    if FLAKY in text:
        return "flaky"
    return None


def simulate_latency() -> None:
    if settings.SANDBOX_LATENCY_MS > 0:
        time.sleep(settings.SANDBOX_LATENCY_MS / 1000)
