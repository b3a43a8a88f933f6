"""Failures armed on purpose: the next calls a simulator receives whose path contains ``path``
(and whose method is ``method``, and whose body contains ``body``, when given) fail the way that
platform fails, so the error
classes a real platform answers with (rate limit with its retry time, a used-up quota, a 5xx, an
answer that comes too late) can be produced over HTTP on demand. ``body`` singles out one call
among many to the same path (a thread's item k: its text), so a test can hold exactly that one.

Each simulator module names its platform's answers in ``FAULTS`` (kind → view of the request);
``timeout`` is common to all: the call is carried out, then answered after ``seconds`` (the
client has given up by then, as after a real read timeout)."""

from __future__ import annotations

import importlib
import json
import secrets
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse

from platforms.sandbox.store import SandboxStore

TIMEOUT = "timeout"
KINDS = ("rate_limited", "quota_exhausted", "server_error", TIMEOUT)


def renderers(slug: str) -> dict[str, Callable[[HttpRequest], HttpResponse]]:
    """The platform's own failure answers by kind (its simulator module's ``FAULTS``)."""
    module = importlib.import_module(f"platforms.sandbox.{slug}")
    return dict(getattr(module, "FAULTS", {}))


def supported(slug: str) -> tuple[str, ...]:
    return (*renderers(slug), TIMEOUT)


def arm(
    slug: str, kind: str, *, path: str = "", method: str = "", times: int = 1, seconds: float = 0.0, body: str = ""
) -> dict[str, Any]:
    store = SandboxStore(slug)
    fault_id = secrets.token_hex(6)
    fault: dict[str, Any] = {
        "id": fault_id,
        "kind": kind,
        "path": path,
        "method": method.upper(),
        "times": times,
        "seconds": seconds,
        "body": body,
    }
    pipe = store.redis.pipeline()
    pipe.set(store._key("fault", fault_id), times, ex=86400)
    pipe.rpush(store._key("faults"), json.dumps(fault))
    pipe.expire(store._key("faults"), 86400)
    pipe.execute()
    return fault


def armed(slug: str) -> list[dict[str, Any]]:
    """The armed faults with the number of calls each still fails."""
    store = SandboxStore(slug)
    faults = [json.loads(raw) for raw in store.redis.lrange(store._key("faults"), 0, -1)]
    left = store.redis.mget([store._key("fault", f["id"]) for f in faults]) if faults else []
    return [{**fault, "left": int(count or 0)} for fault, count in zip(faults, left, strict=True)]


def clear(slug: str) -> None:
    store = SandboxStore(slug)
    for fault in armed(slug):
        store.redis.delete(store._key("fault", fault["id"]))
    store.redis.delete(store._key("faults"))


def take(slug: str, method: str, path: str, body: Callable[[], str] | None = None) -> dict[str, Any] | None:
    """The first armed fault this call matches, counted as used (atomic per fault: two
    concurrent calls never both take the last use). ``body`` gives the call's body as text; it is
    read only when a fault filters on it."""
    store = SandboxStore(slug)
    for raw in store.redis.lrange(store._key("faults"), 0, -1):
        fault = json.loads(raw)
        if fault["method"] and fault["method"] != method.upper():
            continue
        if fault["path"] not in path:
            continue
        if fault.get("body") and (body is None or fault["body"] not in body()):
            continue
        if int(store.redis.decr(store._key("fault", fault["id"]))) >= 0:
            return dict(fault)
        store.redis.lrem(store._key("faults"), 1, raw if isinstance(raw, str) else raw.decode())  # used up
    return None
