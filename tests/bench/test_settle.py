"""The bench's settling step (issue 35): each scenario starts from a vacuumed, analysed and
checkpointed database with no autovacuum worker on it, so a combined run reads what separate
runs read. On a small database of its own (one table, a few dead rows): the test database, after
the rest of the suite, is large and busy with autovacuum, and settling it took minutes. The
waiting itself with a stand-in for pg_stat_activity."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper

from bench.settle import autovacuum_workers, settle_database, wait_for_autovacuum


def _execute(db: BaseDatabaseWrapper, sql: str) -> None:
    with db.cursor() as cursor:
        cursor.execute(sql)


def _one(db: BaseDatabaseWrapper, sql: str, params: Any = None) -> Any:
    with db.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def _connect(name: str) -> BaseDatabaseWrapper:
    """A Django connection (autocommit) to database ``name`` of the test database's server."""
    default = connections["default"]
    return type(default)({**default.settings_dict, "NAME": name}, alias=f"settle-{name}")


@pytest.fixture
def small_database(django_db_blocker: Any) -> Iterator[BaseDatabaseWrapper]:
    """A new database on the test database's server, dropped afterwards: settling is about a whole
    database, and this one holds only what the test puts in it."""
    name = f"crosspost_settle_{secrets.token_hex(4)}"
    with django_db_blocker.unblock():
        server = _connect("postgres")
        _execute(server, f'CREATE DATABASE "{name}" TEMPLATE template0')
        db = _connect(name)
        try:
            yield db
        finally:
            db.close()
            _execute(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            server.close()


def _flush_statistics(db: BaseDatabaseWrapper) -> None:
    """This backend's pending table statistics, published now rather than within a second or so."""
    _one(db, "SELECT pg_stat_force_next_flush()")
    _one(db, "SELECT pg_stat_clear_snapshot()")


def _unsettled_tables(db: BaseDatabaseWrapper) -> list[tuple[str, int, int]]:
    with db.cursor() as cursor:
        cursor.execute(
            "SELECT relname, n_dead_tup, n_mod_since_analyze FROM pg_stat_user_tables "
            "WHERE n_dead_tup > 0 OR n_mod_since_analyze > 0 ORDER BY relname"
        )
        return list(cursor.fetchall())


def test_settling_leaves_nothing_for_autovacuum_checkpoints_and_no_worker_runs(
    small_database: BaseDatabaseWrapper,
) -> None:
    db = small_database
    _execute(db, "CREATE TABLE doomed (id integer PRIMARY KEY, body text NOT NULL)")
    _execute(db, "INSERT INTO doomed SELECT n, repeat('x', 100) FROM generate_series(1, 25) AS n")
    _execute(db, "DELETE FROM doomed")
    _flush_statistics(db)
    dead, modified = _one(
        db, "SELECT n_dead_tup, n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = 'doomed'"
    )
    assert dead >= 25 and modified >= 50  # what autovacuum would come back for
    wal_before, started = _one(db, "SELECT pg_current_wal_insert_lsn(), clock_timestamp()")

    settled = settle_database(db)

    _flush_statistics(db)
    assert _unsettled_tables(db) == []
    last_vacuum, last_analyze = _one(
        db, "SELECT last_vacuum, last_analyze FROM pg_stat_user_tables WHERE relname = 'doomed'"
    )
    assert last_vacuum >= started and last_analyze >= started
    # The checkpoint began after everything written before the settling: its redo point is later.
    redo_after_wal = _one(db, "SELECT redo_lsn >= %s::pg_lsn FROM pg_control_checkpoint()", [str(wal_before)])[0]
    assert redo_after_wal is True
    assert autovacuum_workers(db) == []
    assert settled["autovacuum"]["stillRunning"] == []


def test_waits_while_an_autovacuum_worker_runs_on_the_database() -> None:
    answers = [[(41, "autovacuum: VACUUM public.posts_post")], [(41, "autovacuum: VACUUM public.posts_post")], []]
    asked: list[int] = []
    slept: list[float] = []

    def workers() -> list[tuple[int, str]]:
        asked.append(1)
        return answers[len(asked) - 1]

    result = wait_for_autovacuum(workers=workers, sleep=slept.append, wait_seconds=10, poll_seconds=0.5)

    assert len(asked) == 3 and slept == [0.5, 0.5]
    assert result == {"busyPolls": 2, "seen": ["autovacuum: VACUUM public.posts_post"], "stillRunning": []}


def test_a_worker_that_outlasts_the_wait_is_reported_not_waited_for_forever() -> None:
    slept: list[float] = []

    result = wait_for_autovacuum(
        workers=lambda: [(7, "autovacuum: ANALYZE public.posts_posttarget")],
        sleep=slept.append,
        wait_seconds=2,
        poll_seconds=0.5,
    )

    assert slept == [0.5] * 4
    assert result["busyPolls"] == 4
    assert result["stillRunning"] == ["autovacuum: ANALYZE public.posts_posttarget"]


def test_no_worker_means_no_wait() -> None:
    slept: list[float] = []
    assert wait_for_autovacuum(workers=list, sleep=slept.append) == {"busyPolls": 0, "seen": [], "stillRunning": []}
    assert slept == []
