"""Working through deliveries on the work engine (``core.work``): claim, send, record, retry,
auto-disable, and the sweeper.

Deliveries are claimed with a lease (``lease_until``, SKIP LOCKED); only the holder sends, so
running the task twice sends once, and every write of the attempt is fenced by that lease. The
consecutive-failure counter moves with F() expressions, so concurrent attempts never lose a count.
"""

from __future__ import annotations

import datetime as dt
import logging
from functools import partial

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from core import metrics, work
from core.fields import format_instant
from webhooks.delivery.signing import signed_headers
from webhooks.delivery.transport import SendResult, post
from webhooks.enqueue import enqueue_deliveries
from webhooks.events import emit_webhook_notice
from webhooks.models import Attempt, Delivery, DeliveryStatus, Webhook

logger = logging.getLogger(__name__)
# One line per delivery attempt's outcome (``_log_delivery``): succeeded, retrying in N s, failed.
delivery_logger = logging.getLogger("webhooks.deliveries")

# A retry task may fire a moment before ``next_attempt_at`` (clock skew between processes).
EARLY_TOLERANCE = dt.timedelta(seconds=2)
LEASE_MARGIN_SECONDS = 5.0
SWEEP_OVERDUE_SECONDS = 60.0
SWEEP_BATCH = 1000
DISABLED_REASON = "webhook disabled; pending retries dropped"
# One POST to make: the delivery, its body and its signed headers.
_Send = tuple[Delivery, bytes, dict[str, str]]

# The successes that arrived together are recorded in one transaction of two statements (four
# round trips instead of six), written out with parameters only (the tables of webhooks.models named
# literally, as the statements they replace were). The first takes every lock, in the order of the
# failure path (deliveries, then webhooks), each set in id order so that two batches never wait on
# each other in opposite orders: the deliveries still there, locked against deletion (a webhook
# deleted while its POST was on the wire takes its deliveries with it: an Attempt written for one
# would fail the foreign key), and their webhooks. The second writes, without waiting on anyone.
# (Locks and writes in one statement deadlocked under the benchmark: an UPDATE that meets a row
# changed since its snapshot re-checks its join, locking a locking subquery's rows again.)
_LOCK_SUCCEEDED_SQL = """
WITH present AS (
    SELECT id FROM webhooks_delivery WHERE id = ANY(%(ids)s) ORDER BY id FOR NO KEY UPDATE
),
hooks AS (
    SELECT id FROM webhooks_webhook WHERE id = ANY(%(webhook_ids)s) ORDER BY id FOR NO KEY UPDATE
)
SELECT ARRAY(SELECT id FROM present), (SELECT count(*) FROM hooks)
"""
# The fenced update (pending and still held by this claim's lease; a delivery taken over is left as
# its new holder has it), an Attempt for every POST made to a delivery still there (the attempt
# happened, fenced or not), and the webhooks' reset (a 2xx resets the consecutive-failure count).
_RECORD_SUCCEEDED_SQL = """
WITH v AS (
    SELECT * FROM unnest(%(ids)s::text[], %(status_codes)s::int[], %(durations)s::int[], %(bodies)s::text[])
        AS v(id, status_code, duration_ms, response_body)
),
recorded AS (
    UPDATE webhooks_delivery d
    SET status = %(succeeded)s, next_attempt_at = NULL, last_error = '', attempt_count = d.attempt_count + 1,
        last_attempt_at = %(now)s, lease_until = NULL
    WHERE d.id = ANY(%(present)s) AND d.status = %(pending)s AND d.lease_until = %(lease)s
    RETURNING d.id
),
attempts AS (
    INSERT INTO webhooks_attempt (delivery_id, status_code, duration_ms, error, response_body, created_at)
    SELECT v.id, v.status_code, v.duration_ms, '', v.response_body, %(now)s
    FROM v WHERE v.id = ANY(%(present)s) ORDER BY v.id
),
reset AS (
    UPDATE webhooks_webhook SET consecutive_failures = 0, failing_notified_at = NULL, last_success_at = %(now)s
    WHERE id = ANY(%(webhook_ids)s)
)
SELECT count(*) FROM recorded
"""


