"""The simulators are served by the web process in sandbox mode only."""

from __future__ import annotations

from django.conf import settings
from django.urls import URLPattern, URLResolver, include, path

urlpatterns: list[URLPattern | URLResolver] = []
if settings.SANDBOX:
    urlpatterns.append(path("", include("platforms.sandbox.urls")))
