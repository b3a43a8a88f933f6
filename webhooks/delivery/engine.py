"""Working through deliveries: claim, send, record, retry, auto-disable, and the sweeper.

A delivery is claimed with a conditional UPDATE that sets a lease (``lease_until``); only the
holder sends, so running the task twice sends once. The consecutive-failure counter moves with
F() expressions, so concurrent attempts never lose a count.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import random
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from core import metrics
from webhooks.delivery.signing import signed_headers
from webhooks.delivery.transport import SendResult, post
from webhooks.events import enqueue_deliveries
from webhooks.models import Attempt, Delivery, DeliveryStatus, Webhook

logger = logging.getLogger(__name__)

# A retry task may fire a moment before ``next_attempt_at`` (clock skew between processes).
EARLY_TOLERANCE = dt.timedelta(seconds=2)
LEASE_MARGIN_SECONDS = 5.0
SWEEP_OVERDUE_SECONDS = 60.0
SWEEP_BATCH = 1000
# How long the first answer of a batch waits for the others before they are recorded together.
GATHER_SECONDS = 0.025
DISABLED_REASON = "webhook disabled; pending retries dropped"


def timeout_seconds() -> float:
    return float(getattr(settings, "WEBHOOK_TIMEOUT_SECONDS", 10.0))


def retry_delays() -> list[float]:
    return [float(d) for d in getattr(settings, "WEBHOOK_RETRY_DELAYS", [30, 120, 480, 1920, 7200])]


def max_attempts() -> int:
    return 1 + len(retry_delays())


def disable_threshold() -> int:
    return int(getattr(settings, "WEBHOOK_DISABLE_AFTER_FAILURES", 20))


def lease_duration() -> dt.timedelta:
    """Long enough for one send (bounded by the deadline) plus recording it."""
    return dt.timedelta(seconds=timeout_seconds() * 3 + LEASE_MARGIN_SECONDS)


def jittered(delay: float) -> float:
    return delay * random.uniform(0.8, 1.2)


def delivery_attempt(*, delivery_id: str) -> SendResult | None:
    """Make the next attempt of a due delivery and record it.

    Returns None, having sent nothing, when the delivery is not pending, not yet due, or held
    by another worker. A delivery of an inactive webhook is closed as failed without a send."""
    now = timezone.now()
    lease_until = now + lease_duration()
    claimed = (
        Delivery.objects.filter(
            pk=delivery_id, status=DeliveryStatus.PENDING, next_attempt_at__lte=now + EARLY_TOLERANCE
        )
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .update(lease_until=lease_until)
    )
    if not claimed:
        return None
    delivery = Delivery.objects.select_related("webhook", "event").filter(pk=delivery_id).first()
    if delivery is None:
        return None
    webhook = delivery.webhook
    if not webhook.active:
        Delivery.objects.filter(pk=delivery_id, status=DeliveryStatus.PENDING).update(
            status=DeliveryStatus.FAILED, next_attempt_at=None, lease_until=None, last_error=DISABLED_REASON
        )
        return None
    body = delivery.event.payload.encode("utf-8")
    headers = signed_headers(secret=webhook.secret, webhook_id=webhook.id, event_name=delivery.event.name, body=body)
    result = post(url=webhook.url, body=body, headers=headers, timeout=timeout_seconds())
    _record(delivery=delivery, lease_until=lease_until, result=result)
    return result


def _record(*, delivery: Delivery, lease_until: dt.datetime, result: SendResult) -> None:
    now = timezone.now()
    attempt_number = delivery.attempt_count + 1
    held = Delivery.objects.filter(pk=delivery.pk, status=DeliveryStatus.PENDING, lease_until=lease_until)
    with transaction.atomic():
        if not _still_there([delivery.pk]):
            return  # its webhook was deleted while the POST was on the wire: nothing left to record
        Attempt.objects.create(
            delivery_id=delivery.pk,
            status_code=result.status_code,
            duration_ms=result.duration_ms,
            error=result.error,
            response_body=result.response_body,
            created_at=now,
        )
        common = {"attempt_count": F("attempt_count") + 1, "last_attempt_at": now, "lease_until": None}
        if result.ok:
            written = held.update(status=DeliveryStatus.SUCCEEDED, next_attempt_at=None, last_error="", **common)
            transaction.on_commit(lambda: metrics.webhook_delivery_recorded(outcome="succeeded", count=written))
            Webhook.objects.filter(pk=delivery.webhook_id).update(consecutive_failures=0, last_success_at=now)
            return
        retry_in: float | None = None
        if attempt_number < max_attempts():
            retry_in = jittered(retry_delays()[attempt_number - 1])
            written = held.update(
                next_attempt_at=now + dt.timedelta(seconds=retry_in), last_error=result.error, **common
            )
        else:
            written = held.update(status=DeliveryStatus.FAILED, next_attempt_at=None, last_error=result.error, **common)
        outcome = "retrying" if retry_in is not None else "failed"
        transaction.on_commit(lambda: metrics.webhook_delivery_recorded(outcome=outcome, count=written))
        Webhook.objects.filter(pk=delivery.webhook_id).update(
            consecutive_failures=F("consecutive_failures") + 1, last_failure_at=now
        )
        if _disable_if_exhausted(webhook_id=delivery.webhook_id, now=now):
            return
        if retry_in is not None:
            ids = [delivery.pk]
            countdown = retry_in
            transaction.on_commit(lambda: enqueue_deliveries(ids, countdown=countdown), robust=True)


_CLAIM_MANY_SQL = """
UPDATE webhooks_delivery SET lease_until = %(lease)s
WHERE id = ANY(%(ids)s) AND status = %(pending)s AND next_attempt_at <= %(due)s
  AND (lease_until IS NULL OR lease_until < %(now)s)
