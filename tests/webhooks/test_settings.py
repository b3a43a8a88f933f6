"""Webhook settings read at start-up: the private-URL switch is refused outside the sandbox, the
retry schedule comes from the environment, and the deadline defaults to the spec's 10 s."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "from django.conf import settings; "
    "print(settings.WEBHOOK_ALLOW_PRIVATE_URLS, settings.WEBHOOK_RETRY_DELAYS, settings.WEBHOOK_TIMEOUT_SECONDS)"
)


def _start(**overrides: str) -> subprocess.CompletedProcess[str]:
    """Load the settings in a fresh interpreter, as a web, worker or beat process does."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("WEBHOOK_", "PLATFORM_MODE", "DEBUG", "TESTING", "PYTEST"))
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            # Unused (nothing connects); set so that loading the settings starts no embedded server.
            "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none",
            "REDIS_URL": "redis://127.0.0.1:1/0",
            "SECRET_KEY": "a-test-secret-key-that-is-long-enough-0123456789",
            "FERNET_KEYS": "0" * 43 + "=",
            "ALLOWED_HOSTS": "example.com",
            "METRICS_TOKEN": "a-test-metrics-token",
        }
    )
    env.update(overrides)
    return subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_allow_private_urls_is_refused_at_start_up_unless_sandbox() -> None:
    refused = _start(PLATFORM_MODE="live", WEBHOOK_ALLOW_PRIVATE_URLS="1")
    assert refused.returncode != 0
    assert "WEBHOOK_ALLOW_PRIVATE_URLS=1 is refused unless PLATFORM_MODE=sandbox" in refused.stderr
    live = _start(PLATFORM_MODE="live")
    assert live.returncode == 0, live.stderr
    assert live.stdout.split()[0] == "False"
    sandbox = _start(PLATFORM_MODE="sandbox", WEBHOOK_ALLOW_PRIVATE_URLS="1")
    assert sandbox.returncode == 0, sandbox.stderr
    assert sandbox.stdout.split()[0] == "True"


def test_retry_schedule_and_deadline_defaults_and_environment() -> None:
    default = _start(PLATFORM_MODE="sandbox")
    assert default.returncode == 0, default.stderr
    assert default.stdout.strip() == "False [30.0, 120.0, 480.0, 1920.0, 7200.0] 10.0"
    shrunk = _start(PLATFORM_MODE="sandbox", WEBHOOK_RETRY_DELAYS="1,2.5,3", WEBHOOK_TIMEOUT_SECONDS="2")
    assert shrunk.returncode == 0, shrunk.stderr
    assert shrunk.stdout.strip() == "False [1.0, 2.5, 3.0] 2.0"


@pytest.mark.parametrize("value", ["0", "false", ""])
def test_allow_private_urls_off_values_start_anywhere(value: str) -> None:
    result = _start(PLATFORM_MODE="live", WEBHOOK_ALLOW_PRIVATE_URLS=value)
    assert result.returncode == 0, result.stderr
