"""The ReDoc reference page with nothing fetched from another host. drf-spectacular-sidecar ships
ReDoc's bundle, but the bundle itself loads the Redocly logo of its sidebar footer from
cdn.redoc.ly; the page is given the same bundle with that address pointed at a local image (and
its source map at the sidecar's static copy)."""

from __future__ import annotations

import functools
import hashlib

from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse
from django.templatetags.static import static
from django.urls import reverse
from drf_spectacular.views import SpectacularRedocView

SIDECAR_BUNDLE = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
LOCAL_LOGO = "api_docs/redoc-logo.svg"
SOURCE_MAP = "sourceMappingURL=redoc.standalone.js.map"


@functools.cache
def redoc_bundle() -> tuple[bytes, str]:
    """The bundle served to the page, and a short digest of it (the page's cache key)."""
    path = finders.find(SIDECAR_BUNDLE)
    if not isinstance(path, str):
        raise LookupError(f"{SIDECAR_BUNDLE} is not among the static files (drf-spectacular-sidecar)")
    with open(path, encoding="utf-8") as bundle:
        text = bundle.read()
    text = text.replace(CDN_LOGO, static(LOCAL_LOGO))
    text = text.replace(SOURCE_MAP, f"sourceMappingURL={static(SIDECAR_BUNDLE + '.map')}")
    body = text.encode()
    return body, hashlib.sha256(body).hexdigest()[:16]


def redoc_bundle_view(request: HttpRequest) -> HttpResponse:
    body, digest = redoc_bundle()
    response = HttpResponse(body, content_type="text/javascript; charset=utf-8")
    # The page names the bundle by its digest, so a cached copy is never stale.
    response["Cache-Control"] = "public, max-age=31536000, immutable" if request.GET.get("v") == digest else "no-cache"
    return response


class RedocView(SpectacularRedocView):
    """drf-spectacular's ReDoc page loading the bundle above instead of the sidecar's own."""

    @staticmethod
    def _redoc_standalone() -> str:
        return f"{reverse('api-redoc-bundle')}?v={redoc_bundle()[1]}"
