"""An item's idempotencyKey is stored as ``bulk-item:<key>`` in a 255-character column: a key of
246-255 characters was a database error answered as a 400 for the whole batch (found by
schemathesis, issue 15 item 8). It is now limited, and documented, to 245 characters."""

from __future__ import annotations

from typing import Any

import pytest

from posts.models import Post
from tests.factories.posts import account
from tests.posts.conftest import future, iso
from tests.posts.test_bulk_validate import URL, batch

pytestmark = pytest.mark.django_db


@pytest.fixture
def masto(workspace: Any) -> Any:
    return account(workspace, "MASTODON")


def test_the_longest_item_key_works_and_a_longer_one_fails_only_its_item(
    api: Any, anon: Any, masto: Any, enqueued: list
) -> None:
    longest = {"contentType": "TEXT", "text": "kept", "scheduledAt": iso(future()), "idempotencyKey": "k" * 245}
    too_long = {**longest, "text": "refused", "idempotencyKey": "k" * 246}
    response = api.post(f"{URL}/bulk", batch(masto, longest, too_long), format="json")
    assert response.status_code == 201
    results = response.json()["results"]
    assert results[0]["success"] is True
    assert results[1]["success"] is False
    assert results[1]["errorMessage"] == "idempotencyKey: Ensure this field has no more than 245 characters."
    assert Post.objects.filter(text="refused").count() == 0
    schema = anon.get("/api/v1/openapi.json").json()["components"]["schemas"]["BulkItemInputRequest"]
    assert schema["properties"]["idempotencyKey"]["maxLength"] == 245
