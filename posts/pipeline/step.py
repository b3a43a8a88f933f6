"""The platform step: the one shape of every call that changes something on a platform (publish,
first comment, edit, delete; replies next), on the work engine (``core.work``).

1. **Claim**: a conditional UPDATE moves the step's due PENDING rows to its sending status with
   attempts + 1 and a lease (``lease_until``); the lease value is the fencing token of every later
   write of that attempt. Rows another worker holds, or not due yet, are left alone.
2. **Call** the platform outside any transaction (``core.work.gather``: side by side on the worker's
   threads, answers written on the caller's thread). Right before the first request that may
   change something leaves, the attempt records, fenced, that it *started sending*
   (:func:`send`): a worker lost before that sent nothing; one lost after it may have. A call that
   would start after the first tenth of its lease is not sent at all (:class:`LeaseRunningOut`).
3. **Write** what came back, fenced by the lease, together with its event through the outbox, in
   one transaction; a write whose lease was taken over changes nothing and emits nothing.
4. **Classify** failures once (:func:`decide`): token rejected, permanent, transient (retry with
   backoff and jitter, never before the platform's ``retry_at``, at most ``PUBLISH_MAX_ATTEMPTS``),
   or an unknown outcome, which is never re-sent blindly: only where re-sending cannot do it twice
   (a key the platform deduplicates on, or a call that is idempotent by nature, as a delete), else
   looked up where the platform offers a lookup, else FAILED ``unknown_outcome``.
5. **Recover** (the sweeper, :func:`recovery`, carried out for a kind's rows by
   :func:`recover_expired`): an expired lease whose attempt had not started sending is sent again
   on every platform; one that had is re-sent only where that is safe, looked up where it can be,
   else FAILED ``unknown_outcome``. A due row whose task was lost is queued again
   (:func:`requeue_lost`).

A kind of step brings its rows (:class:`StepColumns` or, for the publish hot path, its own
one-statement claim) and its calls; :func:`run` drives every kind the same way.
"""

from __future__ import annotations

import datetime as dt
import enum
import logging
import random
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol, TypeVar

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from core import work
from platforms.base import AuthError, ErrorCode, Permanent, PlatformError, UnknownOutcome
from platforms.http import before_creates

logger = logging.getLogger(__name__)

# Waits before each retry (± 20 % jitter): the first retry comes within 30 s (10 s ± 2 s).
BACKOFF_SECONDS = (10.0, 30.0, 90.0, 240.0, 600.0)

ClaimT = TypeVar("ClaimT")
CallT = TypeVar("CallT")
AnswerT = TypeVar("AnswerT")
ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")


class StepKind(Protocol[ClaimT, CallT, AnswerT]):
    """What a kind of step brings: how its rows are claimed, read and written, and its call."""

    name: str
    # Claim and run each row on its own, one after the other (a step whose calls must each have
    # their whole lease: a claim taken just before its call), instead of the batch side by side.
    one_by_one: bool

    def claim(self, ids: list[str], *, now: dt.datetime) -> list[ClaimT]: ...

    def requeue_early(self, ids: list[str], claims: list[ClaimT]) -> None: ...

    def prepare(self, claims: list[ClaimT], errors: list[BaseException]) -> list[CallT]: ...

    def call(self, call: CallT) -> AnswerT: ...

    def write(self, arrived: list[work.Arrived[CallT, AnswerT]], errors: list[BaseException]) -> None: ...


def run(kind: StepKind[ClaimT, CallT, AnswerT], ids: list[str], *, width: int) -> int:
    """Claim the due rows of ``ids`` for ``kind``, call the platform for each claimed one outside
    any transaction (up to ``width`` at once), write each answer fenced as it arrives. Safe to run
    any number of times: what is not claimed is left alone, and a row that arrived early is queued
    again for its time. Every attempt runs even if another raises; the first error is re-raised at
    the end. Returns how many rows this call attempted."""
    ids = list(dict.fromkeys(ids))
    errors: list[BaseException] = []
    batches = [[one] for one in ids] if kind.one_by_one else [ids]
    attempted = 0
    for batch in batches:
        claims = kind.claim(batch, now=timezone.now())
        if len(claims) < len(batch):
            kind.requeue_early(batch, claims)
        attempted += len(claims)
        attempt(kind, claims, width=width, errors=errors)
    if errors:
        raise errors[0]
    return attempted


def attempt(
    kind: StepKind[ClaimT, CallT, AnswerT], claims: list[ClaimT], *, width: int, errors: list[BaseException]
) -> None:
    """The attempts of ``claims`` already taken: read, call side by side, write as they arrive."""
    if not claims:
        return
    calls = kind.prepare(claims, errors)
    work.gather(calls, kind.call, partial(kind.write, errors=errors), width=width)


