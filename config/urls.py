from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path, re_path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerView

from config.dashboard import dashboard_view
from core import views as core_views
from core.api_docs import RedocView, redoc_bundle_view
from core.metrics import metrics_view

API_APPS = ["workspaces", "accounts", "media", "webhooks", "posts", "analytics", "engagement", "audit"]

api_v1: list[URLPattern | URLResolver] = [
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    # The reference pages, served with their scripts from our own static files (no CDN).
    path("docs/", SpectacularSwaggerView.as_view(url_name="openapi"), name="api-docs"),
    path(
        "redoc/",
        RedocView.as_view(url_name="openapi", template_name="api_docs/redoc.html"),
        name="api-redoc",
    ),
    path("redoc/redoc.standalone.js", redoc_bundle_view, name="api-redoc-bundle"),
    *[path("", include(f"{app}.api.urls")) for app in API_APPS],
    re_path(r"^.*$", core_views.api_not_found),
]

urlpatterns = [
    path("healthz", core_views.healthz),
    path("readyz", core_views.readyz),
    path("metrics", metrics_view),
    path("openapi.json", SpectacularJSONAPIView.as_view()),
    path("api/v1/", include(api_v1)),
    path("admin/dashboard/", admin.site.admin_view(dashboard_view), name="admin-dashboard"),
    path("admin/", admin.site.urls),
    path("oauth/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("", include("accounts.urls")),
    path("", include("media.urls")),
    path("", include("platforms.urls")),
]

handler404 = "core.views.not_found"
handler500 = "core.views.server_error"
