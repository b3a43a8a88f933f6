"""The work engine: rows claimed with a lease, written fenced by that lease, released for a retry
with backoff and jitter, swept when their worker died; and remote calls run side by side with
what comes back written together.

A work row has a status, a lease (``lease_until``), an attempt count and a due time
(``next_attempt_at``). The domain modules (publishing, webhook delivery, AI image jobs) say with a
queryset which of their rows are due and free; this module does the claiming, fencing, releasing
and sweeping the same way for all of them. ``core`` imports no domain app.

The lease value a claim sets is its fencing token: every later write of that attempt is
conditioned on it, so once the sweeper (or another worker, after expiry) has taken the row over,
the first holder's writes change nothing.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q, QuerySet

logger = logging.getLogger(__name__)

Item = TypeVar("Item")
Value = TypeVar("Value")

LEASE = "lease_until"
# How long the first answer of a batch waits for the others before they are written together: the
# answers of calls sent together come back within milliseconds of each other, and a moment's wait
# writes them in one transaction instead of one per straggler.
GATHER_SECONDS = 0.025


# --- claims, fencing, release, sweep --------------------------------------------------------------


def lease_free(now: Any) -> Q:
    """Rows nobody holds: never leased, or their lease has run out."""
    return Q(lease_until__isnull=True) | Q(lease_until__lt=now)


def lease_expired(now: Any) -> Q:
    """Rows whose holder stopped renewing (its worker died mid-attempt)."""
    return Q(lease_until__lt=now)


def claim(
    queryset: QuerySet[Any],
    *,
    lease_until: Any,
    limit: int | None = None,
    order_by: Sequence[str] = ("pk",),
    **changes: Any,
) -> list[Any]:
    """Claim the rows of ``queryset`` (the caller's "due and free") that no other transaction
    holds right now: locked with ``FOR UPDATE SKIP LOCKED`` in ``order_by`` order (up to
    ``limit``), given the lease ``lease_until`` and ``changes`` in the same transaction. Two
    callers never get the same row, and a row taken by one is skipped, not waited for, by the
    other. Returns the primary keys claimed; empty when another worker has them."""
    return _lock_and_update(queryset, limit=limit, order_by=order_by, changes={LEASE: lease_until, **changes})


def fenced(queryset: QuerySet[Any], *, lease_until: Any) -> QuerySet[Any]:
    """The rows of ``queryset`` still held by the claim whose lease is ``lease_until``: a write
    through this queryset after the row was taken over matches nothing."""
    return queryset.filter(lease_until=lease_until)


def release(queryset: QuerySet[Any], *, lease_until: Any, **changes: Any) -> int:
    """Give back the rows held by the claim ``lease_until`` with ``changes`` (a retry: the status
    it waits in and its ``next_attempt_at``), fenced: a row taken over is left alone. Returns how
    many were released."""
    return fenced(queryset, lease_until=lease_until).update(lease_until=None, **changes)


def sweep_expired(
    queryset: QuerySet[Any],
    *,
    now: Any,
    limit: int,
    order_by: Sequence[str] = ("pk",),
    **changes: Any,
) -> list[Any]:
    """Take over the rows of ``queryset`` whose lease expired before ``now`` (or that were never
    leased and that the caller's queryset calls overdue: their task was lost), locked with SKIP
    LOCKED so concurrent sweepers split the work, and apply ``changes`` to them (usually a marker
    the next sweep excludes, or a new status). Returns the primary keys swept."""
    return _lock_and_update(queryset.filter(lease_free(now)), limit=limit, order_by=order_by, changes=changes)


def _lock_and_update(
    queryset: QuerySet[Any], *, limit: int | None, order_by: Sequence[str], changes: dict[str, Any]
) -> list[Any]:
    with transaction.atomic():
        locked = queryset.order_by(*order_by).select_for_update(skip_locked=True, of=("self",))
        ids = list((locked[:limit] if limit else locked).values_list("pk", flat=True))
        if ids:
            queryset.model._default_manager.filter(pk__in=ids).update(**changes)
    return ids


# --- retries ------------------------------------------------------------------------------------


def backoff_seconds(attempt: int, schedule: Sequence[float], *, jitter: float = 0.2) -> float:
    """The wait before retry number ``attempt`` (1 is the first retry): ``schedule``'s entry for
    it (its last entry once past the end), spread by ± ``jitter`` so that work that failed
    together does not come back together."""
    base = schedule[min(max(attempt, 1), len(schedule)) - 1]
    return base * random.uniform(1.0 - jitter, 1.0 + jitter)


# --- remote calls side by side ------------------------------------------------------------------


@dataclass(frozen=True)
class Arrived(Generic[Item, Value]):
    """What one call of :func:`gather` ended with: its value, or the exception it raised."""

    item: Item
    value: Value | None = None
    error: BaseException | None = None


class _Errands:
    """Database work a call on a pool thread hands to the thread running :func:`gather` (which owns
    the database connection), waiting until it is done: a pool thread opens no connection of its
    own. The caller's loop wakes up on the bell and runs what is waiting."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: list[tuple[Callable[[], Any] | Together[Any], Future[Any]]] = []
        self._bell: Future[None] = Future()

    def bell(self) -> Future[None]:
        with self._lock:
            return self._bell

    def post(self, errand: Callable[[], Value] | Together[Value]) -> Value:
        return self.submit(errand).result()

    def submit(self, errand: Callable[[], Value] | Together[Value]) -> Future[Value]:
        """Leave ``errand`` for the caller's thread and ring; its future holds what it returned."""
        done: Future[Value] = Future()
        with self._lock:
            self._waiting.append((errand, done))
            if not self._bell.done():
                self._bell.set_result(None)
        return done

    def run_waiting(self) -> None:
        with self._lock:
            waiting, self._waiting = self._waiting, []
            if self._bell.done():
                self._bell = Future()
        # Errands of one ``Together.run`` waiting at this moment run in one go, where the first of
        # them stood; the others one by one, in the order they came.
        together: dict[Callable[[list[Any]], list[Any]], list[tuple[Any, Future[Any]]]] = {}
        order: list[tuple[Callable[[], Any], Future[Any]] | Callable[[list[Any]], list[Any]]] = []
        for errand, done in waiting:
            if isinstance(errand, Together):
                if errand.run not in together:
                    order.append(errand.run)
                together.setdefault(errand.run, []).append((errand.item, done))
            else:
                order.append((errand, done))
        for entry in order:
            if isinstance(entry, tuple):
                single, done = entry
                try:
                    done.set_result(single())
                except BaseException as exc:
                    done.set_exception(exc)
                continue
            members = together[entry]
            try:
                values = entry([item for item, _ in members])
                if len(values) != len(members):
                    raise RuntimeError(f"{entry!r} answered {len(values)} values for {len(members)} items")
            except BaseException as exc:
                for _, done in members:
                    done.set_exception(exc)
                continue
            for (_, done), value in zip(members, values, strict=True):
                done.set_result(value)


_errands: ContextVar[_Errands | None] = ContextVar("work_errands", default=None)


@dataclass(frozen=True)
class Together(Generic[Value]):
    """An errand the gathering thread may run in one go with the others of the same ``run`` that
    wait at that moment (calls about to leave side by side, each recording its start): ``run``
    takes their ``item``s and returns one value per item, in their order. Each call still waits
    until its own item was run, and gets its value (or what ``run`` raised)."""

    run: Callable[[list[Any]], list[Value]]
    item: Any


def on_caller_thread(errand: Callable[[], Value] | Together[Value]) -> Value:
    """Run ``errand`` (a short database write) on the thread that runs :func:`gather` and return
    what it returns (or raise what it raised), the calling thread waiting meanwhile: for a
    ``call`` that must write something at a precise moment of its run (a remote call about to
    leave). Anywhere else (outside a ``call``, or a ``call`` run on the caller's thread itself)
    ``errand`` simply runs here. A :class:`Together` errand is run with the others of its kind
    waiting at the same moment."""
    errands = _errands.get()
    if errands is not None:
        return errands.post(errand)
    if isinstance(errand, Together):
        return errand.run([errand.item])[0]
    return errand()


def gather(
    items: Iterable[Item],
    call: Callable[[Item], Value],
    write: Callable[[list[Arrived[Item, Value]]], None],
    *,
    width: int,
) -> None:
    """Run ``call(item)`` for every item, up to ``width`` at once on the worker process's threads,
    and hand what came back to ``write`` (on this thread) as it arrives, the answers that arrived
    together in one list. A call that raises arrives with its ``error``; every item arrives exactly
    once. ``call`` must not touch the database itself (its thread's connection is closed after it):
    every write stays on the caller's thread and connection, a write the call needs before it
    goes on through :func:`on_caller_thread`. Inside a transaction (the threads
    could not see its rows) or with a width of 1 the calls run one after the other here. If
    ``write`` raises, the remaining answers are still written and the first error is re-raised at
    the end."""
    errors: list[BaseException] = []
    pending_items = list(items)
    if not pending_items:
        return
    width = min(width, len(pending_items))
    if width <= 1 or connection.in_atomic_block:
        for item in pending_items:
            _write(write, [_run(call, item)], None, errors)
    else:
        with _pool_for(width) as pool:
            _gather_on(pool, pending_items, call, write, width, errors)
    if errors:
        raise errors[0]


def _gather_on(
    pool: Executor,
    items: list[Item],
    call: Callable[[Item], Value],
    write: Callable[[list[Arrived[Item, Value]]], None],
    width: int,
    errors: list[BaseException],
) -> None:
    waiting = iter(items)
    errands = _Errands()
    in_flight: dict[Future[Arrived[Item, Value]], Item] = {}
    for item in waiting:
        in_flight[pool.submit(_run_in_thread, call, item, errands)] = item
        if len(in_flight) >= width:
            break
    while in_flight:
        done = _wait_running_errands(in_flight, errands)
        if len(done) < len(in_flight):
            done, _ = wait(in_flight, timeout=GATHER_SECONDS)
        arrived: list[Arrived[Item, Value]] = []
        for future in done:
            item = in_flight.pop(future)
            try:
                arrived.append(future.result())
            except BaseException as exc:  # the thread machinery itself failed; the call had no answer
                arrived.append(Arrived(item=item, error=exc))
            following = next(waiting, None)
            if following is not None:
                in_flight[pool.submit(_run_in_thread, call, following, errands)] = following
        _write(write, arrived, errands, errors)


def _wait_running_errands(in_flight: dict[Future[Any], Any], errands: _Errands) -> set[Future[Any]]:
    """Wait for the first call to end, running the errands the calls hand over meanwhile."""
    while True:
        bell = errands.bell()
        done, _ = wait([*in_flight, bell], return_when=FIRST_COMPLETED)
        errands.run_waiting()
        finished = {future for future in done if future is not bell}
        if finished:
            return finished


def _run(call: Callable[[Item], Value], item: Item) -> Arrived[Item, Value]:
    try:
        return Arrived(item=item, value=call(item))
    except Exception as exc:
        return Arrived(item=item, error=exc)


def _run_in_thread(call: Callable[[Item], Value], item: Item, errands: _Errands) -> Arrived[Item, Value]:
    token = _errands.set(errands)
    try:
        return _run(call, item)
    finally:
        _errands.reset(token)
        connection.close()  # a call that touched the database opened this thread's own connection


def _write(
    write: Callable[[list[Arrived[Item, Value]]], None],
    arrived: list[Arrived[Item, Value]],
    errands: _Errands | None,
    errors: list[BaseException],
) -> None:
    if not arrived:
        return
    try:
        write(arrived)
    except Exception as exc:
        logger.exception("writing %d answers raised", len(arrived))
        errors.append(exc)
    finally:
        if errands is not None:
            errands.run_waiting()  # what the calls still running asked for while this wrote


# --- the worker process's threads ---------------------------------------------------------------

_pool_lock = threading.Lock()
_worker_pool: ThreadPoolExecutor | None = None


def start_worker_pool(**_: Any) -> None:
    """Celery's ``worker_process_init``: the threads this worker process runs remote calls on,
    kept from one task to the next (each keeps its HTTP sessions, so keep-alive connections are
    reused). ``WORK_THREADS`` bounds the calls in flight in one process."""
    global _worker_pool
    with _pool_lock:
        if _worker_pool is None:
            _worker_pool = ThreadPoolExecutor(max_workers=settings.WORK_THREADS, thread_name_prefix="work")


def stop_worker_pool(**_: Any) -> None:
    """Celery's ``worker_process_shutdown``: let the calls in flight finish, end the threads."""
    global _worker_pool
    with _pool_lock:
        pool, _worker_pool = _worker_pool, None
    if pool is not None:
        pool.shutdown(wait=True)


def worker_pool() -> ThreadPoolExecutor | None:
    """The worker process's threads, or None outside a worker process (tests, eager calls)."""
    return _worker_pool


def _pool_for(width: int) -> AbstractContextManager[Executor]:
    """The worker process's threads when it has them; otherwise threads of this call only, ended
    when it returns."""
    pool = _worker_pool
    if pool is not None:
        return nullcontext(pool)
    return ThreadPoolExecutor(max_workers=width, thread_name_prefix="work-call")