def max_attempts() -> int:
    """One attempt, then one per retry delay."""
    return 1 + len(settings.WEBHOOK_RETRY_DELAYS)


def lease_duration() -> dt.timedelta:
    """Long enough for one send (bounded by the deadline) plus recording it."""
    return dt.timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS * 3 + LEASE_MARGIN_SECONDS)


def deliveries_attempt(*, delivery_ids: list[str], any_due: bool = False) -> dict[str, SendResult]:
    """Make the next attempt of each due delivery among ``delivery_ids`` (one is a batch of one) and
    record it. With ``any_due`` (the task's way: its ids are a wake-up call) it takes the oldest due
    deliveries instead, up to ``WEBHOOK_DELIVERY_BATCH``: its own, and when the queue is behind older
    ones first, so one task sends several events' deliveries for the cost of one, and the tasks of
    deliveries already sent find nothing to claim. Claimed with one lease (pending, due, held by
    nobody: SKIP LOCKED, the others are left alone, having sent nothing), read in one query, and
    sent on the worker's threads (``core.work.gather``) one lane per webhook: a webhook's deliveries
    one after the other, oldest first, the lanes side by side. A lane stops at its first failure and
    gives the rest back unsent (queued again), so a failing receiver gets one POST at a time and its
    failure count, the ``webhook.failing`` notice and the auto-disable at 20 come exactly as one by
    one. What comes back is recorded as it arrives: the successes that arrived together in one
    transaction (their Attempts, the fenced update of the deliveries, the reset of their webhooks),
    each failure in its own (an Attempt, a jittered retry or the final failure, the webhook's counter
    and its auto-disable). A delivery of an inactive webhook is closed as failed without a send.
    Returns what each delivery sent got back, by id."""
    ids = list(dict.fromkeys(delivery_ids))
    if not ids:
        return {}
    now = timezone.now()
    lease_until = now + lease_duration()
    due = Delivery.objects.filter(
        work.lease_free(now), status=DeliveryStatus.PENDING, next_attempt_at__lte=now + EARLY_TOLERANCE
    )
    if any_due:
        # Oldest due first (the partial index of pending deliveries, in order): under a backlog no
        # delivery waits behind younger ones, whichever task comes for it.
        oldest = settings.WEBHOOK_DELIVERY_BATCH
        claimed = work.claim(due, lease_until=lease_until, limit=oldest, order_by=("next_attempt_at",))
    else:
        claimed = work.claim(due.filter(pk__in=ids), lease_until=lease_until)
    if not claimed:
        return {}
    deliveries = Delivery.objects.select_related("webhook", "event").filter(pk__in=claimed)
    # One lane per webhook: its deliveries sent one after the other, oldest first (a receiver gets a
    # batch's events in the order they were emitted, never two of them at once); the lanes side by side.
    lanes: dict[str, list[_Send]] = {}
    for delivery in deliveries.order_by("next_attempt_at", "id"):
        webhook = delivery.webhook
        if not webhook.active:
            if Delivery.objects.filter(pk=delivery.pk, status=DeliveryStatus.PENDING).update(
                status=DeliveryStatus.FAILED, next_attempt_at=None, lease_until=None, last_error=DISABLED_REASON
            ):
                _log_delivery(delivery, "failed", error=DISABLED_REASON, sent=False)
            continue
        body = delivery.event.payload.encode("utf-8")
        headers = signed_headers(
            secret=webhook.secret,
            webhook_id=webhook.id,
            event_name=delivery.event.name,
            body=body,
            previous_secret=webhook.previous_secret_at(timezone.now()),
        )
        lanes.setdefault(webhook.id, []).append((delivery, body, headers))
    results: dict[str, SendResult] = {}
    record = partial(_record_arrived, lease_until=lease_until, results=results)
    work.gather(list(lanes.values()), _send_lane, record, width=settings.WEBHOOK_DELIVERY_BATCH)
    return results


