"""The staff admin site. Its "View site" link leads to the API reference (the service has no page
at ``/``), it has no model sidebar, and the sections of the libraries we use (django-oauth-toolkit, django-axes) come after
the product's own, under names that say what they are."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest

LIBRARY_SECTIONS = {
    "oauth2_provider": "OAuth sign-in (django-oauth-toolkit)",
    "axes": "Admin login lockouts (django-axes)",
}


class CrosspostAdminSite(admin.AdminSite):
    site_header = "Crosspost staff"
    site_title = "Crosspost staff"
    index_title = "Workspaces, accounts, posts and deliveries"
    site_url = "/api/v1/docs/"
    # The list pages get the whole window: with the sidebar of every model open beside a list and
    # its filters, a 1400 px window had 750 px left for the columns. The index lists every model.
    enable_nav_sidebar = False

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[dict[str, Any]]:
        sections = super().get_app_list(request, app_label)
        for section in sections:
            if section["app_label"] in LIBRARY_SECTIONS:
                section["name"] = LIBRARY_SECTIONS[section["app_label"]]
        # The product's sections first, then the libraries', each by name.
        return sorted(sections, key=lambda section: (section["app_label"] in LIBRARY_SECTIONS, section["name"].lower()))


class CrosspostAdminConfig(AdminConfig):
    """``django.contrib.admin`` with ``admin.site`` being the site above."""

    default_site = "core.admin_site.CrosspostAdminSite"
