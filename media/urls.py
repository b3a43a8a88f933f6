"""Pages and endpoints of this app outside the JSON API (mounted at the site root)."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
