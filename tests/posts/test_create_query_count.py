"""The create path's statements (issue 35), pinned: a change here is a change to what every
``POST /social-posts`` costs PostgreSQL. A draft without media: the accounts read, then in one
transaction the post, its entries and the plan's monthly post count (one statement when the plan
sets no post limit: the plan read, this month's usage row added or counted up)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories.posts import account

URL = "/api/v1/social-posts"
# Transactional, as in production: inside a test's own transaction every transaction is a savepoint.
pytestmark = pytest.mark.django_db(transaction=True)


def _draft(account_id: str) -> dict[str, Any]:
    return {
        "contentType": "TEXT",
        "timezone": "UTC",
        "text": "counted",
        "platforms": ["MASTODON"],
        "mastodonConnectionIds": [account_id],
        "saveAsDraft": True,
    }


def test_a_draft_without_media_costs_six_statements(api: Any, workspace: Any) -> None:
    masto = account(workspace, "MASTODON", display_name="Masto")
    assert api.post(URL, _draft(masto.id), format="json").status_code == 201  # this month's usage row exists

    with CaptureQueriesContext(connection) as queries:
        assert api.post(URL, _draft(masto.id), format="json").status_code == 201

    statements = [query["sql"] for query in queries.captured_queries]
    # No savepoint: none for marking media when there is none to mark, none for the count.
    assert not any(sql.startswith("SAVEPOINT") for sql in statements), statements
    assert len(statements) == 6, statements
