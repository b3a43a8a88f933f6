"""The Celery app the benchmark's worker runs: the production app (``config.celery``) plus one
no-op task used to measure the floor (how fast the same workers drain tasks doing nothing).
Kept here so no benchmark task ever lands in a production app."""

from __future__ import annotations

import time

from config.celery import app

__all__ = ["app", "noop"]


@app.task(name="bench.noop", ignore_result=True)
def noop(counter_key: str, expected: int) -> None:
    """Count itself (one Redis INCR); the last one stamps the time the queue was drained."""
    from core.redis import get_redis

    redis = get_redis()
    if int(redis.incr(counter_key)) >= expected:
        redis.set(f"{counter_key}:done", repr(time.time()))
