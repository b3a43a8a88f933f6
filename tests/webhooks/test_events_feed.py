"""GET /events: the outbox as a feed, in creation order, each body byte for byte what the webhooks
received, paged by an opaque cursor, for EVENTS_RETENTION_DAYS."""

from __future__ import annotations

import datetime as dt
import json
import threading
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.concurrency import run_concurrently
from tests.factories.webhooks import WebhookFactory
from tests.webhooks.conftest import Receiver, attempt_one
from webhooks.events import STORED_EVENT_NAMES, emit_event
from webhooks.models import Delivery, Event
from webhooks.selectors import encode_event_cursor, event_page
from webhooks.services import events_seal

# Committed for real: the feed lists only the events of transactions that have ended, so events
# written inside a test's own open transaction would never show.
pytestmark = pytest.mark.django_db(transaction=True)


def _full_page(api: Any, query: str = "") -> tuple[list[bytes], str | None, bool]:
    response = api.get(f"/api/v1/events{query}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert sorted(body) == ["events", "hasMore", "nextCursor"]
    # The raw bodies, cut out of the response as it was sent.
    raw = response.content
    bodies = [json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode() for event in body["events"]]
    assert raw == (
        b'{"events":['
        + b",".join(bodies)
        + b'],"nextCursor":'
        + json.dumps(body["nextCursor"]).encode()
        + b',"hasMore":'
        + json.dumps(body["hasMore"]).encode()
        + b"}"
    )
    return bodies, body["nextCursor"], body["hasMore"]


def _page(api: Any, query: str = "") -> tuple[list[bytes], str | None]:
    bodies, cursor, _ = _full_page(api, query)
    return bodies, cursor


def test_the_feed_serves_exactly_the_bodies_the_receivers_got_in_order(
    api: Any, workspace: Any, receiver: Receiver, allow_private: Any
) -> None:
    WebhookFactory(workspace=workspace, url=receiver.url("/hook"))
    datas = [{"n": 1, "text": 'Launch 🚀\u2028 "quoted" </script>'}, {"n": 2, "float": 1.5, "nested": {"a": [1, None]}}]
    for index, name in enumerate(("post.published", "image.failed", "post.scheduled")):
        emit_event(workspace_id=workspace.id, name=name, data=datas[index % 2])
    for delivery in Delivery.objects.order_by("event__created_at"):
        attempt_one(delivery.pk)
    received = [r.body for r in receiver.to("/hook")]
    assert len(received) == 3
    response = api.get("/api/v1/events")
    assert response.content.startswith(b'{"events":[' + b",".join(received) + b'],"nextCursor":"')
    assert response.content.endswith(b',"hasMore":false}')
    bodies, cursor = _page(api)
    assert bodies == received
    assert [json.loads(b)["event"] for b in bodies] == ["post.published", "image.failed", "post.scheduled"]
    # Nothing after the last: an empty page that hands the same cursor back, to poll with later.
    assert _full_page(api, f"?after={cursor}") == ([], cursor, False)
    emit_event(workspace_id=workspace.id, name="post.failed", data={})
    later, next_cursor = _page(api, f"?after={cursor}")
    assert [json.loads(b)["event"] for b in later] == ["post.failed"] and next_cursor != cursor


def test_pages_follow_the_cursor_with_nothing_missing_or_doubled(api: Any, workspace: Any) -> None:
    with transaction.atomic():  # three events of one transaction
        for n in range(3):
            emit_event(workspace_id=workspace.id, name="post.published", data={"n": n})
    for n in range(3, 7):
        emit_event(workspace_id=workspace.id, name="post.published", data={"n": n})
    # Events of one transaction at the same instant are ordered by id, and the cursor keeps them apart.
    first = Event.objects.order_by("created_at").first()
    same = Event.objects.order_by("created_at")[:3]
    Event.objects.filter(pk__in=[e.pk for e in same]).update(created_at=first.created_at)
    seen: list[int] = []
    more_flags: list[bool] = []
    cursor = None
    for _ in range(10):
        bodies, cursor, has_more = _full_page(api, "?limit=2" + (f"&after={cursor}" if cursor else ""))
        more_flags.append(has_more)
        if not bodies:
            break
        seen += [json.loads(b)["data"]["n"] for b in bodies]
    # Pages of 2, 2, 2 and 1 of the 7 events: hasMore until the page that holds the last one, then
    # the empty page a client polls with.
    assert more_flags == [True, True, True, False, False]
    expected = [json.loads(e.payload)["data"]["n"] for e in Event.objects.order_by("created_at", "id")]
    assert list(Event.objects.order_by("seq").values_list("pk", flat=True)) == list(
        Event.objects.order_by("created_at", "id").values_list("pk", flat=True)
    )  # sealed together: numbered in creation order
    assert seen == expected and sorted(seen) == list(range(7))
    assert sorted(seen[:3]) == [0, 1, 2] and seen[3:] == [3, 4, 5, 6]


def test_type_filters_in_both_array_encodings(api: Any, workspace: Any) -> None:
    for name in ("post.published", "post.failed", "image.completed", "post.failed"):
        emit_event(workspace_id=workspace.id, name=name, data={})
    bodies, _ = _page(api, "?type=post.failed")
    assert [json.loads(b)["event"] for b in bodies] == ["post.failed", "post.failed"]
    bodies, _ = _page(api, "?type[0]=image.completed&type[1]=post.published")
    assert [json.loads(b)["event"] for b in bodies] == ["post.published", "image.completed"]
    bodies, cursor = _page(api, "?type=post.failed&limit=1")
    bodies, _ = _page(api, f"?type=post.failed&after={cursor}")
    assert len(bodies) == 1


def test_only_this_workspace_and_only_the_retention_window(
    api: Any, workspace: Any, other_workspace: Any, settings: Any
) -> None:
    emit_event(workspace_id=other_workspace.id, name="post.published", data={"theirs": True})
    emit_event(workspace_id=workspace.id, name="post.published", data={"old": True})
    emit_event(workspace_id=workspace.id, name="post.published", data={"recent": True})
    old = Event.objects.get(payload__contains='"old"')
    Event.objects.filter(pk=old.pk).update(created_at=timezone.now() - dt.timedelta(days=30, minutes=1))
    bodies, _ = _page(api)
    assert [json.loads(b)["data"] for b in bodies] == [{"recent": True}]
    settings.EVENTS_RETENTION_DAYS = 31
    bodies, _ = _page(api)
    assert [json.loads(b)["data"] for b in bodies] == [{"old": True}, {"recent": True}]
    # A cursor only positions in the feed: from the start, it never shows another workspace's events.
    bodies, _ = _page(api, f"?after={encode_event_cursor(0)}")
    assert [json.loads(b)["data"] for b in bodies] == [{"old": True}, {"recent": True}]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("?limit=0", "limit: Ensure this value is greater than or equal to 1."),
        ("?limit=101", "limit: Ensure this value is less than or equal to 100."),
        ("?limit=ten", "limit: must be an integer"),
        ("?after=not-a-cursor", "after: must be a nextCursor returned by GET /events"),
        ("?after=MS5hYmMuZXZ0", "after: must be a nextCursor returned by GET /events"),
        ("?after=-1", "after: must be a nextCursor returned by GET /events"),
        ("?after=1234567890123456789", "after: must be a nextCursor returned by GET /events"),
        ("?after=%F0%9F%9A%80", "after: must be a nextCursor returned by GET /events"),
        ("?after=" + "1" * 201, "after: must be a nextCursor returned by GET /events"),
        ("?after=", "after: This field may not be blank."),
        (
            "?type=webhook.test",
            f'type[0]: "webhook.test" is not an event name; valid names: {", ".join(STORED_EVENT_NAMES)}',
        ),
        ("?type=nope&limit=5", f'type[0]: "nope" is not an event name; valid names: {", ".join(STORED_EVENT_NAMES)}'),
        ("?page=2", "property page should not exist"),
        ("?limit=1&limit=2", "limit must be given once"),
    ],
)
def test_invalid_queries_are_400_naming_the_parameter(api: Any, query: str, message: str) -> None:
    response = api.get(f"/api/v1/events{query}")
    assert response.status_code == 400, response.content
    assert response.json()["message"] == [message]


