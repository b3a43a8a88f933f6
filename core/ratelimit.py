"""Rate limiting per API key (per client address without a valid key), counted in Redis so
every web process shares one exact count. Fixed windows that start at a key's first request:
one atomic script increments the counter and reads the time left.

Every API response carries RateLimit-Policy, RateLimit-Limit, RateLimit-Remaining and
RateLimit-Reset; a 429 adds Retry-After. When Redis is unreachable the limiter fails open
(the API stays up; the failure is logged and ``/readyz`` reports Redis down)."""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import redis
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from core import errors, metrics
from core.middleware import API_PREFIX
from core.redis import get_redis
from core.responses import json_error

logger = logging.getLogger(__name__)

_SCRIPT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}
"""
_last_failure_log = 0.0
# Sent by its SHA1 (EVALSHA) rather than in full on every request; loaded into a server that
# does not know it yet (a restart or SCRIPT FLUSH forgets it).
_SCRIPT_SHA = hashlib.sha1(_SCRIPT.encode(), usedforsecurity=False).hexdigest()


@dataclass(frozen=True)
class Decision:
    limit: int
    remaining: int
    reset_seconds: int
    allowed: bool


def hit(identity: str, limit: int, window_seconds: int) -> Decision:
    client = get_redis()
    key, window_ms = f"rl:{identity}", window_seconds * 1000
    try:
        count, ttl_ms = client.evalsha(_SCRIPT_SHA, 1, key, window_ms)
    except redis.exceptions.NoScriptError:
        client.script_load(_SCRIPT)
        count, ttl_ms = client.evalsha(_SCRIPT_SHA, 1, key, window_ms)
    reset = max(1, math.ceil(int(ttl_ms) / 1000))
    return Decision(limit=limit, remaining=max(0, limit - int(count)), reset_seconds=reset, allowed=int(count) <= limit)


def _client_address(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR") or "unknown"


class RateLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        principal = getattr(request, "principal", None)
        window = settings.RATE_LIMIT_WINDOW_SECONDS
        if principal is not None:
            identity, limit = principal.rate_key, principal.rate_limit
        else:
            identity, limit = f"addr:{_client_address(request)}", settings.RATE_LIMIT_DEFAULT
        try:
            decision = hit(identity, limit, window)
        except redis.RedisError:
            _log_failure()
            decision = Decision(limit=limit, remaining=limit, reset_seconds=window, allowed=True)
        if decision.allowed:
            response = self.get_response(request)
        else:
            metrics.rate_limit_refused()
            response = json_error(
                errors.RateLimited(
                    f"Rate limit of {limit} requests per {window} seconds exceeded; retry in "
                    f"{decision.reset_seconds} seconds",
                    headers={"Retry-After": str(decision.reset_seconds)},
                )
            )
        response["RateLimit-Policy"] = f"{limit};w={window}"
        response["RateLimit-Limit"] = str(limit)
        response["RateLimit-Remaining"] = str(decision.remaining)
        response["RateLimit-Reset"] = str(decision.reset_seconds)
        return response


def _log_failure() -> None:
    global _last_failure_log
    now = time.monotonic()
    if now - _last_failure_log > 10:
        _last_failure_log = now
        logger.error("rate limiter: Redis unreachable, failing open")