def each(
    items: Iterable[ItemT],
    handle: Callable[[ItemT], ResultT | None],
    *,
    errors: list[BaseException],
    name: Callable[[ItemT], str],
) -> list[ResultT]:
    """``handle`` each item of a kind's ``prepare`` or ``write`` in turn, so that one that raises
    stops none of the others: its exception is logged under ``name(item)`` and kept in ``errors``
    (``run`` raises the first at the end). Returns what ``handle`` gave that is not None."""
    results: list[ResultT] = []
    for item in items:
        try:
            result = handle(item)
        except Exception as exc:
            logger.exception("%s raised", name(item))
            errors.append(exc)
            continue
        if result is not None:
            results.append(result)
    return results


# --- sending: the line between "nothing left" and "may have reached the platform" -----------------


class LeaseRunningOut(Exception):
    """The call was about to start after the first tenth of its lease (it waited for a free slot
    behind the rest of its batch): it is not sent, so no call can outlive its lease."""


class NotStarted(Exception):
    """The attempt could not record that it starts sending (its claim was taken over, or the write
    failed): its call did not leave."""

    def __init__(self, *, taken_over: bool) -> None:
        super().__init__("taken over" if taken_over else "could not record the start")
        self.taken_over = taken_over


@dataclass
class Sending:
    """One attempt's guard of its first request that may change something on the platform."""

    lease_until: dt.datetime
    # The fenced write "this attempt starts sending" (False: taken over); a ``work.Together`` is
    # written with the other attempts' that wait at the same moment, in one statement.
    record_start: Callable[[], bool] | work.Together[bool]
    label: str = ""
    started: bool = False

    def start(self) -> None:
        """Right before such a request leaves (``platforms.http.before_creates``): record, fenced,
        on the caller's thread, that this attempt starts sending. Raises :class:`NotStarted` (the
        request does not leave) when that could not be written."""
        if self.started:
            return
        try:
            recorded = work.on_caller_thread(self.record_start)
        except Exception as exc:
            logger.warning("could not record that %s starts sending: %s", self.label, exc)
            raise NotStarted(taken_over=False) from exc
        if not recorded:
            raise NotStarted(taken_over=True)
        self.started = True


@contextmanager
def send(sending: Sending) -> Iterator[None]:
    """The platform call of one attempt runs inside: refused (:class:`LeaseRunningOut`) when it
    would start after the first tenth of its lease (the lease is sized for one call from its claim,
    ``PUBLISH_LEASE_SECONDS``), and its first request that may change something is preceded by the
    fenced record that it starts sending."""
    if sending.lease_until - timezone.now() < dt.timedelta(seconds=settings.PUBLISH_LEASE_SECONDS * 0.9):
        raise LeaseRunningOut
    with before_creates(sending.start):
        yield


def started_sending(marker: object, lease_until: dt.datetime) -> bool:
    """Whether ``marker`` (a recorded start) says that the attempt holding ``lease_until`` started
    sending; a marker of an earlier attempt says nothing about this one."""
    if not isinstance(marker, str):
        return False
    try:
        return dt.datetime.fromisoformat(marker) == lease_until
    except ValueError:
        return False


# --- what a failure means -------------------------------------------------------------------------


class Verdict(enum.Enum):
    AUTH = "auth"  # the token was rejected: FAILED, and the account marked unauthorized
    FAIL = "fail"  # FAILED with the platform's words
    RETRY = "retry"  # back to PENDING after ``delay``
    UNKNOWN = "unknown"  # the platform may have acted: re-send only if safe, else look up or FAILED


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    error_code: str
    message: str
    delay: float = 0.0


def retry_or_fail(exc: PlatformError, *, attempts: int, unknown_message: str = "{detail}") -> Decision:
    """Back to PENDING with backoff and jitter (never before the platform's ``retry_at``), or
    FAILED with the platform's words once ``attempts`` reached ``PUBLISH_MAX_ATTEMPTS``."""
    if attempts >= settings.PUBLISH_MAX_ATTEMPTS:
        message = unknown_message.format(detail=exc.message) if isinstance(exc, UnknownOutcome) else exc.message
        return Decision(Verdict.FAIL, str(exc.error_code), message)
    delay = work.backoff_seconds(attempts, BACKOFF_SECONDS)
    if exc.retry_at is not None:
        delay = max(delay, (exc.retry_at - timezone.now()).total_seconds() + random.uniform(0.0, 1.0))
    return Decision(Verdict.RETRY, str(exc.error_code), exc.message, delay)