def _send_lane(lane: list[_Send]) -> list[SendResult]:
    """The POSTs of one webhook's deliveries, one after the other, up to the first failure: the
    results of those sent (the caller gives the rest back unsent)."""
    results: list[SendResult] = []
    for delivery, body, headers in lane:
        try:
            result = post(
                url=delivery.webhook.url, body=body, headers=headers, timeout=settings.WEBHOOK_TIMEOUT_SECONDS
            )
        except Exception as exc:
            result = _unexpected(exc)
        results.append(result)
        if not result.ok:
            break
    return results


def _unexpected(exc: BaseException | None) -> SendResult:
    # The transport answers every failure itself; an exception here is a bug, recorded as a failed
    # attempt (retried) rather than leaving the delivery leased.
    return SendResult(
        status_code=None, error=f"unexpected error: {type(exc).__name__}", response_body="", duration_ms=0
    )


def _record_arrived(
    arrived: list[work.Arrived[list[_Send], list[SendResult]]],
    *,
    lease_until: dt.datetime,
    results: dict[str, SendResult],
) -> None:
    answers: list[tuple[Delivery, SendResult]] = []
    unsent: list[str] = []
    for answer in arrived:
        sent = answer.value
        for index, (delivery, _, _) in enumerate(answer.item):
            if sent is None:  # the thread machinery failed: nothing is known of this lane's sends
                result = _unexpected(answer.error)
            elif index < len(sent):
                result = sent[index]
            else:  # behind a failure in its webhook's lane: not sent
                unsent.append(delivery.pk)
                continue
            results[delivery.pk] = result
            answers.append((delivery, result))
    succeeded = [(delivery, result) for delivery, result in answers if result.ok]
    if succeeded:
        _record_succeeded(succeeded, lease_until=lease_until)
    for delivery, result in answers:
        if not result.ok:
            _record_failed(delivery=delivery, lease_until=lease_until, result=result)
    if unsent:  # after the failure before them is on record (it may have disabled their webhook)
        _give_back(unsent, lease_until=lease_until)


def _give_back(delivery_ids: list[str], *, lease_until: dt.datetime) -> None:
    """Deliveries claimed but not sent (a failure came before them in their webhook's lane): the
    lease given back, fenced, nothing else changed, and queued again, so the next task takes them
    from the oldest, one POST at a time while the receiver keeps failing."""
    held = Delivery.objects.filter(pk__in=delivery_ids, status=DeliveryStatus.PENDING)
    if work.release(held, lease_until=lease_until):
        transaction.on_commit(partial(enqueue_deliveries, sorted(delivery_ids)), robust=True)


def _record_succeeded(succeeded: list[tuple[Delivery, SendResult]], *, lease_until: dt.datetime) -> None:
    rows = sorted((delivery.pk, result) for delivery, result in succeeded)
    ids = [pk for pk, _ in rows]
    webhook_ids = sorted({delivery.webhook_id for delivery, _ in succeeded})
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_LOCK_SUCCEEDED_SQL, {"ids": ids, "webhook_ids": webhook_ids})
        locked = cursor.fetchone()
        present = list(locked[0]) if locked else []
        if not present:
            return  # their webhooks were deleted while the POSTs were on the wire: nothing to record
        cursor.execute(
            _RECORD_SUCCEEDED_SQL,
            {
                "ids": ids,
                "status_codes": [result.status_code for _, result in rows],
                "durations": [result.duration_ms for _, result in rows],
                "bodies": [result.response_body for _, result in rows],
                "present": present,
                "webhook_ids": webhook_ids,
                "now": timezone.now(),
                "lease": lease_until,
                "succeeded": DeliveryStatus.SUCCEEDED.value,
                "pending": DeliveryStatus.PENDING.value,
            },
        )
        row = cursor.fetchone()
        recorded = int(row[0]) if row else 0
        transaction.on_commit(lambda: metrics.webhook_delivery_recorded(outcome="succeeded", count=recorded))
        there = set(present)
        for delivery, result in succeeded:
            if delivery.pk in there:
                transaction.on_commit(partial(_log_delivery, delivery, "succeeded", result=result))


