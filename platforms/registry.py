"""Builds the client of a platform: its module is ``platforms/<slug>.py`` with a ``Client``
class and a ``LIVE_BASE_URL``; sandbox mode points it at ``<SANDBOX_BASE_URL>/<slug>``.
App credentials come from ``PLATFORM_<NAME>_CLIENT_ID`` / ``_CLIENT_SECRET`` (``settings.PLATFORM_APP_ENV``)."""

from __future__ import annotations

import importlib

from django.conf import settings

from platforms.base import AppCredentials, Platform, PlatformClient


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
        timeout=settings.PLATFORM_HTTP_TIMEOUT,
    )
