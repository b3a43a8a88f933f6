"""One shape for every body: errors answered outside a DRF view (the unknown route's 404, the
middleware's refusals) are the same bytes a DRF view would write, and every instant in a
response or event body has milliseconds (``2026-01-01T10:00:00.000Z``)."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import pytest

from core.fields import format_instant
from tests.factories.posts import account
from webhooks.events import serialize_envelope

pytestmark = pytest.mark.django_db

INSTANT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def compact(body: dict[str, Any]) -> bytes:
    """JSON as DRF's renderer writes it: compact, UTF-8 characters as they are."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def test_the_unknown_route_404_is_written_like_every_other_error_body(api: Any) -> None:
    unknown = api.get("/api/v1/caf%C3%A9-menu")
    assert (unknown.status_code, unknown["Content-Type"]) == (404, "application/json")
    body = {
        "statusCode": 404,
        "error": "Not Found",
        "message": "Cannot GET /api/v1/café-menu",
        "code": "route_not_found",
    }
    assert unknown.content == compact(body)

    from_a_view = api.get("/api/v1/social-posts/no-such-post")  # a DRF view's 404, for comparison
    assert from_a_view.status_code == 404
    assert (from_a_view["Content-Type"], from_a_view.content) == ("application/json", compact(from_a_view.json()))


@pytest.mark.parametrize(
    ("moment", "expected"),
    [
        (dt.datetime(2026, 1, 1, 10, 0, tzinfo=dt.UTC), "2026-01-01T10:00:00.000Z"),
        (dt.datetime(2026, 1, 1, 10, 0, 0, 409_999, tzinfo=dt.UTC), "2026-01-01T10:00:00.409Z"),
        (dt.datetime(2026, 1, 1, 11, 0, tzinfo=dt.timezone(dt.timedelta(hours=1))), "2026-01-01T10:00:00.000Z"),
    ],
)
def test_an_instant_always_has_milliseconds(moment: dt.datetime, expected: str) -> None:
    assert format_instant(moment) == expected


def test_every_instant_of_a_post_record_has_milliseconds(api: Any, workspace: Any) -> None:
    masto = account(workspace, "MASTODON")
    when = (dt.datetime.now(dt.UTC) + dt.timedelta(days=2)).replace(microsecond=0)
    created = api.post(
        "/api/v1/social-posts",
        {
            "contentType": "TEXT",
            "text": "On the hour",
            "timezone": "UTC",
            "platforms": ["MASTODON"],
            "mastodonConnectionIds": [masto.id],
            "scheduledAt": when.isoformat(),
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    assert created.json()["scheduledAt"] == when.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    post_id = created.json()["postId"]
    for record in (
        api.get(f"/api/v1/social-posts/{post_id}").json(),
        api.get("/api/v1/social-posts").json()["posts"][0],
    ):
        assert record["scheduledAt"] == when.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        assert INSTANT.match(record["createdAt"]) and INSTANT.match(record["updatedAt"]), record


def test_an_event_body_writes_its_instants_with_milliseconds() -> None:
    created = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    inside = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    body = serialize_envelope(event_id="evt_1", name="post.published", created_at=created, data={"at": inside})
    assert body == (
        '{"id":"evt_1","event":"post.published","createdAt":"2026-01-01T00:00:00.000Z",'
        '"data":{"at":"2026-01-02T03:04:05.000Z"}}'
    )
