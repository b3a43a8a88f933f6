"""Pages and endpoints of this app outside the JSON API (mounted at the site root): the local
storage's signed upload PUT and its public file URLs."""

from django.urls import URLPattern, path

from media import views

urlpatterns: list[URLPattern] = [
    path("uploads/<path:key>", views.upload, name="media-upload"),
    path("media/<path:key>", views.serve, name="media-file"),
]
