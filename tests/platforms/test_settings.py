"""Per-platform base URLs and app credentials: the real hosts in live mode (no simulator
mounted), the simulators in sandbox mode, app credentials from the environment."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from platforms.base import Platform
from platforms.registry import app_credentials, base_url, get_client

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("platform", list(Platform), ids=[p.value for p in Platform])
def test_live_mode_points_at_the_real_host_and_sandbox_mode_at_the_simulator(
    platform: Platform, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(settings.PLATFORM_APP_ENV, f"PLATFORM_{platform.value}_BASE_URL", raising=False)
    live = importlib.import_module(f"platforms.{platform.slug}").LIVE_BASE_URL
    assert live.startswith("https://") and "127.0.0.1" not in live and "sandbox" not in live
    settings.SANDBOX = False
    assert base_url(platform) == live
    assert get_client(platform).base_url == live.rstrip("/")
    settings.SANDBOX = True
    settings.SANDBOX_BASE_URL = "http://127.0.0.1:8123/sandbox"
    assert base_url(platform) == f"http://127.0.0.1:8123/sandbox/{platform.slug}"
    monkeypatch.setitem(settings.PLATFORM_APP_ENV, f"PLATFORM_{platform.value}_BASE_URL", "https://proxy.example/api")
    assert base_url(platform) == "https://proxy.example/api"


def test_app_credentials_come_from_the_environment(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(settings.PLATFORM_APP_ENV, "PLATFORM_TIKTOK_CLIENT_ID", "aw1234")
    monkeypatch.setitem(settings.PLATFORM_APP_ENV, "PLATFORM_TIKTOK_CLIENT_SECRET", "s3cret")
    monkeypatch.setitem(settings.PLATFORM_APP_ENV, "PLATFORM_TIKTOK_REDIRECT_NOTE", "extra")
    settings.SANDBOX = False
    app = app_credentials(Platform.TIKTOK)
    assert (app.client_id, app.client_secret, app.extra) == ("aw1234", "s3cret", {"redirect_note": "extra"})
    monkeypatch.delitem(settings.PLATFORM_APP_ENV, "PLATFORM_PINTEREST_CLIENT_ID", raising=False)
    monkeypatch.delitem(settings.PLATFORM_APP_ENV, "PLATFORM_PINTEREST_CLIENT_SECRET", raising=False)
    assert app_credentials(Platform.PINTEREST).client_id == ""  # live: nothing invented
    settings.SANDBOX = True
    assert app_credentials(Platform.PINTEREST).client_id == "sandbox-pinterest-app"


def test_live_mode_mounts_no_simulator() -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PLATFORM_", "DATABASE_URL", "REDIS_URL"))},
        "PLATFORM_MODE": "live",
        "SECRET_KEY": "live-test-secret-key-not-used-anywhere-else",
        "FERNET_KEYS": "a" * 43 + "=",
        "ALLOWED_HOSTS": "api.example.com",
        "METRICS_TOKEN": "live-test-metrics-token",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    code = (
        "import django; django.setup()\n"
        "from django.urls import resolve, Resolver404\n"
        "from django.conf import settings\n"
        "assert not settings.SANDBOX\n"
        "for path in ('/sandbox/mastodon/api/v1/instance', '/sandbox/_control/mastodon/requests'):\n"
        "    try:\n"
        "        resolve(path)\n"
        "    except Resolver404:\n"
        "        continue\n"
        "    raise SystemExit('mounted: ' + path)\n"
        "print('none mounted')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "none mounted"