def test_permissions(anon: Any, client_for: Any) -> None:
    response = anon.get("/api/v1/events")
    assert response.status_code == 401 and response.json()["message"] == "API key is invalid or missing"
    response = client_for("contributor").get("/api/v1/events")
    assert response.status_code == 403
    assert response.json() == {
        "statusCode": 403,
        "error": "Forbidden",
        "message": "This operation requires the webhooks.read permission",
        "code": "permission_denied",
        "requiredPermission": "webhooks.read",
        "role": "contributor",
        "tokenType": "api_token",
    }
    for role in ("viewer", "editor", "admin"):
        assert client_for(role).get("/api/v1/events").status_code == 200
    assert client_for("viewer").post("/api/v1/events", {}, format="json").status_code == 405


def test_a_fixed_number_of_queries_whatever_the_page_size(api: Any, workspace: Any) -> None:
    def count() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert api.get("/api/v1/events?limit=100").status_code == 200
        return len(ctx.captured_queries)

    emit_event(workspace_id=workspace.id, name="post.published", data={})
    count()  # the key's first use writes last_used_at
    emit_event(workspace_id=workspace.id, name="post.published", data={})
    few = count()  # one event to seal
    for _ in range(20):
        emit_event(workspace_id=workspace.id, name="post.published", data={})
    assert count() == few