def decide(exc: PlatformError, *, attempts: int, unknown_message: str = "{detail}") -> Decision:
    """The one classification of a platform failure for every step."""
    if isinstance(exc, AuthError):
        return Decision(Verdict.AUTH, str(exc.error_code), exc.message)
    if isinstance(exc, UnknownOutcome):
        return Decision(Verdict.UNKNOWN, str(exc.error_code), unknown_message.format(detail=exc.message))
    if isinstance(exc, Permanent) or type(exc) is PlatformError:
        return Decision(Verdict.FAIL, str(exc.error_code), exc.message)
    return retry_or_fail(exc, attempts=attempts, unknown_message=unknown_message)  # rate limits, quota, transient


class Recovery(enum.Enum):
    RESEND = "resend"  # back to PENDING, sent again
    LOOKUP = "lookup"  # back to PENDING, looked up on the platform before anything is sent
    NOT_SENT = "not_sent"  # FAILED: interrupted before sending on every attempt (platform_unavailable)
    UNKNOWN = "unknown"  # FAILED unknown_outcome: check the platform


def recovery(*, sent: bool, resend_safe: bool, can_lookup: bool, attempts: int) -> Recovery:
    """What the sweeper does with a row whose lease expired (its worker was lost)."""
    spent = attempts >= settings.PUBLISH_MAX_ATTEMPTS
    if not sent:
        return Recovery.NOT_SENT if spent else Recovery.RESEND
    if spent:
        return Recovery.UNKNOWN
    if resend_safe:
        return Recovery.RESEND
    return Recovery.LOOKUP if can_lookup else Recovery.UNKNOWN


# --- rows of a step on columns of their own ------------------------------------------------------


@dataclass(frozen=True)
class StepColumns:
    """Where a step keeps its work on a table: the status, due time, lease and attempt columns,
    the values of its waiting and sending statuses, and the SQL expression that records the start
    of sending (``%(marker)s`` is the lease as text). Constant identifiers, never from input."""

    table: str
    status: str
    due: str
    lease: str
    attempts: str
    pending: str
    sending: str
    start_expression: str
    # More conditions a row must meet to be claimed (constant SQL over the table as ``r``).
    claimable: str = "TRUE"


@dataclass(frozen=True)
class RowClaim:
    """A row of a step this worker owns until ``lease_until`` (the fencing token of its writes)."""

    target_id: str  # the row's id (named as the entry's for the first comment, whose row is the entry)
    lease_until: dt.datetime
    attempts: int


