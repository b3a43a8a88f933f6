"""Pages and endpoints of this app outside the JSON API (mounted at the site root)."""

from django.urls import URLPattern, path

from accounts import views

urlpatterns: list[URLPattern] = [
    path("connect/callback/<str:platform>", views.connect_callback, name="connect-callback"),
    path("connect/<str:token>", views.connect_home, name="connect-home"),
    path("connect/<str:token>/<str:platform>", views.connect_platform, name="connect-platform"),
]
