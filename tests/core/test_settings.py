"""The platform mode: the embedded default runs the simulators, configured servers are live, and
live mode starts only with its own secrets and hosts, and mounts no simulator."""

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
    drop = (
        "PYTEST",
        "TEST_",
        "DATABASE_URL",
        "REDIS_URL",
        "PLATFORM_MODE",
        "SECRET_KEY",
        "DEBUG",
        "FERNET_KEYS",
        "ALLOWED_HOSTS",
        "METRICS_TOKEN",
        "WEBHOOK_ALLOW_PRIVATE_URLS",
        "DJANGO_SETTINGS_MODULE",
    )
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


SERVERS = {"DATABASE_URL": "postgres://user@db.invalid/x", "REDIS_URL": "redis://redis.invalid:6379/0"}
LIVE_SECRETS = {
    "SECRET_KEY": "x" * 50,
    "FERNET_KEYS": "bGl2ZS10ZXN0LWZlcm5ldC1rZXktMzItYnl0ZXMtIQ==",
    "ALLOWED_HOSTS": "api.example.com,www.example.com",
    "METRICS_TOKEN": "live-metrics-token-0123456789",
}
SANDBOX_SECRET_KEY = "insecure-sandbox-only-secret-key"
SANDBOX_FERNET_KEY = "c2FuZGJveC1vbmx5LWZlcm5ldC1rZXktMzJieXRlcyE="
LIVE_PROBE = """
import django
django.setup()
from django.conf import settings
from django.urls import Resolver404, resolve
mounted = []
for path in ("/sandbox/mastodon/api/v1/instance", "/sandbox/_control/mastodon/requests", "/sandbox/telegram/bot1:a/getMe"):
    try:
        resolve(path)
    except Resolver404:
        continue
    mounted.append(path)
print(settings.PLATFORM_MODE, settings.ALLOWED_HOSTS, settings.SECRET_KEY == "x" * 50, settings.WEBHOOK_ALLOW_PRIVATE_URLS, mounted)
"""


def test_configured_servers_default_to_live_even_with_debug():
    """With server URLs (production), nothing defaults to the simulators, DEBUG=1 included."""
    for extra in ({}, {"DEBUG": "1"}):
        live = _settings_process([sys.executable, "-c", LIVE_PROBE], **SERVERS, **LIVE_SECRETS, **extra)
        assert live.returncode == 0, live.stderr
        assert live.stdout.split()[0] == "live"


def test_live_mode_starts_with_its_own_secrets_mounts_no_simulator_and_takes_hosts_from_the_environment():
    live = _settings_process([sys.executable, "-c", LIVE_PROBE], PLATFORM_MODE="live", **LIVE_SECRETS)
    assert live.returncode == 0, live.stderr
    assert live.stdout.strip() == "live ['api.example.com', 'www.example.com'] True False []"
    sandbox = _settings_process([sys.executable, "-c", LIVE_PROBE], PLATFORM_MODE="sandbox")
    assert sandbox.returncode == 0, sandbox.stderr
    assert sandbox.stdout.strip().startswith("sandbox ['*'] False False ['/sandbox/mastodon/api/v1/instance', ")


@pytest.mark.parametrize("name", ["SECRET_KEY", "FERNET_KEYS", "ALLOWED_HOSTS", "METRICS_TOKEN"])
@pytest.mark.parametrize("missing", ["unset", "empty"])
def test_live_mode_refuses_to_start_without_each_of_its_settings(name: str, missing: str) -> None:
    """Whether live comes from the configured servers or is asked for, a missing or blank secret
    stops start-up naming the variable: the sandbox's fixed values never apply."""
    env = {k: v for k, v in LIVE_SECRETS.items() if k != name}
    if missing == "empty":
        env[name] = " " if name in ("SECRET_KEY", "METRICS_TOKEN") else " , "
    for mode in ({**SERVERS}, {"PLATFORM_MODE": "live"}):
        result = _settings_process(**mode, **env)
        assert result.returncode != 0
        assert (
            f"{name} must be set in live mode (PLATFORM_MODE=live); sandbox defaults never apply there" in result.stderr
        )


@pytest.mark.parametrize(
    ("name", "value"),
    [("SECRET_KEY", SANDBOX_SECRET_KEY), ("FERNET_KEYS", f"{LIVE_SECRETS['FERNET_KEYS']},{SANDBOX_FERNET_KEY}")],
)
def test_live_mode_refuses_the_sandbox_published_values(name: str, value: str) -> None:
    result = _settings_process(PLATFORM_MODE="live", **{**LIVE_SECRETS, name: value})
    assert result.returncode != 0
    assert f"{name} holds the sandbox's published value; live mode (PLATFORM_MODE=live) needs its own" in result.stderr


RUN_ENV_PROBE = """
from config.run import _env
env = _env()
print(env["PLATFORM_MODE"], env.get("WEBHOOK_ALLOW_PRIVATE_URLS", "-"))
"""


def test_make_run_leaves_the_mode_to_the_settings(tmp_path: Path) -> None:
    """`make run` (config/run.py) passes the settings' decision on to its processes: sandbox on the
    embedded default, live with the servers configured (and then no private webhook targets)."""
    probe = [sys.executable, "-c", RUN_ENV_PROBE]
    embedded_default = _settings_process(probe, CROSSPOST_VAR_DIR=str(tmp_path))
    assert embedded_default.returncode == 0, embedded_default.stderr
    assert embedded_default.stdout.strip() == "sandbox 1"
    configured = _settings_process(probe, **SERVERS, **LIVE_SECRETS)
    assert configured.returncode == 0, configured.stderr
    assert configured.stdout.strip() == "live -"
    asked = _settings_process(probe, PLATFORM_MODE="sandbox", **SERVERS)
    assert asked.stdout.strip() == "sandbox 1", asked.stderr
    unready = _settings_process(probe, **SERVERS)
    assert unready.returncode != 0
    assert "SECRET_KEY must be set in live mode" in unready.stderr


def test_the_makefile_exports_no_platform_mode_to_make_run() -> None:
    """An extra target beside the Makefile's sees what `make run`'s command inherits from it."""
    env = {k: v for k, v in os.environ.items() if k not in ("PLATFORM_MODE", "MAKEFLAGS", "MFLAGS")}
    probe = '_probe_environment:\n\t@echo "mode=$${PLATFORM_MODE-unset}"\n'
    result = subprocess.run(
        ["make", "-s", "-f", "Makefile", "-f", "-", "_probe_environment"],
        cwd=settings.BASE_DIR,
        env=env,
        input=probe,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "mode=unset"


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
