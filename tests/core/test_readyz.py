"""/readyz names each dependency and its state: PostgreSQL, Redis, beat's heartbeat and the
publish backlog. Redis is made really unreachable (settings pointed at a closed port)."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from django.db import connection
from django.utils import timezone

from core import health
from posts.models import Post, PostStatus
from tests.factories import WorkspaceFactory

pytestmark = pytest.mark.django_db


def test_everything_up_after_a_recent_beat(anon):
    health.record_beat_heartbeat()
    response = anon.get("/readyz")
    assert (response.status_code, response.json()) == (
        200,
        {"status": "ok", "checks": {"database": "ok", "redis": "ok", "beat": "ok", "publishBacklog": "ok"}},
    )


def test_redis_unreachable_is_a_named_503_never_a_500(anon, settings, refused_port):
    settings.REDIS_URL = f"redis://127.0.0.1:{refused_port}/0"
    response = anon.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "checks": {
            "database": "ok",
            "redis": "error: Redis unreachable (ConnectionError)",
            "beat": "unknown: Redis unreachable, beat's heartbeat cannot be read",
            "publishBacklog": "ok",
        },
    }


def test_postgresql_unreachable_is_a_named_503(anon, settings, refused_port, django_db_blocker):
    health.record_beat_heartbeat()
    original = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update({"HOST": "127.0.0.1", "PORT": str(refused_port)})
    try:
        response = anon.get("/readyz")
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(original)
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"] == "error: PostgreSQL unreachable (OperationalError)"
    assert body["checks"]["redis"] == "ok"
    assert body["checks"]["publishBacklog"] == "unknown: the database cannot be read"


def test_no_heartbeat_yet_and_a_stale_one_are_degraded_not_down(anon, settings):
    assert anon.get("/readyz").json() == {
        "status": "degraded",
        "checks": {
            "database": "ok",
            "redis": "ok",
            "beat": "unknown: no heartbeat from beat yet (is exactly one beat running?)",
            "publishBacklog": "ok",
        },
    }
    from core.redis import get_redis

    get_redis().set(health.BEAT_HEARTBEAT_KEY, f"{time.time() - settings.READYZ_BEAT_STALE_SECONDS - 30:.3f}")
    response = anon.get("/readyz")
    assert response.status_code == 200
    assert response.json()["status"] == "degraded"
    assert response.json()["checks"]["beat"].startswith("stale: beat last sent a task 1")


def test_a_due_post_left_unclaimed_makes_the_backlog_late(anon, settings):
    health.record_beat_heartbeat()
    due = timezone.now() - dt.timedelta(seconds=settings.READYZ_PUBLISH_LAG_SECONDS + 120)
    Post.objects.create(
        workspace=WorkspaceFactory(), status=PostStatus.SCHEDULED, content_type="TEXT", scheduled_at=due
    )
    response = anon.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded"
    waited = int(body["checks"]["publishBacklog"].split("waited ")[1].split(" s")[0])
    assert waited >= settings.READYZ_PUBLISH_LAG_SECONDS + 120
    assert body["checks"]["publishBacklog"].startswith("late: the oldest due post has waited ")
