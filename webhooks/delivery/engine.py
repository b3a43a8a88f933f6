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

# A retry task may fire a moment before ``next_attempt_at`` (clock skew between processes).
EARLY_TOLERANCE = dt.timedelta(seconds=2)
LEASE_MARGIN_SECONDS = 5.0
SWEEP_OVERDUE_SECONDS = 60.0
SWEEP_BATCH = 1000
DISABLED_REASON = "webhook disabled; pending retries dropped"

# Success resets the counter of each webhook: rows locked in id order, so two batches never wait on
# each other in opposite orders.
_WEBHOOKS_SUCCEEDED_SQL = """
UPDATE webhooks_webhook w SET consecutive_failures = 0, failing_notified_at = NULL, last_success_at = %s
FROM (SELECT id FROM webhooks_webhook WHERE id = ANY(%s) ORDER BY id FOR NO KEY UPDATE) locked
WHERE w.id = locked.id
"""


def max_attempts() -> int:
    """One attempt, then one per retry delay."""
    return 1 + len(settings.WEBHOOK_RETRY_DELAYS)


def lease_duration() -> dt.timedelta:
    """Long enough for one send (bounded by the deadline) plus recording it."""
    return dt.timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS * 3 + LEASE_MARGIN_SECONDS)


def deliveries_attempt(*, delivery_ids: list[str]) -> dict[str, SendResult]:
    """Make the next attempt of each due delivery among ``delivery_ids`` (one is a batch of one)
    and record it. Claimed with one lease (pending, due, held by nobody: the others are left
    alone, having sent nothing), read in one query, the POSTs sent side by side on the worker's
    threads (``core.work.gather``), and what comes back recorded as it arrives: the successes that
    arrived together in one transaction (their Attempts, one fenced UPDATE of the deliveries, one of
    the webhooks), each failure in its own (an Attempt, a jittered retry or the final failure, the
    webhook's counter and its auto-disable). A delivery of an inactive webhook is closed as failed
    without a send. Returns what each delivery sent got back, by id."""
    ids = list(dict.fromkeys(delivery_ids))
    if not ids:
        return {}
    now = timezone.now()
    lease_until = now + lease_duration()
    due = Delivery.objects.filter(
        work.lease_free(now), pk__in=ids, status=DeliveryStatus.PENDING, next_attempt_at__lte=now + EARLY_TOLERANCE
    )
    claimed = work.claim(due, lease_until=lease_until)
    if not claimed:
        return {}
    deliveries = list(Delivery.objects.select_related("webhook", "event").filter(pk__in=claimed).order_by("id"))
    sends: list[tuple[Delivery, bytes, dict[str, str]]] = []
    for delivery in deliveries:
        webhook = delivery.webhook
        if not webhook.active:
            Delivery.objects.filter(pk=delivery.pk, status=DeliveryStatus.PENDING).update(
                status=DeliveryStatus.FAILED, next_attempt_at=None, lease_until=None, last_error=DISABLED_REASON
            )
            continue
        body = delivery.event.payload.encode("utf-8")
        headers = signed_headers(
            secret=webhook.secret,
            webhook_id=webhook.id,
            event_name=delivery.event.name,
            body=body,
            previous_secret=webhook.previous_secret_at(timezone.now()),
        )
        sends.append((delivery, body, headers))
    results: dict[str, SendResult] = {}
    record = partial(_record_arrived, lease_until=lease_until, results=results)
    work.gather(sends, _send, record, width=settings.WEBHOOK_DELIVERY_BATCH)
    return results


def _send(send: tuple[Delivery, bytes, dict[str, str]]) -> SendResult:
    delivery, body, headers = send
    return post(url=delivery.webhook.url, body=body, headers=headers, timeout=settings.WEBHOOK_TIMEOUT_SECONDS)


def _record_arrived(
    arrived: list[work.Arrived[tuple[Delivery, bytes, dict[str, str]], SendResult]],
    *,
    lease_until: dt.datetime,
    results: dict[str, SendResult],
) -> None:
    answers: list[tuple[Delivery, SendResult]] = []
    for answer in arrived:
        delivery = answer.item[0]
        # The transport answers every failure itself; an exception here is a bug, recorded as a
        # failed attempt (retried) rather than leaving the delivery leased.
        result = answer.value or SendResult(
            status_code=None, error=f"unexpected error: {type(answer.error).__name__}", response_body="", duration_ms=0
        )
        results[delivery.pk] = result
        answers.append((delivery, result))
    succeeded = [(delivery, result) for delivery, result in answers if result.ok]
    if succeeded:
        _record_succeeded(succeeded, lease_until=lease_until)
    for delivery, result in answers:
        if not result.ok:
            _record_failed(delivery=delivery, lease_until=lease_until, result=result)


def _record_succeeded(succeeded: list[tuple[Delivery, SendResult]], *, lease_until: dt.datetime) -> None:
    now = timezone.now()
    with transaction.atomic(), connection.cursor() as cursor:
        present = _still_there([delivery.pk for delivery, _ in succeeded])
        succeeded = [(delivery, result) for delivery, result in succeeded if delivery.pk in present]
        if not succeeded:
            return  # their webhook was deleted while the POSTs were on the wire: nothing to record
        Attempt.objects.bulk_create([_attempt_row(delivery, result, now) for delivery, result in succeeded])
        held = Delivery.objects.filter(pk__in=[delivery.pk for delivery, _ in succeeded], status=DeliveryStatus.PENDING)
        recorded = work.fenced(held, lease_until=lease_until).update(
            status=DeliveryStatus.SUCCEEDED,
            next_attempt_at=None,
            last_error="",
            attempt_count=F("attempt_count") + 1,
            last_attempt_at=now,
            lease_until=None,
        )
        cursor.execute(_WEBHOOKS_SUCCEEDED_SQL, [now, sorted({delivery.webhook_id for delivery, _ in succeeded})])
        transaction.on_commit(lambda: metrics.webhook_delivery_recorded(outcome="succeeded", count=recorded))


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
        Webhook.objects.filter(pk=delivery.webhook_id).update(
            consecutive_failures=F("consecutive_failures") + 1, last_failure_at=now
        )
        _notify_if_failing(webhook_id=delivery.webhook_id, now=now)
        if _disable_if_exhausted(webhook_id=delivery.webhook_id, now=now):
            return
        if retry_in is not None:
            transaction.on_commit(partial(enqueue_deliveries, [delivery.pk], countdown=retry_in), robust=True)


def _attempt_fields(delivery: Delivery, result: SendResult, now: dt.datetime) -> dict[str, object]:
    return {
        "delivery_id": delivery.pk,
        "status_code": result.status_code,
        "duration_ms": result.duration_ms,
        "error": result.error,
        "response_body": result.response_body,
        "created_at": now,
    }


def _attempt_row(delivery: Delivery, result: SendResult, now: dt.datetime) -> Attempt:
    return Attempt(**_attempt_fields(delivery, result, now))


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