def _record_failed(*, delivery: Delivery, lease_until: dt.datetime, result: SendResult) -> None:
    now = timezone.now()
    attempt_number = delivery.attempt_count + 1
    held = Delivery.objects.filter(pk=delivery.pk, status=DeliveryStatus.PENDING)
    common = {"attempt_count": F("attempt_count") + 1, "last_attempt_at": now, "last_error": result.error}
    with transaction.atomic():
        if not _still_there([delivery.pk]):
            return  # its webhook was deleted while the POST was on the wire: nothing left to record
        Attempt.objects.create(**_attempt_fields(delivery, result, now))
        retry_in: float | None = None
        if attempt_number < max_attempts():
            retry_in = work.backoff_seconds(attempt_number, settings.WEBHOOK_RETRY_DELAYS)
            written = work.release(
                held, lease_until=lease_until, next_attempt_at=now + dt.timedelta(seconds=retry_in), **common
            )
        else:
            written = work.release(
                held, lease_until=lease_until, status=DeliveryStatus.FAILED, next_attempt_at=None, **common
            )
        outcome = "retrying" if retry_in is not None else "failed"
        transaction.on_commit(lambda: metrics.webhook_delivery_recorded(outcome=outcome, count=written))
        if written:
            transaction.on_commit(partial(_log_delivery, delivery, outcome, result=result, retry_in=retry_in))
        Webhook.objects.filter(pk=delivery.webhook_id).update(
            consecutive_failures=F("consecutive_failures") + 1, last_failure_at=now
        )
        _notify_if_failing(webhook_id=delivery.webhook_id, now=now)
        if _disable_if_exhausted(webhook_id=delivery.webhook_id, now=now):
            return
        if retry_in is not None:
            transaction.on_commit(partial(enqueue_deliveries, [delivery.pk], countdown=retry_in), robust=True)


def _log_delivery(
    delivery: Delivery,
    outcome: str,
    *,
    result: SendResult | None = None,
    retry_in: float | None = None,
    error: str = "",
    sent: bool = True,
) -> None:
    """The one line of a delivery attempt's outcome: the delivery, its webhook, workspace and
    event, the attempt's number, what the receiver answered and, for a retry, the wait. The
    receiver's URL is not named (it may carry a secret of the receiver's)."""
    attempt = delivery.attempt_count + 1 if sent else delivery.attempt_count
    status_code = result.status_code if result is not None else None
    error = error or (result.error if result is not None else "")
    if outcome == "succeeded":
        level, said = logging.INFO, f"webhook delivery succeeded ({status_code})"
    elif outcome == "retrying":
        level, said = logging.WARNING, f"webhook delivery failed, retrying in {round(retry_in or 0.0, 1):g} s"
    else:
        level, said = logging.WARNING, "webhook delivery failed for good"
    delivery_logger.log(
        level,
        "%s: delivery %s of event %s (%s) to webhook %s, attempt %d%s",
        said,
        delivery.pk,
        delivery.event_id,
        delivery.event.name,
        delivery.webhook_id,
        attempt,
        f" ({error})" if error and outcome != "succeeded" else "",
        extra={
            "workspace_id": str(delivery.webhook.workspace_id),
            "delivery_id": delivery.pk,
            "webhook_id": delivery.webhook_id,
            "event_id": delivery.event_id,
            "event": delivery.event.name,
            "attempt": attempt,
            "outcome": outcome,
            "status_code": status_code,
            "duration_ms": result.duration_ms if result is not None else None,
            "retry_in_s": None if retry_in is None else round(retry_in, 1),
            "error": error,
        },
    )


def _attempt_fields(delivery: Delivery, result: SendResult, now: dt.datetime) -> dict[str, object]:
    return {
        "delivery_id": delivery.pk,
        "status_code": result.status_code,
        "duration_ms": result.duration_ms,
        "error": result.error,
        "response_body": result.response_body,
        "created_at": now,
    }


