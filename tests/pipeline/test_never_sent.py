"""A publish attempt whose request never left is retried and ends published, on a platform with
neither idempotency key nor lookup (Telegram); one whose answer was lost after sending ends
``unknown_outcome``; and the attempt is on record as started sending before its request arrives."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.utils import timezone

from platforms.base import Platform
from posts.models import PostTarget, TargetStatus
from posts.pipeline.claims import BOOK_KEY, SENDING_KEY
from posts.pipeline.publisher import publish_targets
from tests.pipeline.helpers import connect_account, make_post, sandbox_publishes, targets_of
from tests.platforms import wire

pytestmark = pytest.mark.django_db(transaction=True)


def _telegram_at(settings, base_url: str) -> None:
    settings.PLATFORM_APP_ENV = {**settings.PLATFORM_APP_ENV, "PLATFORM_TELEGRAM_BASE_URL": base_url}


def test_a_refused_connection_is_retried_and_the_entry_published_once(sandbox, workspace, settings, refused_port):
    post = make_post(workspace, [connect_account(workspace, Platform.TELEGRAM)], text="after the outage")
    target = targets_of(post)[0]
    _telegram_at(settings, f"http://127.0.0.1:{refused_port}")

    publish_targets([target.id])

    target.refresh_from_db()
    assert (target.status, target.error_code) == (TargetStatus.PENDING, "platform_unavailable")
    assert SENDING_KEY not in (target.remote_state.get(BOOK_KEY) or {})
    _telegram_at(settings, f"{sandbox}/telegram")
    PostTarget.objects.filter(id=target.id).update(next_attempt_at=timezone.now() - dt.timedelta(seconds=1))
    publish_targets([target.id])

    target.refresh_from_db()
    assert (target.status, target.attempts) == (TargetStatus.PUBLISHED, 2)
    assert len(sandbox_publishes(Platform.TELEGRAM)) == 1


def test_an_answer_lost_after_sending_ends_unknown_outcome_recorded_as_started(sandbox, workspace, settings):
    post = make_post(workspace, [connect_account(workspace, Platform.TELEGRAM)], text="lost answer")
    target = targets_of(post)[0]
    on_record: list[tuple[object, dt.datetime | None]] = []

    def look_at_the_row() -> None:  # on the server's thread, when the request arrives
        try:
            row = PostTarget.objects.get(id=target.id)
            on_record.append(((row.remote_state.get(BOOK_KEY) or {}).get(SENDING_KEY), row.lease_until))
        finally:
            connection.close()

    with wire.serving(wire.drop_after_request, on_request=look_at_the_row) as (port, seen):
        _telegram_at(settings, f"http://127.0.0.1:{port}")
        publish_targets([target.id])

    [(marker, lease)] = on_record
    assert lease is not None and marker == lease.isoformat()
    assert seen.requests() == 1
    target.refresh_from_db()
    assert (target.status, target.error_code) == (TargetStatus.FAILED, "unknown_outcome")
