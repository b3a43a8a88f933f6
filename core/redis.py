"""One Redis connection pool per process, from ``settings.REDIS_URL``."""

from __future__ import annotations

from functools import lru_cache

import redis
from django.conf import settings
from redis.backoff import ExponentialWithJitterBackoff
from redis.retry import Retry

# redis-py's default is 10 retries backing off up to 1 s each: with Redis down, every request
# that asks it something (the rate limiter, the key cache) stalled about 4 s before failing
# open. Two quick retries ride out a blip; a server that is gone fails in well under a second.
RETRY_ATTEMPTS = 2
RETRY_BACKOFF = ExponentialWithJitterBackoff(base=0.01, cap=0.1)


def client_url(url: str) -> str:
    return url.replace("redis+socket://", "unix://", 1)


@lru_cache(maxsize=4)
def client_for(url: str) -> redis.Redis:
    return redis.Redis.from_url(
        client_url(url),
        socket_timeout=2,
        socket_connect_timeout=2,
        health_check_interval=30,
        retry=Retry(RETRY_BACKOFF, RETRY_ATTEMPTS),
    )


def get_redis() -> redis.Redis:
    return client_for(settings.REDIS_URL)
