"""Mounts each simulator under ``/sandbox/<slug>/`` (sandbox mode only; see platforms/urls.py).
A simulator module ``platforms/sandbox/<slug>.py`` exposes ``urlpatterns``."""

from __future__ import annotations

import importlib

from django.urls import URLPattern, URLResolver, include, path

from platforms.base import Platform
from platforms.sandbox import views

urlpatterns: list[URLPattern | URLResolver] = [
    path("sandbox/_control/<str:slug>/requests", views.control_requests),
    path("sandbox/_control/<str:slug>/accounts/<path:account_id>/revoke", views.control_revoke),
    path("sandbox/_control/<str:slug>/faults", views.control_faults),
]

for _platform in Platform:
    try:
        _module = importlib.import_module(f"platforms.sandbox.{_platform.slug}")
    except ModuleNotFoundError as exc:
        if exc.name != f"platforms.sandbox.{_platform.slug}":
            raise
        continue
    urlpatterns.append(path(f"sandbox/{_platform.slug}/", include(_module.urlpatterns)))
