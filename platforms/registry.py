"""Builds the client of a platform: its module is ``platforms/<slug>.py`` with a ``Client``
class and a ``LIVE_BASE_URL``; sandbox mode points it at ``<SANDBOX_BASE_URL>/<slug>``.
App credentials come from ``PLATFORM_<NAME>_CLIENT_ID`` / ``_CLIENT_SECRET`` (``settings.PLATFORM_APP_ENV``)."""

from __future__ import annotations

import importlib
import threading

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter

from platforms.base import AppCredentials, Platform, PlatformClient

_local = threading.local()


def http_session() -> requests.Session:
    """One pooled session per thread; proxies from the environment are ignored."""
    session = getattr(_local, "session", None)
    if session is None:
        session = requests.Session()
        session.trust_env = False
        adapter = HTTPAdapter(pool_connections=20, pool_maxsize=50, max_retries=0)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        session.headers["User-Agent"] = "Crosspost/1.0"
        _local.session = session
    return session


def _app_env(platform: Platform) -> dict[str, str]:
    """This platform's ``PLATFORM_<NAME>_<KEY>`` settings, by lower-case key."""
    prefix = f"PLATFORM_{platform.value}_"
    return {k[len(prefix) :].lower(): v for k, v in settings.PLATFORM_APP_ENV.items() if k.startswith(prefix)}


def base_url(platform: Platform) -> str:
    override = _app_env(platform).get("base_url")
    if override:
        return override
    if settings.SANDBOX:
        return f"{settings.SANDBOX_BASE_URL}/{platform.slug}"
    module = importlib.import_module(f"platforms.{platform.slug}")
    return str(module.LIVE_BASE_URL)


def app_credentials(platform: Platform) -> AppCredentials:
    extra = _app_env(platform)
    client_id = extra.pop("client_id", "")
    client_secret = extra.pop("client_secret", "")
    if settings.SANDBOX:
        client_id = client_id or f"sandbox-{platform.slug}-app"
        client_secret = client_secret or "sandbox-secret"
    return AppCredentials(client_id=client_id, client_secret=client_secret, extra=extra)


def get_client(platform: Platform | str) -> PlatformClient:
    platform = Platform(platform)
    module = importlib.import_module(f"platforms.{platform.slug}")
    client_class: type[PlatformClient] = module.Client
    return client_class(
        base_url=base_url(platform),
        app=app_credentials(platform),
        session=http_session(),
        timeout=settings.PLATFORM_HTTP_TIMEOUT,
    )