def claim_rows(columns: StepColumns, ids: list[str], *, now: dt.datetime) -> list[RowClaim]:
    """PENDING and due → sending, attempts + 1, lease set, for the rows of ``ids``; one statement."""
    if not ids:
        return []
    lease_until = now + dt.timedelta(seconds=settings.PUBLISH_LEASE_SECONDS)
    c = columns
    sql = (
        f"UPDATE {c.table} r SET {c.status} = %(sending)s, {c.lease} = %(lease)s, "  # noqa: S608 (constant identifiers)
        f"{c.attempts} = r.{c.attempts} + 1 "
        f"WHERE r.id = ANY(%(ids)s) AND r.{c.status} = %(pending)s AND r.{c.due} <= %(now)s AND ({c.claimable}) "
        f"RETURNING r.id, r.{c.attempts}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, {"ids": ids, "now": now, "lease": lease_until, "sending": c.sending, "pending": c.pending})
        rows = cursor.fetchall()
    return [RowClaim(target_id=row[0], lease_until=lease_until, attempts=row[1]) for row in rows]


def early(columns: StepColumns, ids: list[str], claims: list[RowClaim]) -> list[tuple[str, float]]:
    """The rows of ``ids`` left unclaimed because their time has not come (a task that arrived
    early: clock skew, a countdown rounded down), each with the countdown to just after it, so the
    kind queues them again instead of leaving them to the sweeper; one further off than
    ``PUBLISH_MAX_COUNTDOWN_SECONDS`` is the sweeper's. A row held back by ``claimable`` (waiting
    behind an earlier one) is not here: the one before it queues it when it ends."""
    owned = {claim.target_id for claim in claims}
    rest = [i for i in ids if i not in owned]
    if not rest:
        return []
    now = timezone.now()
    c = columns
    sql = (
        f"SELECT id, {c.due} FROM {c.table} "  # noqa: S608 (constant identifiers)
        f"WHERE id = ANY(%(ids)s) AND {c.status} = %(pending)s AND {c.due} > %(now)s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, {"ids": rest, "pending": c.pending, "now": now})
        rows = cursor.fetchall()
    waits = ((row_id, (due_at - now).total_seconds() + 0.05) for row_id, due_at in rows)
    return [(row_id, delay) for row_id, delay in waits if delay <= settings.PUBLISH_MAX_COUNTDOWN_SECONDS]


def record_start(columns: StepColumns, claim: RowClaim) -> bool:
    """Record, fenced by ``claim``, that its attempt starts sending. False when taken over."""
    c = columns
    sql = (
        f"UPDATE {c.table} SET {c.start_expression} "  # noqa: S608 (constant identifiers)
        f"WHERE id = %(id)s AND {c.status} = %(sending)s AND {c.lease} = %(lease)s"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            {
                "marker": claim.lease_until.isoformat(),
                "id": claim.target_id,
                "sending": c.sending,
                "lease": claim.lease_until,
            },
        )
        return cursor.rowcount == 1


def fenced_filter(columns: StepColumns, claim: RowClaim) -> dict[str, Any]:
    """The ORM filter of the row still held by ``claim``."""
    return {"id": claim.target_id, columns.status: columns.sending, columns.lease: claim.lease_until}


# --- the sweeper's part, the same for every kind of step ------------------------------------------


@dataclass(frozen=True)
class Expired:
    """A row whose lease expired (its worker was lost), as its kind reads it: the claim the sweeper
    takes over, whether that attempt had started sending, and what the kind allows after that."""

    claim: RowClaim
    sent: bool
    resend_safe: bool
    can_lookup: bool


@dataclass
class Recovered:
    requeued: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def recover_expired(
    expired: Iterable[Expired],
    *,
    release: Callable[[RowClaim], bool],
    fail: Callable[[RowClaim, str, str], bool],
    interrupted_message: str,
    not_sent_message: str,
) -> Recovered:
    """The sweeper's verdict on each expired row (:func:`recovery`), carried out by the kind's own
    fenced writes: ``release`` (back to PENDING, due now; a kind that looks up first keeps its
    "started sending" marker for the next attempt to see) for a re-send or a lookup, ``fail`` with
    ``platform_unavailable`` (``not_sent_message``) when nothing had left on the last attempt, or
    with ``unknown_outcome`` (``interrupted_message``). A row another holder took over meanwhile is
    left alone (its write matches nothing). Returns the ids re-queued and failed."""
    done = Recovered()
    for item in expired:
        what = recovery(
            sent=item.sent, resend_safe=item.resend_safe, can_lookup=item.can_lookup, attempts=item.claim.attempts
        )
        if what in (Recovery.RESEND, Recovery.LOOKUP):
            if release(item.claim):
                done.requeued.append(item.claim.target_id)
        elif what is Recovery.NOT_SENT:
            if fail(item.claim, ErrorCode.PLATFORM_UNAVAILABLE, not_sent_message):
                done.failed.append(item.claim.target_id)
        elif fail(item.claim, ErrorCode.UNKNOWN_OUTCOME, interrupted_message):
            done.failed.append(item.claim.target_id)
    return done


def requeue_lost(
    columns: StepColumns,
    *,
    now: dt.datetime,
    limit: int,
    touched: str,
    enqueue: Callable[[list[str]], None],
) -> list[str]:
    """PENDING rows due for longer than ``PUBLISH_LOST_TASK_SECONDS`` and not queued again for as
    long (``touched``: the column a re-queue stamps, the due time itself or an update time) lost
    their task: stamped now and ``enqueue``d after commit, under SKIP LOCKED so that sweepers side
    by side split them. The claim makes a duplicate task harmless. Returns their ids."""
    cutoff = now - dt.timedelta(seconds=settings.PUBLISH_LOST_TASK_SECONDS)
    c = columns
    sql = (
        f"UPDATE {c.table} r SET {touched} = %(now)s WHERE r.id IN ("  # noqa: S608 (constant identifiers)
        f"SELECT id FROM {c.table} WHERE {c.status} = %(pending)s AND {c.due} < %(cutoff)s "
        f"AND {touched} < %(cutoff)s LIMIT %(limit)s FOR UPDATE SKIP LOCKED) RETURNING r.id"
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, {"now": now, "cutoff": cutoff, "pending": c.pending, "limit": limit})
        ids = [row[0] for row in cursor.fetchall()]
        if ids:
            transaction.on_commit(partial(enqueue, ids), robust=True)
    return ids


__all__ = [
    "BACKOFF_SECONDS",
    "Decision",
    "Expired",
    "LeaseRunningOut",
    "NotStarted",
    "Recovered",
    "Recovery",
    "RowClaim",
    "Sending",
    "StepColumns",
    "StepKind",
    "Verdict",
    "attempt",
    "claim_rows",
    "decide",
    "fenced_filter",
    "record_start",
    "recover_expired",
    "recovery",
    "requeue_lost",
    "retry_or_fail",
    "run",
    "send",
    "started_sending",
]