RETURNING id
"""

# Success resets the counter of each webhook: rows locked in id order, so two batches never wait on
# each other in opposite orders.
_WEBHOOKS_SUCCEEDED_SQL = """
UPDATE webhooks_webhook w SET consecutive_failures = 0, last_success_at = %s
FROM (SELECT id FROM webhooks_webhook WHERE id = ANY(%s) ORDER BY id FOR NO KEY UPDATE) locked
WHERE w.id = locked.id
"""


def batch_size() -> int:
    """Deliveries per ``webhooks.deliver_many`` task (and sends in flight in one worker process)."""
    return max(1, int(getattr(settings, "WEBHOOK_DELIVERY_BATCH", 10)))


def deliveries_attempt(*, delivery_ids: list[str]) -> int:
    """:func:`delivery_attempt` for several deliveries at once (one event's, usually): claimed in
    one conditional UPDATE (the same rules, one lease), read in one query, the POSTs sent side by
    side on threads that do nothing but send, and what comes back recorded as it arrives: the
    successes that arrived together in one transaction (their Attempts, one fenced UPDATE of the
    deliveries, one of the webhooks), any other answer through :func:`_record` exactly as alone.
    Returns how many were sent."""
    ids = list(dict.fromkeys(delivery_ids))
    if not ids:
        return 0
    now = timezone.now()
    lease_until = now + lease_duration()
    with connection.cursor() as cursor:
        cursor.execute(
            _CLAIM_MANY_SQL,
            {
                "lease": lease_until,
                "ids": ids,
                "pending": DeliveryStatus.PENDING.value,
                "due": now + EARLY_TOLERANCE,
                "now": now,
            },
        )
        claimed = [row[0] for row in cursor.fetchall()]
    if not claimed:
        return 0
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
            secret=webhook.secret, webhook_id=webhook.id, event_name=delivery.event.name, body=body
        )
        sends.append((delivery, body, headers))
    if not sends:
        return 0
    timeout = timeout_seconds()
    width = min(len(sends), batch_size())
    pool = _send_pool(width)
    waiting = iter(sends)
    pending: dict[Future[SendResult], Delivery] = {}
    for delivery, body, headers in waiting:
        pending[pool.submit(post, url=delivery.webhook.url, body=body, headers=headers, timeout=timeout)] = delivery
        if len(pending) >= width:
            break
    while pending:
        done, _ = wait(pending, return_when=FIRST_COMPLETED)
        if len(done) < len(pending):
            # Receivers sent to together answer within milliseconds of each other: a moment's
            # wait records them in one transaction instead of one per straggler.
            done, _ = wait(pending, timeout=GATHER_SECONDS)
        arrived: list[tuple[Delivery, SendResult]] = []
        for future in done:
            arrived.append((pending.pop(future), future.result()))
            following = next(waiting, None)
            if following is not None:
                delivery, body, headers = following
                pending[pool.submit(post, url=delivery.webhook.url, body=body, headers=headers, timeout=timeout)] = (
                    delivery
                )
        _record_arrived(arrived, lease_until=lease_until)
    return len(sends)


_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_owner = 0  # the pid that started the pool's threads (a forked child starts its own)
_pool_size = 0


def _send_pool(size: int) -> ThreadPoolExecutor:
    """The sending threads of this process, kept from one batch to the next instead of started
    for each. Callers cap what they have in flight themselves."""
    global _pool, _pool_owner, _pool_size
    with _pool_lock:
        if _pool is None or _pool_owner != os.getpid() or _pool_size < size:
            # A smaller pool this replaces is not shut down: a batch still running on it finishes
            # there, and its idle threads end once the last reference to it is gone.
            _pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="webhook-send")
            _pool_owner, _pool_size = os.getpid(), size
        return _pool


def _record_arrived(arrived: list[tuple[Delivery, SendResult]], *, lease_until: dt.datetime) -> None:
    succeeded = [(delivery, result) for delivery, result in arrived if result.ok]
    if succeeded:
        now = timezone.now()
        with transaction.atomic(), connection.cursor() as cursor:
            present = _still_there([delivery.pk for delivery, _ in succeeded])
            succeeded = [(delivery, result) for delivery, result in succeeded if delivery.pk in present]
            Attempt.objects.bulk_create(
                [
                    Attempt(
                        delivery_id=delivery.pk,
                        status_code=result.status_code,
                        duration_ms=result.duration_ms,
                        error=result.error,
                        response_body=result.response_body,
                        created_at=now,
                    )
                    for delivery, result in succeeded
                ]
            )
            recorded = Delivery.objects.filter(
                pk__in=[delivery.pk for delivery, _ in succeeded],
                status=DeliveryStatus.PENDING,
                lease_until=lease_until,
            ).update(
                status=DeliveryStatus.SUCCEEDED,
                next_attempt_at=None,
                last_error="",
                attempt_count=F("attempt_count") + 1,
                last_attempt_at=now,
                lease_until=None,
            )
            if succeeded:
                cursor.execute(
                    _WEBHOOKS_SUCCEEDED_SQL, [now, sorted({delivery.webhook_id for delivery, _ in succeeded})]
                )
            transaction.on_commit(lambda: metrics.webhook_delivery_recorded(outcome="succeeded", count=recorded))
    for delivery, result in arrived:
        if not result.ok:
            _record(delivery=delivery, lease_until=lease_until, result=result)


def _still_there(delivery_ids: list[str]) -> set[str]:
    """The ids among ``delivery_ids`` whose rows still exist, locked against deletion until the
    caller's transaction ends. A webhook deleted while its POST was on the wire takes its
    deliveries with it; an Attempt written for one would fail the foreign key at commit and, in
    a batch, lose the other webhooks' results recorded in the same transaction."""
    rows = Delivery.objects.select_for_update(no_key=True).filter(pk__in=delivery_ids).order_by("pk")
    return set(rows.values_list("pk", flat=True))


def _disable_if_exhausted(*, webhook_id: str, now: dt.datetime) -> bool:
    disabled = Webhook.objects.filter(pk=webhook_id, active=True, consecutive_failures__gte=disable_threshold()).update(
        active=False, disabled_at=now, updated_at=now
    )
    if disabled:
        logger.warning("webhook %s disabled after %s consecutive failures", webhook_id, disable_threshold())
        drop_pending_deliveries(webhook_id=webhook_id)
    return bool(disabled)


def drop_pending_deliveries(*, webhook_id: str) -> int:
    """Close every pending delivery of a webhook that is no longer active."""
    return Delivery.objects.filter(webhook_id=webhook_id, status=DeliveryStatus.PENDING).update(
        status=DeliveryStatus.FAILED, next_attempt_at=None, lease_until=None, last_error=DISABLED_REASON
    )


_SWEEP_SQL = """
UPDATE webhooks_delivery SET swept_at = %(now)s
WHERE id IN (
    SELECT id FROM webhooks_delivery
    WHERE status = 'pending'
      AND next_attempt_at <= %(overdue_before)s
      AND (lease_until IS NULL OR lease_until < %(now)s)
      AND (swept_at IS NULL OR swept_at < %(overdue_before)s)
    ORDER BY next_attempt_at
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
)
RETURNING id
"""


def deliveries_sweep(*, overdue_seconds: float = SWEEP_OVERDUE_SECONDS, batch: int = SWEEP_BATCH) -> list[str]:
    """Re-enqueue pending deliveries that are overdue and not held by a worker: their task was
    lost (a killed worker, a broker hiccup). Each is claimed with a conditional UPDATE
    (``swept_at``), so a second sweep right after changes nothing. Returns the ids enqueued."""
    now = timezone.now()
    params: dict[str, dt.datetime | int] = {
        "now": now,
        "overdue_before": now - dt.timedelta(seconds=overdue_seconds),
        "batch": batch,
    }
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_SWEEP_SQL, params)
        ids = [row[0] for row in cursor.fetchall()]
        if ids:
            transaction.on_commit(lambda: enqueue_deliveries(ids), robust=True)
    return ids
