"""A settled database before each scenario (issue 35): run after another scenario in one
invocation, burst once read twice the PostgreSQL CPU per target it reads alone, because the api
scenario's million rows were being vacuumed and analysed during its measurements. So every
scenario starts the way a separate run starts:

1. ``VACUUM (ANALYZE)`` of the whole bench database: no dead rows and no stale statistics left
   for autovacuum to come back for in the middle of the next scenario;
2. no autovacuum worker on the bench database (``pg_stat_activity``): one already running when
   the scenario ends goes on reading and writing beside the next one, so it is waited for;
3. ``CHECKPOINT``: the pages the earlier scenarios and the vacuum dirtied are written now, not
   by a checkpoint that falls inside the next measurement.

It runs on this process's Django connection unless given another (autocommit: VACUUM cannot run
in a transaction)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper

# An autovacuum worker that is still busy this long after the vacuum is reported, not waited for.
AUTOVACUUM_WAIT_SECONDS = 300.0
POLL_SECONDS = 0.5


def autovacuum_workers(db: BaseDatabaseWrapper = connection) -> list[tuple[int, str]]:
    """(pid, query) of each autovacuum worker on the database of ``db``."""
    with db.cursor() as cursor:
        cursor.execute(
            "SELECT pid, coalesce(query, '') FROM pg_stat_activity "
            "WHERE backend_type = 'autovacuum worker' AND datname = current_database()"
        )
        return [(int(pid), str(query)) for pid, query in cursor.fetchall()]


def wait_for_autovacuum(
    *,
    workers: Callable[[], list[tuple[int, str]]] = autovacuum_workers,
    sleep: Callable[[float], None] = time.sleep,
    wait_seconds: float = AUTOVACUUM_WAIT_SECONDS,
    poll_seconds: float = POLL_SECONDS,
) -> dict[str, Any]:
    """Poll until no autovacuum worker runs on the database, at most ``wait_seconds`` of polls.
    Returns how many polls saw one, and what is still running when the wait gave up."""
    polls = max(int(wait_seconds / poll_seconds), 1)
    busy_polls = 0
    seen: set[str] = set()
    for _ in range(polls):
        running = workers()
        if not running:
            return {"busyPolls": busy_polls, "seen": sorted(seen), "stillRunning": []}
        busy_polls += 1
        seen.update(query for _, query in running)
        sleep(poll_seconds)
    running = workers()
    return {"busyPolls": busy_polls, "seen": sorted(seen), "stillRunning": [query for _, query in running]}


def settle_database(db: BaseDatabaseWrapper = connection, **wait_options: Any) -> dict[str, Any]:
    """Vacuum and analyse the whole database of ``db``, wait for autovacuum to be idle on it,
    checkpoint. Returns what it found (for the scenario's JSON): seconds taken, autovacuum seen
    and left."""
    started = time.monotonic()
    with db.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")
    wait_options.setdefault("workers", lambda: autovacuum_workers(db))
    autovacuum = wait_for_autovacuum(**wait_options)
    with db.cursor() as cursor:
        cursor.execute("CHECKPOINT")
    return {"seconds": round(time.monotonic() - started, 1), "autovacuum": autovacuum}
