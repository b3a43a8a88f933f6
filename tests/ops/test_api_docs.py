"""The API reference pages, served by the service itself with their scripts from our own static
files (drf-spectacular-sidecar): nothing loaded from a CDN."""

from __future__ import annotations

import re

import pytest


@pytest.mark.parametrize(
    ("path", "script"),
    [
        ("/api/v1/docs/", "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js"),
        # The sidecar's ReDoc bundle with its CDN logo address emptied (core/redoc_page.py).
        ("/api/v1/redoc/", "/api/v1/redoc/redoc.standalone.js"),
    ],
)
def test_reference_pages_need_no_key_and_no_cdn(client, path, script):
    response = client.get(path)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert script in sources, sources
    assert not [src for src in sources if src.startswith(("http://", "https://", "//"))], sources
    assert "/api/v1/openapi.json" in html
    for src in sources:
        if src.startswith("/static/"):
            assert client.get(src).status_code == 200, src
    bundle = client.get(script)
    assert bundle.status_code == 200 and b"cdn.redoc.ly" not in b"".join(bundle), script
