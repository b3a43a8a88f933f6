"""The embedded default and the platform mode it implies."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.conf import settings

PROBE = "import django; django.setup(); from django.conf import settings; print(settings.PLATFORM_MODE)"


def _settings_process(command: list[str] | None = None, **extra: str) -> subprocess.CompletedProcess[str]:
    drop = ("PYTEST", "TEST_", "DATABASE_URL", "REDIS_URL", "PLATFORM_MODE", "SECRET_KEY", "DEBUG", "FERNET_KEYS")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", **extra)
    return subprocess.run(
        command or [sys.executable, "-c", PROBE],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_embedded_default_runs_the_simulators_with_nothing_exported():
    """A checkout on the embedded default (no server URLs) is a local one: sandbox mode, so the
    README's `manage.py create_api_key` works in a second shell beside `make run`."""
    result = _settings_process()
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "sandbox"


NAMES_THE_SERVERS = """
import django
django.setup()
from django.conf import settings
from config import embedded
assert settings.EMBEDDED
assert settings.DATABASE_URL == embedded.database_url(), settings.DATABASE_URL
assert settings.REDIS_URL == embedded.redis_url(), settings.REDIS_URL
assert embedded.running() == set(), embedded.running()
"""


@pytest.mark.parametrize(
    "command",
    [
        pytest.param([sys.executable, "-c", NAMES_THE_SERVERS], id="settings"),
        pytest.param([sys.executable, "manage.py", "check"], id="manage.py check"),
    ],
)
def test_reading_the_settings_starts_no_server(command: list[str]) -> None:
    """With no server URLs, loading the settings (mypy, `manage.py check`, gunicorn, celery) names
    the embedded servers under var/ and starts neither: `make run`, the other manage.py
    commands and the test set-up start them."""
    var_dir = Path(settings.BASE_DIR) / "var" / f"settings-test-{uuid.uuid4().hex[:8]}"
    try:
        result = _settings_process(command, CROSSPOST_VAR_DIR=str(var_dir))
        assert result.returncode == 0, result.stderr
        assert not (var_dir / "pg").exists()
        assert not (var_dir / "redis").exists()
    finally:
        shutil.rmtree(var_dir, ignore_errors=True)


def test_configured_servers_default_to_live_and_need_a_secret_key():
    """With server URLs (production), nothing defaults to the simulators or to a known key."""
    result = _settings_process(DATABASE_URL="postgres://user@db.invalid/x", REDIS_URL="redis://redis.invalid:6379/0")
    assert result.returncode != 0
    assert "Set the SECRET_KEY environment variable" in result.stderr
    live = _settings_process(
        DATABASE_URL="postgres://user@db.invalid/x",
        REDIS_URL="redis://redis.invalid:6379/0",
        SECRET_KEY="x" * 50,
        FERNET_KEYS="c2FuZGJveC1vbmx5LWZlcm5ldC1rZXktMzJieXRlcyE=",
    )
    assert live.returncode == 0, live.stderr
    assert live.stdout.strip() == "live"


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("STORAGE", "ftp", "local, s3"),
        ("PLATFORM_MODE", "prod", "sandbox, live"),
        ("AI_IMAGE_PROVIDER", "dalle", "offline, openai"),
        ("WEBHOOK_ALLOW_PRIVATE_URLS", "maybe", "true, 1, yes, on, false, 0, no, off"),
        ("DEBUG", "verbose", "true, 1, yes, on, false, 0, no, off"),
        ("LOG_FORMAT", "xml", "json, plain"),
        ("LOG_LEVEL", "LOUD", "DEBUG, INFO, WARNING, ERROR, CRITICAL"),
    ],
)
def test_a_setting_outside_its_fixed_values_stops_start_up_naming_it(name: str, value: str, allowed: str) -> None:
    result = _settings_process(**{name: value})
    assert result.returncode != 0
    assert f"{name} must be one of: {allowed} (got {value!r})" in result.stderr