def test_the_feed_query_uses_the_workspace_order_index(workspace: Any) -> None:
    emit_event(workspace_id=workspace.id, name="post.published", data={})
    assert events_seal(workspace=workspace) == 1
    assert events_seal(workspace=workspace) == 0  # sealing twice numbers nothing more
    cursor = event_page(workspace=workspace, after=None, limit=1, names=None).next_cursor
    with CaptureQueriesContext(connection) as ctx:
        event_page(workspace=workspace, after=cursor, limit=20, names=["post.published"])
    (query,) = ctx.captured_queries
    # On a table this small the planner may as well scan and sort, whichever its statistics (what
    # the other tests left behind) favour; with both off, it takes the plan the feed relies on at
    # scale if one exists: the workspace's sealed events read in seq order from the index. SET LOCAL
    # lasts as long as its transaction: this module's tests commit each statement, so without the
    # block the two settings ended before the EXPLAIN and the plan followed the statistics.
    with transaction.atomic(), connection.cursor() as db:
        db.execute("SET LOCAL enable_seqscan = off")
        db.execute("SET LOCAL enable_sort = off")
        db.execute("SHOW enable_sort")
        assert db.fetchone() == ("off",)
        db.execute("EXPLAIN " + query["sql"])
        plan = "\n".join(row[0] for row in db.fetchall())
    assert "event_ws_feed" in plan and "Sort" not in plan, plan


def test_no_cursor_passes_an_event_whose_transaction_is_still_open(api: Any, workspace: Any) -> None:
    """An event stamped first but committed last (a slow publish transaction) is never skipped: it
    is numbered when it becomes visible, after every event a reader has already been given."""
    written, release = threading.Event(), threading.Event()

    def slow_transaction() -> None:
        try:
            with transaction.atomic():
                emit_event(workspace_id=workspace.id, name="post.published", data={"n": 1})
                written.set()
                assert release.wait(timeout=60)
        finally:
            connections.close_all()

    slow = threading.Thread(target=slow_transaction)
    slow.start()
    try:
        assert written.wait(timeout=60)
        emit_event(workspace_id=workspace.id, name="post.published", data={"n": 2})  # committed at once
        emit_event(workspace_id=workspace.id, name="image.failed", data={"n": 3})
        bodies, cursor = _page(api)
        assert [json.loads(b)["data"] for b in bodies] == [{"n": 2}, {"n": 3}]  # n 1 is not visible yet
    finally:
        release.set()
        slow.join(timeout=60)
    first = Event.objects.order_by("created_at").first()
    assert json.loads(first.payload)["data"] == {"n": 1}  # stamped before the cursor's events
    bodies, cursor = _page(api, f"?after={cursor}")
    assert [json.loads(b)["data"] for b in bodies] == [{"n": 1}]  # still served: nothing skipped
    assert _page(api, f"?after={cursor}") == ([], cursor)


def test_concurrent_readers_number_each_event_once(workspace: Any) -> None:
    for n in range(30):
        emit_event(workspace_id=workspace.id, name="post.published", data={"n": n})
    sealed = run_concurrently([lambda: events_seal(workspace=workspace, limit=10)] * 4)
    assert sorted(sealed) == [0, 10, 10, 10]
    seqs = list(Event.objects.order_by("created_at", "id").values_list("seq", flat=True))
    assert None not in seqs and seqs == sorted(seqs) and len(set(seqs)) == 30
