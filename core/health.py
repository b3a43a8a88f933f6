"""What ``/readyz``, ``/metrics`` and the staff dashboard say about the service's dependencies
and background machinery: each figure read on demand, each failure named instead of raised."""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import redis
from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from core.redis import get_redis

logger = logging.getLogger(__name__)

CELERY_QUEUES = ("publish", "webhooks", "analytics", "default")
# kombu's Redis transport keeps a queue in one list per priority step; priority 0 is the bare name.
_PRIORITY_SUFFIXES = ("", "\x06\x163", "\x06\x166", "\x06\x169")
BEAT_HEARTBEAT_KEY = "ops:beat:heartbeat"


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    # A dependency the web process cannot answer without (database, Redis): its failure is 503.
    # The others (beat, backlog) report trouble elsewhere while this process still serves.
    critical: bool

    @property
    def text(self) -> str:
        return "ok" if self.ok else self.detail


def check_database() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any driver error means not ready
        return Check("database", False, f"error: PostgreSQL unreachable ({exc.__class__.__name__})", critical=True)
    return Check("database", True, "ok", critical=True)


def check_redis() -> Check:
    try:
        get_redis().ping()
    except Exception as exc:  # connection refused, timeout, auth: all mean not ready
        return Check("redis", False, f"error: Redis unreachable ({exc.__class__.__name__})", critical=True)
    return Check("redis", True, "ok", critical=True)


def record_beat_heartbeat() -> None:
    """Called by the beat process each time it sends a task (every second: the dispatcher)."""
    try:
        get_redis().set(BEAT_HEARTBEAT_KEY, f"{time.time():.3f}", ex=24 * 3600)
    except redis.RedisError:
        logger.warning("beat heartbeat not recorded: Redis unreachable")


def beat_age_seconds() -> float | None:
    """Seconds since beat last sent a task; None when unknown (never seen, or Redis down)."""
    try:
        raw = get_redis().get(BEAT_HEARTBEAT_KEY)
    except redis.RedisError:
        return None
    if raw is None:
        return None
    return max(0.0, time.time() - float(raw))


def check_beat() -> Check:
    try:
        raw = get_redis().get(BEAT_HEARTBEAT_KEY)
    except redis.RedisError:
        return Check("beat", False, "unknown: Redis unreachable, beat's heartbeat cannot be read", critical=False)
    if raw is None:
        return Check(
            "beat", False, "unknown: no heartbeat from beat yet (is exactly one beat running?)", critical=False
        )
    age = max(0.0, time.time() - float(raw))
    if age > settings.READYZ_BEAT_STALE_SECONDS:
        return Check("beat", False, f"stale: beat last sent a task {age:.0f} s ago", critical=False)
    return Check("beat", True, "ok", critical=False)


# The oldest due post that is still waiting to be claimed (None when none is): the publishing app
# registers its query at start (posts/apps.py), since core imports no domain app.
_oldest_due_post: Callable[[dt.datetime], dt.datetime | None] | None = None


def register_oldest_due_post(query: Callable[[dt.datetime], dt.datetime | None]) -> None:
    global _oldest_due_post
    _oldest_due_post = query


def scheduler_lag_seconds() -> float | None:
    """How long the oldest SCHEDULED post that is due has waited to be claimed (0 when none has);
    None when the database cannot be read. One indexed read (the partial index of due posts)."""
    if _oldest_due_post is None:
        return 0.0  # no publishing app installed: nothing can be late
    now = timezone.now()
    try:
        oldest = _oldest_due_post(now)
    except DatabaseError:
        return None
    return 0.0 if oldest is None else (now - oldest).total_seconds()


def check_publish_backlog() -> Check:
    lag = scheduler_lag_seconds()
    if lag is None:
        return Check("publishBacklog", False, "unknown: the database cannot be read", critical=False)
    if lag > settings.READYZ_PUBLISH_LAG_SECONDS:
        return Check(
            "publishBacklog",
            False,
            f"late: the oldest due post has waited {lag:.0f} s for the dispatcher",
            critical=False,
        )
    return Check("publishBacklog", True, "ok", critical=False)


def readiness() -> list[Check]:
    return [check_database(), check_redis(), check_beat(), check_publish_backlog()]


def queue_depths() -> dict[str, int | None]:
    """Messages waiting in each Celery queue (None for every queue while Redis is unreachable)."""
    try:
        pipe = get_redis().pipeline(transaction=False)
        for queue in CELERY_QUEUES:
            for suffix in _PRIORITY_SUFFIXES:
                pipe.llen(f"{queue}{suffix}")
        lengths = pipe.execute()
    except redis.RedisError:
        return dict.fromkeys(CELERY_QUEUES)
    steps = len(_PRIORITY_SUFFIXES)
    return {queue: sum(lengths[i * steps : (i + 1) * steps]) for i, queue in enumerate(CELERY_QUEUES)}
