"""core.bulk: many rows in one statement store exactly what the ORM's bulk_create stores."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from analytics.models import TrackedPost
from core import bulk
from tests.factories import posts as posts_factories
from tests.factories.webhooks import WebhookFactory
from webhooks.models import Delivery, Event, Webhook

AWKWARD = "quotes \" and ' and \\ backslashes, {braces}, [brackets], émoji 🚀, a\nnewline and a\ttab"


def _fields(row: Any, *, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    return {f.attname: getattr(row, f.attname) for f in type(row)._meta.concrete_fields if f.attname not in skip}


def test_insert_stores_what_bulk_create_stores_in_one_statement(workspace: Any) -> None:
    at = timezone.now().replace(microsecond=123457)
    ours = [
        Event(workspace=workspace, name="post.published", payload=f"{AWKWARD} {i}", created_at=at) for i in range(3)
    ]
    theirs = [
        Event(workspace=workspace, name="post.published", payload=f"{AWKWARD} {i}", created_at=at) for i in range(3)
    ]
    with CaptureQueriesContext(connection) as queries:
        bulk.insert(ours)
    assert len(queries) == 1
    Event.objects.bulk_create(theirs)
    for mine, reference in zip(ours, theirs, strict=True):
        stored, expected = Event.objects.get(id=mine.id), Event.objects.get(id=reference.id)
        assert _fields(stored, skip=("id",)) == _fields(expected, skip=("id",))
        assert stored.created_at == at  # every microsecond kept


def test_insert_fills_defaults_and_auto_now_add(workspace: Any) -> None:
    hook: Webhook = WebhookFactory(workspace=workspace)  # type: ignore[assignment]
    event = Event(workspace=workspace, name="post.published", payload="{}", created_at=timezone.now())
    bulk.insert([event])
    before = timezone.now()
    delivery = Delivery(webhook=hook, event=event, next_attempt_at=event.created_at)
    bulk.insert([delivery])
    stored = Delivery.objects.get(id=delivery.id)
    assert stored.status == "pending" and stored.attempt_count == 0 and stored.last_error == ""
    assert stored.created_at >= before


def test_insert_with_conflicts_updates_the_named_fields_only(workspace: Any) -> None:
    account = posts_factories.account(workspace, "BLUESKY")
    first = timezone.now() - dt.timedelta(days=1)

    def row(text: str, published_at: dt.datetime) -> TrackedPost:
        return TrackedPost(
            account=account,
            platform_post_id="remote-1",
            workspace=workspace,
            platform="BLUESKY",
            published_at=published_at,
            text=text,
            refresh_until=published_at + dt.timedelta(days=180),
            likes=7,
        )

    original = row("first", first)
    bulk.insert([original], unique_fields=["account", "platform_post_id"], update_fields=["text"])
    bulk.insert(
        [row(AWKWARD, first + dt.timedelta(hours=1))],
        unique_fields=["account", "platform_post_id"],
        update_fields=["text"],
    )
    stored = TrackedPost.objects.get(account=account, platform_post_id="remote-1")
    assert stored.id == original.id and stored.text == AWKWARD
    assert stored.published_at == first  # not among the updated fields


def test_nothing_to_insert_sends_nothing(db: Any) -> None:
    with CaptureQueriesContext(connection) as queries:
        bulk.insert([])
    assert len(queries) == 0


def test_rows_param_keeps_microseconds_and_nests_json(db: Any) -> None:
    at = dt.datetime(2026, 11, 27, 22, 40, 14, 123456, tzinfo=dt.UTC)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT v.at, v.doc -> 'k', v.missing FROM jsonb_to_recordset(%s::jsonb) AS v(at timestamptz, doc jsonb, missing text)",
            [bulk.rows_param([{"at": at, "doc": {"k": [1, AWKWARD]}}])],
        )
        stamp, doc, missing = cursor.fetchone()
    assert stamp == at and json.loads(doc) == [1, AWKWARD] and missing is None  # Django reads jsonb as text
