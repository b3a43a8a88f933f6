"""The bench's settling step (issue 35): each scenario starts from a vacuumed, analysed and
checkpointed database with no autovacuum worker on it, so a combined run reads what separate
runs read. On the test database here; the waiting itself with a stand-in for pg_stat_activity."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from bench.settle import autovacuum_workers, settle_database, wait_for_autovacuum
from tests.factories import WorkspaceFactory
from workspaces.models import Workspace


def _one(sql: str, params: Any = None) -> Any:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def _flush_statistics() -> None:
    """This backend's pending table statistics, published now rather than within a second or so."""
    _one("SELECT pg_stat_force_next_flush()")
    _one("SELECT pg_stat_clear_snapshot()")


def _unsettled_tables() -> list[tuple[str, int, int]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, n_dead_tup, n_mod_since_analyze FROM pg_stat_user_tables "
            "WHERE n_dead_tup > 0 OR n_mod_since_analyze > 0 ORDER BY relname"
        )
        return list(cursor.fetchall())


@pytest.mark.django_db(transaction=True)
def test_settling_leaves_nothing_for_autovacuum_checkpoints_and_no_worker_runs() -> None:
    table = Workspace._meta.db_table
    doomed = WorkspaceFactory.create_batch(25)
    Workspace.objects.filter(id__in=[w.id for w in doomed]).delete()
    _flush_statistics()
    dead, modified = _one("SELECT n_dead_tup, n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = %s", [table])
    assert dead >= 25 and modified >= 50  # what autovacuum would come back for
    wal_before, started = _one("SELECT pg_current_wal_insert_lsn(), clock_timestamp()")

    settled = settle_database()

    _flush_statistics()
    assert _unsettled_tables() == []
    last_vacuum, last_analyze = _one(
        "SELECT last_vacuum, last_analyze FROM pg_stat_user_tables WHERE relname = %s", [table]
    )
    assert last_vacuum >= started and last_analyze >= started
    # The checkpoint began after everything written before the settling: its redo point is later.
    redo_after_wal = _one("SELECT redo_lsn >= %s::pg_lsn FROM pg_control_checkpoint()", [str(wal_before)])[0]
    assert redo_after_wal is True
    assert autovacuum_workers() == []
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
