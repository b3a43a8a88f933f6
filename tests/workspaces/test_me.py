from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_me_describes_the_key(client_for, workspace):
    response = client_for("editor").get("/api/v1/me")
    assert response.status_code == 200
    body = response.json()
    assert body["tokenType"] == "api_token"
    assert body["workspace"] == {"id": workspace.id, "name": workspace.name}
    assert body["role"] == {"key": "editor", "name": "Editor"}
    assert body["can"] == {"draft": True, "schedule": True, "publish": True}
    assert response["RateLimit-Limit"] == "600"
