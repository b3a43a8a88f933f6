"""API keys already read, kept by each process, so that a request with a known key costs no
database round trip.

A kept row counts only while the *keys generation* in Redis is the one it was read under. Every
write to a key or a workspace (revocation, a change in the admin, a deletion) sets a new random
generation, one at once and another when its transaction commits; the next request in every
process then reads the row again. Revocation stays immediate across processes. The generation
is read *before* the database, so a row read just before a concurrent write commits is kept
under a generation that write replaces.

When Redis cannot be read, nothing kept is trusted and every request reads the database. A
generation is random rather than counted, so a wiped Redis never brings an old one back. What
can go unseen: a write that bypasses the services (raw SQL), or one whose new generation could
not be set because Redis was down. ``API_KEY_CACHE_SECONDS`` bounds both: a kept row is read
again after that long whatever the generation says (0 keeps nothing)."""

from __future__ import annotations

import datetime as dt
import logging
import secrets
import threading
from dataclasses import dataclass, replace
from time import monotonic
from typing import Any

import redis
from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_delete, post_save

from core.redis import get_redis
from workspaces.models import ApiKey, Organization, Workspace
from workspaces.selectors import api_key_from_row, api_key_row

logger = logging.getLogger(__name__)

GENERATION_KEY = "auth:keys-generation"
MAX_ENTRIES = 4096


@dataclass(frozen=True)
class _Entry:
    generation: bytes
    row: tuple[Any, ...]
    read_at: float
    used_at: dt.datetime | None = None  # when this process last wrote the key's last_used_at


_entries: dict[str, _Entry] = {}
_writing = threading.Lock()


def api_key_by_lookup(lookup: str) -> ApiKey | None:
    """The API key of ``lookup`` with its workspace (fresh instances on every call); None when
    there is none. Unknown lookups are not kept: each one reads the database."""
    seconds = settings.API_KEY_CACHE_SECONDS
    generation = _current_generation() if seconds > 0 else None
    if generation is None:
        row = api_key_row(lookup=lookup)
        return None if row is None else api_key_from_row(row)
    entry = _entries.get(lookup)
    now = monotonic()
    if entry is not None and entry.generation == generation and now - entry.read_at < seconds:
        api_key = api_key_from_row(entry.row)
        api_key.last_used_at = entry.used_at or api_key.last_used_at
        return api_key
    row = api_key_row(lookup=lookup)
    if row is None:
        _entries.pop(lookup, None)
        return None
    with _writing:
        _entries.pop(lookup, None)
        while len(_entries) >= MAX_ENTRIES:
            del _entries[next(iter(_entries))]  # the oldest kept
        _entries[lookup] = _Entry(generation=generation, row=row, read_at=now)
    return api_key_from_row(row)


def used(lookup: str, when: dt.datetime) -> None:
    """This process wrote the key's ``last_used_at``: its copy shows the new time from now on
    (a write nobody else needs to see, so the generation stays)."""
    with _writing:
        entry = _entries.get(lookup)
        if entry is not None:
            _entries[lookup] = replace(entry, used_at=when)


def keys_changed() -> None:
    """A key or a workspace was written: no process may use a row read before. A new generation
    now, and another when the transaction commits (a request that read the old row in between
    kept it under the first one). Outside a transaction, both happen now."""
    _new_generation()
    transaction.on_commit(_new_generation)


def watch_writes() -> None:
    """Every save and deletion of a key, a workspace or an organization (kept rows carry all
    three), from anywhere (the admin, cascades), calls :func:`keys_changed`. Revocations are UPDATE statements, which send no signal: the
    services that revoke call it themselves."""
    for model in (ApiKey, Workspace, Organization):
        for signal in (post_save, post_delete):
            signal.connect(_written, sender=model, dispatch_uid=f"key_cache.{model.__name__}")


def _written(**_signal: Any) -> None:
    keys_changed()


def _current_generation() -> bytes | None:
    client = get_redis()
    try:
        generation = client.get(GENERATION_KEY)
        if generation is None:  # first use, or Redis was wiped: start a generation nothing was kept under
            client.set(GENERATION_KEY, secrets.token_hex(16), nx=True)
            generation = client.get(GENERATION_KEY)
    except redis.RedisError:
        _forget_all()
        return None
    return generation if isinstance(generation, bytes) else None


def _new_generation() -> None:
    try:
        get_redis().set(GENERATION_KEY, secrets.token_hex(16))
    except redis.RedisError:
        _forget_all()
        logger.error(
            "API keys changed while Redis was unreachable: other processes may use their kept keys "
            "for up to API_KEY_CACHE_SECONDS (%s s)",
            settings.API_KEY_CACHE_SECONDS,
        )


def _forget_all() -> None:
    with _writing:
        _entries.clear()