def _still_there(delivery_ids: list[str]) -> set[str]:
    """The ids among ``delivery_ids`` whose rows still exist, locked against deletion until the
    caller's transaction ends. A webhook deleted while its POST was on the wire takes its
    deliveries with it; an Attempt written for one would fail the foreign key at commit and, in
    a batch, lose the other webhooks' results recorded in the same transaction."""
    rows = Delivery.objects.select_for_update(no_key=True).filter(pk__in=delivery_ids).order_by("pk")
    return set(rows.values_list("pk", flat=True))


def _disable_if_exhausted(*, webhook_id: str, now: dt.datetime) -> bool:
    threshold = settings.WEBHOOK_DISABLE_AFTER_FAILURES
    disabled = Webhook.objects.filter(pk=webhook_id, active=True, consecutive_failures__gte=threshold).update(
        active=False, disabled_at=now, updated_at=now
    )
    if disabled:
        logger.warning("webhook %s disabled after %s consecutive failures", webhook_id, threshold)
        drop_pending_deliveries(webhook_id=webhook_id)
        _notify(webhook_id=webhook_id, name="webhook.disabled")
    return bool(disabled)


def _notify_if_failing(*, webhook_id: str, now: dt.datetime) -> None:
    """``webhook.failing`` once per crossing of the threshold: the conditional UPDATE that marks
    the run of failures as notified is the only way to emit, so a second failure past it, a task
    run twice or two workers recording at once emit nothing more. In the caller's transaction,
    with the failure that crossed it."""
    marked = Webhook.objects.filter(
        pk=webhook_id,
        active=True,
        consecutive_failures__gte=settings.WEBHOOK_FAILING_AFTER_FAILURES,
        failing_notified_at__isnull=True,
    ).update(failing_notified_at=now)
    if marked:
        logger.warning(
            "webhook %s failing: %s consecutive failures", webhook_id, settings.WEBHOOK_FAILING_AFTER_FAILURES
        )
        _notify(webhook_id=webhook_id, name="webhook.failing")


def _notify(*, webhook_id: str, name: str) -> None:
    webhook = Webhook.objects.get(pk=webhook_id)
    emit_webhook_notice(
        workspace_id=webhook.workspace_id, name=name, data=notice_data(webhook), about_webhook_id=webhook.pk
    )


def notice_data(webhook: Webhook) -> dict[str, object]:
    """``data`` of ``webhook.failing`` and ``webhook.disabled``: the webhook in question (never its
    secret) with its failure count."""
    return {
        "webhook": {
            "id": webhook.pk,
            "url": webhook.url,
            "active": webhook.active,
            "consecutiveFailures": webhook.consecutive_failures,
            "lastFailureAt": format_instant(webhook.last_failure_at),
            "disabledAt": format_instant(webhook.disabled_at),
        }
    }


def drop_pending_deliveries(*, webhook_id: str) -> int:
    """Close every pending delivery of a webhook that is no longer active."""
    return Delivery.objects.filter(webhook_id=webhook_id, status=DeliveryStatus.PENDING).update(
        status=DeliveryStatus.FAILED, next_attempt_at=None, lease_until=None, last_error=DISABLED_REASON
    )


def deliveries_sweep(*, overdue_seconds: float = SWEEP_OVERDUE_SECONDS, batch: int = SWEEP_BATCH) -> list[str]:
    """Re-enqueue pending deliveries that are overdue and not held by a worker: their task was
    lost (a killed worker, a broker hiccup). Each is taken with ``swept_at`` (SKIP LOCKED, oldest
    due first), so a second sweep right after changes nothing. Returns the ids enqueued."""
    now = timezone.now()
    overdue_before = now - dt.timedelta(seconds=overdue_seconds)
    overdue = Delivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=overdue_before).filter(
        Q(swept_at__isnull=True) | Q(swept_at__lt=overdue_before)
    )
    ids = work.sweep_expired(overdue, now=now, limit=batch, order_by=("next_attempt_at",), swept_at=now)
    if ids:
        transaction.on_commit(partial(enqueue_deliveries, ids), robust=True)
    return ids
