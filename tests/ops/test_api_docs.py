"""The API reference pages, served by the service itself with their scripts from our own static
files (drf-spectacular-sidecar): nothing loaded from a CDN."""

from __future__ import annotations

import re

import pytest


@pytest.mark.parametrize(
    ("path", "script"),
    [
        ("/api/v1/docs/", "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js"),
        ("/api/v1/redoc/", "/api/v1/redoc/redoc.standalone.js?v="),  # the sidecar's bundle, see below
    ],
)
def test_reference_pages_need_no_key_and_no_cdn(client, path, script):
    response = client.get(path)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert any(src.startswith(script) for src in sources), sources
    assert all(src.startswith("/") and not src.startswith("//") for src in sources), sources
    assert "/api/v1/openapi.json" in html
    for src in sources:
        assert client.get(src).status_code == 200, src


EXTERNAL_LOAD = re.compile(r"""\bsrc\s*[:=]\s*["'](?:https?:)?//""")  # an image or script fetched from elsewhere


def test_the_redoc_bundle_the_page_loads_fetches_nothing_from_another_host(client):
    html = client.get("/api/v1/redoc/").content.decode()
    [bundle_url] = [src for src in re.findall(r'<script src="([^"]+)"', html) if "redoc" in src]
    response = client.get(bundle_url)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    bundle = b"".join(response.streaming_content if response.streaming else [response.content]).decode()
    assert "cdn.redoc.ly" not in bundle
    assert not EXTERNAL_LOAD.findall(bundle)
    # The sidebar's logo is ours, served from our static files.
    [logo] = re.findall(r'src:"(/static/[^"]+\.svg)"', bundle)
    served = client.get(logo)
    assert (served.status_code, served["Content-Type"]) == (200, "image/svg+xml")
    # The sidecar's own bundle does load its logo from the CDN: the rewrite above is what keeps it local.
    original = client.get("/static/drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js")
    assert b"https://cdn.redoc.ly/" in b"".join(original.streaming_content)


def test_the_redoc_bundle_is_cached_only_under_its_digest(client):
    html = client.get("/api/v1/redoc/").content.decode()
    [bundle_url] = [src for src in re.findall(r'<script src="([^"]+)"', html) if "redoc" in src]
    assert "?v=" in bundle_url
    assert "immutable" in client.get(bundle_url)["Cache-Control"]
    assert client.get(bundle_url.split("?")[0])["Cache-Control"] == "no-cache"
