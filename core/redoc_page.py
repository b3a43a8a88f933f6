"""ReDoc's reference page with nothing fetched from another host. The sidecar's ReDoc bundle shows
the Redocly logo in its sidebar footer from cdn.redoc.ly, and no ReDoc option turns it off: the
page gets the same bundle with that image's address emptied (an empty ``src`` is never fetched;
the footer keeps its text)."""

from __future__ import annotations

import functools

from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from drf_spectacular.views import SpectacularRedocView

SIDECAR_BUNDLE = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
CDN_LOGO = b'"https://cdn.redoc.ly/redoc/logo-mini.svg"'


@functools.cache
def redoc_bundle() -> bytes:
    path = finders.find(SIDECAR_BUNDLE)
    if not isinstance(path, str):
        raise LookupError(f"{SIDECAR_BUNDLE} is not among the static files (drf-spectacular-sidecar)")
    with open(path, "rb") as bundle:
        return bundle.read().replace(CDN_LOGO, b'""')


def redoc_bundle_view(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(redoc_bundle(), content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=3600"
    return response


class RedocPageView(SpectacularRedocView):
    @staticmethod
    def _redoc_standalone() -> str:
        return reverse("api-redoc-bundle")
