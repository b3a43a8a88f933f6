"""The work engine (core/work.py) on real work rows (AI image jobs: status, lease, attempts):
claims exclude each other, a fenced write after a takeover changes nothing, releases and sweeps
are fenced and idempotent, backoff stays in its bounds, the side-by-side runner writes every
answer once, and the worker process's threads live from worker_process_init to its shutdown."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from celery.signals import worker_process_init, worker_process_shutdown
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from core import work
from media.models import AiImageJob, AiJobStatus

pytestmark = pytest.mark.django_db(transaction=True)


def _jobs(workspace: Any, n: int) -> list[str]:
    return [AiImageJob.objects.create(workspace=workspace, prompt=f"p{i}", session_id="s").id for i in range(n)]


def _due(now: dt.datetime) -> Any:
    return AiImageJob.objects.filter(status=AiJobStatus.QUEUED).filter(work.lease_free(now))


def test_a_row_is_claimed_once(workspace: Any) -> None:
    ids = _jobs(workspace, 3)
    now = timezone.now()
    lease = now + dt.timedelta(minutes=1)
    first = work.claim(_due(now), lease_until=lease, attempts=F("attempts") + 1)
    second = work.claim(_due(now), lease_until=lease + dt.timedelta(seconds=1), attempts=F("attempts") + 1)
    assert sorted(first) == sorted(ids) and second == []
    assert set(AiImageJob.objects.values_list("lease_until", "attempts")) == {(lease, 1)}


def test_a_claim_skips_rows_another_transaction_holds_without_waiting(workspace: Any) -> None:
    held, free = _jobs(workspace, 2)
    locked, done = threading.Event(), threading.Event()

    def holder() -> None:
        try:
            with transaction.atomic():
                AiImageJob.objects.select_for_update().get(id=held)
                locked.set()
                done.wait(30)
        finally:
            connection.close()

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert locked.wait(30)
        now = timezone.now()
        claimed = work.claim(_due(now), lease_until=now + dt.timedelta(minutes=1))
    finally:
        done.set()
        thread.join(30)
    assert claimed == [free]


def test_a_claim_takes_the_limit_in_order(workspace: Any) -> None:
    ids = sorted(_jobs(workspace, 5))
    now = timezone.now()
    assert work.claim(_due(now), lease_until=now, limit=2, order_by=("id",)) == ids[:2]


def test_a_fenced_write_after_a_takeover_changes_nothing(workspace: Any) -> None:
    [job_id] = _jobs(workspace, 1)
    now = timezone.now()
    first_lease = now - dt.timedelta(seconds=1)  # its worker died: the lease ran out
    assert work.claim(_due(now), lease_until=first_lease) == [job_id]
    second_lease = now + dt.timedelta(minutes=1)
    assert work.claim(_due(now), lease_until=second_lease) == [job_id]  # taken over

    rows = AiImageJob.objects.filter(id=job_id)
    assert work.fenced(rows, lease_until=first_lease).update(status=AiJobStatus.FAILED) == 0
    assert work.release(rows, lease_until=first_lease, status=AiJobStatus.QUEUED) == 0
    assert AiImageJob.objects.get(id=job_id).lease_until == second_lease
    assert work.fenced(rows, lease_until=second_lease).update(status=AiJobStatus.COMPLETED) == 1
    assert AiImageJob.objects.get(id=job_id).status == AiJobStatus.COMPLETED


def test_sweep_takes_over_expired_leases_once(workspace: Any) -> None:
    expired, held = _jobs(workspace, 2)
    now = timezone.now()
    AiImageJob.objects.filter(id=expired).update(status=AiJobStatus.PROCESSING, lease_until=now - dt.timedelta(1))
    AiImageJob.objects.filter(id=held).update(status=AiJobStatus.PROCESSING, lease_until=now + dt.timedelta(1))
    processing = AiImageJob.objects.filter(status=AiJobStatus.PROCESSING)

    swept = work.sweep_expired(processing, now=now, limit=10, status=AiJobStatus.QUEUED, lease_until=None)
    again = work.sweep_expired(processing, now=now, limit=10, status=AiJobStatus.QUEUED, lease_until=None)

    assert (swept, again) == ([expired], [])
    assert AiImageJob.objects.get(id=expired).status == AiJobStatus.QUEUED
    assert AiImageJob.objects.get(id=held).status == AiJobStatus.PROCESSING


@pytest.mark.parametrize("attempt", [0, 1, 2, 3, 9])
def test_backoff_stays_within_its_jitter(attempt: int) -> None:
    schedule = (10.0, 30.0, 90.0)
    base = schedule[min(max(attempt, 1), len(schedule)) - 1]
    waits = [work.backoff_seconds(attempt, schedule) for _ in range(200)]
    assert all(base * 0.8 <= wait <= base * 1.2 for wait in waits)
    assert len(set(waits)) > 1  # jittered: work that failed together does not come back together
    assert work.backoff_seconds(attempt, schedule, jitter=0.0) == base


def _gathered(width: int, items: list[int], fail: int | None = None) -> tuple[list[Any], set[int]]:
    written: list[Any] = []
    threads: set[int] = set()

    def call(item: int) -> int:
        threads.add(threading.get_ident())
        if item == fail:
            raise RuntimeError(f"call {item} failed")
        return item * 10

    work.gather(items, call, lambda arrived: written.extend(arrived), width=width)
    return written, threads


def test_gather_writes_every_answer_once_and_a_failing_call_as_its_error() -> None:
    written, threads = _gathered(4, list(range(10)), fail=3)
    assert sorted(a.item for a in written) == list(range(10))
    failed = [a for a in written if a.error is not None]
    assert [(a.item, str(a.error), a.value) for a in failed] == [(3, "call 3 failed", None)]
    assert {a.item: a.value for a in written if a.error is None} == {i: i * 10 for i in range(10) if i != 3}
    assert threading.get_ident() not in threads  # the calls ran on threads, the writes here


def test_gather_runs_calls_here_inside_a_transaction() -> None:
    with transaction.atomic():
        written, threads = _gathered(4, [1, 2, 3])
    assert threads == {threading.get_ident()}
    assert [a.value for a in written] == [10, 20, 30]


def test_gather_writes_the_rest_when_a_write_raises_then_raises() -> None:
    batches: list[list[int]] = []

    def write(arrived: list[Any]) -> None:
        batches.append([a.item for a in arrived])
        if 1 in batches[-1]:
            raise ValueError("write failed")

    with pytest.raises(ValueError, match="write failed"):
        work.gather([1, 2, 3], lambda item: item, write, width=1)
    assert batches == [[1], [2], [3]]


@pytest.fixture
def worker_process(settings: Any) -> Iterator[None]:
    settings.WORK_THREADS = 3
    worker_process_init.send(sender=None)
    try:
        yield
    finally:
        worker_process_shutdown.send(sender=None, pid=0, exitcode=0)


def test_the_worker_process_owns_its_threads_from_init_to_shutdown(worker_process: None) -> None:
    pool = work.worker_pool()
    assert pool is not None
    seen: list[set[int]] = []
    for _ in range(2):
        written, threads = _gathered(3, list(range(6)))
        assert len(written) == 6
        seen.append(threads)
    assert work.worker_pool() is pool
    kept = {t.ident for t in threading.enumerate() if t.name.startswith("work_")}
    assert seen[0] | seen[1] <= kept  # both batches ran on the worker's threads
    assert len(kept) <= 3

    worker_process_shutdown.send(sender=None, pid=0, exitcode=0)
    assert work.worker_pool() is None
    assert not any(t.name.startswith("work_") for t in threading.enumerate())


def test_without_a_worker_process_gather_uses_threads_of_the_call_only() -> None:
    assert work.worker_pool() is None
    _gathered(3, list(range(6)))
    assert not any(t.name.startswith("work-call") for t in threading.enumerate())


def test_a_call_hands_its_database_write_to_the_gathering_thread_and_waits_for_it() -> None:
    caller = threading.get_ident()
    ran_on: list[int] = []

    def errand(n: int) -> int:
        ran_on.append(threading.get_ident())
        if n == 3:
            raise ValueError("refused")
        return n * 10

    def call(n: int) -> int:
        assert threading.get_ident() != caller
        return work.on_caller_thread(lambda: errand(n)) + 1

    arrived: dict[int, Any] = {}
    work.gather(range(5), call, lambda answers: arrived.update({a.item: a.value or a.error for a in answers}), width=3)

    assert ran_on == [caller] * 5
    assert {n: v for n, v in arrived.items() if n != 3} == {0: 1, 1: 11, 2: 21, 4: 41}
    assert isinstance(arrived[3], ValueError)


def test_outside_gather_an_errand_runs_at_once() -> None:
    assert work.on_caller_thread(lambda: threading.get_ident()) == threading.get_ident()


def test_errands_of_one_together_waiting_at_once_run_in_one_go_each_getting_its_value() -> None:
    batches: list[list[int]] = []

    def record(items: list[int]) -> list[int]:
        batches.append(list(items))
        return [item * 10 for item in items]

    errands = work._Errands()
    plain = errands.submit(lambda: "plain")
    futures = [errands.submit(work.Together(record, n)) for n in (1, 2, 3)]
    other = errands.submit(work.Together(lambda items: [f"other {i}" for i in items], 9))

    errands.run_waiting()

    assert batches == [[1, 2, 3]]  # one statement's worth for the three, in the order they came
    assert [future.result() for future in futures] == [10, 20, 30]
    assert plain.result() == "plain" and other.result() == "other 9"


def test_a_together_run_that_raises_or_miscounts_reaches_each_of_its_errands() -> None:
    def broken(items: list[int]) -> list[int]:
        raise ValueError("write failed")

    def one_value(items: list[int]) -> list[int]:
        return [1]

    errands = work._Errands()
    failing = [errands.submit(work.Together(broken, n)) for n in (1, 2)]
    short = [errands.submit(work.Together(one_value, n)) for n in (1, 2)]
    errands.run_waiting()

    for future in failing:
        assert isinstance(future.exception(), ValueError)
    for future in short:
        assert isinstance(future.exception(), RuntimeError)


def test_together_errands_from_calls_side_by_side_each_get_their_own_value() -> None:
    caller = threading.get_ident()
    batches: list[list[int]] = []

    def record(items: list[int]) -> list[int]:
        assert threading.get_ident() == caller
        batches.append(list(items))
        return [-item for item in items]

    arrived: dict[int, Any] = {}
    work.gather(
        range(8),
        lambda n: work.on_caller_thread(work.Together(record, n)),
        lambda answers: arrived.update({a.item: a.value for a in answers}),
        width=4,
    )

    assert arrived == {n: -n for n in range(8)}
    assert sorted(item for batch in batches for item in batch) == list(range(8))  # each once


def test_outside_gather_a_together_errand_runs_alone() -> None:
    assert work.on_caller_thread(work.Together(lambda items: [len(items)], "x")) == 1
