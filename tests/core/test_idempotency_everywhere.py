"""CONTRACT §5: an Idempotency-Key works on every POST; a repeat returns the first response."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/webhooks", {"url": "https://93.184.216.34/hook"}),
        ("/api/v1/connect-links", {}),
        ("/api/v1/analytics/sync", {}),
    ],
)
def test_repeat_returns_the_first_response(api, path, body):
    headers = {"Idempotency-Key": f"k-{path}"}
    first = api.post(path, body, format="json", headers=headers)
    again = api.post(path, body, format="json", headers=headers)
    assert first.status_code in (201, 202), first.json()
    assert (again.status_code, again.json()) == (first.status_code, first.json())
    assert again["Idempotent-Replayed"] == "true"


def test_every_post_operation_documents_the_header(anon):
    schema = anon.get("/api/v1/openapi.json").json()
    missing = [
        path
        for path, operations in schema["paths"].items()
        if "post" in operations
        and not any(p.get("name") == "Idempotency-Key" for p in operations["post"].get("parameters", []))
    ]
    assert missing == []
