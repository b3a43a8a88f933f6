"""One Redis connection pool per process, from ``settings.REDIS_URL``."""

from __future__ import annotations

from functools import lru_cache

import redis
from django.conf import settings


def client_url(url: str) -> str:
    return url.replace("redis+socket://", "unix://", 1)


@lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(client_url(url), socket_timeout=2, socket_connect_timeout=2, health_check_interval=30)


def get_redis() -> redis.Redis:
    return _client(settings.REDIS_URL)
