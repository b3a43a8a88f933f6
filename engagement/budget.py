"""The per-account budget of comment reads: at most ``Capabilities.comment_reads_per_hour`` calls
of ``list_comments`` per account in each clock hour (UTC), counted in Redis so that every worker
shares it. That number is the share of the platform's own per-account rate limit that the inbox may
spend; publishing, analytics and the comment actions keep the rest. A platform that answers rate
limited anyway (``RateLimited``/``QuotaExhausted``) is left alone until its ``retry_at``
(:func:`hold` / :func:`held_until`), whatever the budget still says."""

from __future__ import annotations

import datetime as dt
import time

from core.redis import get_redis
from platforms.base import Platform
from platforms.capabilities import CAPABILITIES

WINDOW_SECONDS = 3600


def _window(now: float) -> int:
    return int(now // WINDOW_SECONDS)


def _key(account_id: str, window: int) -> str:
    return f"engagement:reads:{account_id}:{window}"


def limit_of(platform: str) -> int:
    return CAPABILITIES[Platform(platform)].comment_reads_per_hour


def take(account_id: str, platform: str, *, now: float | None = None) -> bool:
    """Spend one read of the account's budget for this hour: False (nothing spent) once it is used
    up, or when the platform gives comments no budget at all."""
    limit = limit_of(platform)
    if limit <= 0:
        return False
    window = _window(time.time() if now is None else now)
    key = _key(account_id, window)
    redis = get_redis()
    used = int(redis.incr(key))
    if used == 1:
        redis.expire(key, WINDOW_SECONDS + 60)
    if used > limit:
        redis.decr(key)
        return False
    return True


def used(account_id: str, *, now: float | None = None) -> int:
    """Reads spent by the account in this hour."""
    value = get_redis().get(_key(account_id, _window(time.time() if now is None else now)))
    return int(value or 0)


def next_window(now: dt.datetime) -> dt.datetime:
    """When the budget is whole again: the start of the next clock hour."""
    start = (_window(now.timestamp()) + 1) * WINDOW_SECONDS
    return dt.datetime.fromtimestamp(start, tz=dt.UTC)


def _held_key(account_id: str) -> str:
    return f"engagement:held:{account_id}"


def hold(account_id: str, until: dt.datetime, *, now: dt.datetime) -> None:
    """The platform said the account is rate limited until ``until``: no read before then."""
    seconds = int((until - now).total_seconds()) + 1
    if seconds > 0:
        get_redis().set(_held_key(account_id), until.isoformat(), ex=seconds)


def held_until(account_id: str) -> dt.datetime | None:
    value = get_redis().get(_held_key(account_id))
    if not value:
        return None
    return dt.datetime.fromisoformat(value.decode() if isinstance(value, bytes) else str(value))
