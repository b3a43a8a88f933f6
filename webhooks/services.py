"""Writes of the webhooks app: registering and changing webhooks, test sends, redelivery."""

from __future__ import annotations

import base64
import datetime as dt
import enum
import secrets

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from audit.actors import Actor, system_actor
from audit.services import record
from core.errors import BadRequest, Conflict, ValidationFailed
from core.ids import new_id
from webhooks.delivery.engine import drop_pending_deliveries
from webhooks.delivery.signing import signed_headers
from webhooks.delivery.transport import SendResult, post
from webhooks.enqueue import enqueue_deliveries
from webhooks.events import EVENT_NAMES, serialize_envelope
from webhooks.models import Delivery, DeliveryStatus, Event, Webhook
from webhooks.selectors import delivery_get, webhook_get
from webhooks.url_safety import UnsafeUrl, check_url
from workspaces.models import Workspace
from workspaces.plans import WEBHOOKS_PER_WORKSPACE, require_within

PRUNE_BATCH = 1000
PRUNE_MAX_BATCHES = 50
SECRET_PREFIX = "whsec_"
ROTATION_GRACE_SECONDS = 86_400
ROTATION_GRACE_MAX_SECONDS = 7 * 86_400


class _Unset(enum.Enum):
    """A keyword argument left out (where None means something)."""

    UNSET = enum.auto()


UNSET = _Unset.UNSET
DUPLICATE_MESSAGE = "A webhook with this URL already exists in this workspace"
UNNAMED_CALLER = "service call"


def _audit(
    webhook: Webhook, workspace: Workspace, action: str, actor: Actor | None, changes: dict[str, object]
) -> None:
    """The webhook change's audit event, in its transaction (never the secret: only that it changed)."""
    record(
        actor=actor or system_actor(UNNAMED_CALLER),
        action=action,
        organization_id=workspace.organization_id,
        workspace_id=workspace.pk,
        target_type="webhook",
        target_id=webhook.pk,
        changes=changes,
    )


SEAL_BATCH = 1000  # events numbered per GET /events at most (the rest by the next ones)


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def _checked_url(url: str) -> str:
    try:
        return check_url(url)
    except UnsafeUrl as exc:
        raise ValidationFailed([str(exc)], code="invalid_webhook_url")


def _lock_workspace_webhooks(workspace_id: str) -> None:
    """Serialize webhook writes of one workspace (the limit and duplicate checks are exact)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"webhooks:{workspace_id}"])


def _ensure_unique(*, workspace: Workspace, normalized_url: str, exclude_id: str | None = None) -> None:
    duplicates = Webhook.objects.filter(workspace=workspace, normalized_url=normalized_url)
    if exclude_id is not None:
        duplicates = duplicates.exclude(pk=exclude_id)
    if duplicates.exists():
        raise Conflict(DUPLICATE_MESSAGE)


def webhook_create(
    *, workspace: Workspace, url: str, events: list[str] | None = None, actor: Actor | None = None
) -> Webhook:
    """Register a webhook; the returned instance carries the plaintext ``secret`` (stored
    encrypted, shown only now). ``events`` subscribes it to those event names only (None: every
    event). At most WEBHOOK_MAX_PER_WORKSPACE per workspace, exact under concurrency; 409 when
    the normalized URL is already registered here; 403 ``subscription_required`` past the
    organization plan's webhook limit. Recorded in the audit log (``actor``)."""
    normalized = _checked_url(url)
    limit = settings.WEBHOOK_MAX_PER_WORKSPACE
    try:
        with transaction.atomic():
            _lock_workspace_webhooks(workspace.pk)
            _ensure_unique(workspace=workspace, normalized_url=normalized)
            if Webhook.objects.filter(workspace=workspace).count() >= limit:
                raise BadRequest(
                    f"Webhook limit reached: a workspace can have at most {limit} webhooks",
                    code="webhook_limit_reached",
                )
            require_within(WEBHOOKS_PER_WORKSPACE, workspace_id=workspace.pk)
            webhook = Webhook.objects.create(
                workspace=workspace, url=url, normalized_url=normalized, secret=new_secret(), events=events
            )
            _audit(webhook, workspace, "webhook.create", actor, {"url": url, "events": events})
            return webhook
    except IntegrityError:
        raise Conflict(DUPLICATE_MESSAGE)


def webhook_update(
    *,
    workspace: Workspace,
    webhook_id: str,
    url: str | None = None,
    active: bool | None = None,
    events: list[str] | _Unset | None = UNSET,
    actor: Actor | None = None,
) -> Webhook:
    """Change the URL, the active flag and/or the ``events`` filter (None: every event again;
    it applies to events emitted from now on). ``active: true`` re-enables, clears ``disabled_at``
    and resets the failure counter (and so the next ``webhook.failing`` notice); ``active: false``
    deactivates and drops pending retries (events emitted while inactive are never delivered to
    it), leaving ``disabled_at`` alone: only the automatic disable after failures sets it."""
    normalized = _checked_url(url) if url is not None else None
    try:
        with transaction.atomic():
            _lock_workspace_webhooks(workspace.pk)
            webhook = webhook_get(workspace=workspace, webhook_id=webhook_id, for_update=True)
            if url is not None and normalized is not None:
                _ensure_unique(workspace=workspace, normalized_url=normalized, exclude_id=webhook.pk)
                webhook.url, webhook.normalized_url = url, normalized
            if not isinstance(events, _Unset):
                webhook.events = events
            if active is True:
                webhook.active, webhook.disabled_at = True, None
                webhook.consecutive_failures, webhook.failing_notified_at = 0, None
            elif active is False and webhook.active:
                webhook.active = False
                drop_pending_deliveries(webhook_id=webhook.pk)
            webhook.save()
            changed: dict[str, object] = {"url": url, "active": active}
            if not isinstance(events, _Unset):
                changed["events"] = events
            _audit(webhook, workspace, "webhook.update", actor, {k: v for k, v in changed.items() if v is not None})
            return webhook
    except IntegrityError:
        raise Conflict(DUPLICATE_MESSAGE)


def webhook_delete(*, workspace: Workspace, webhook_id: str, actor: Actor | None = None) -> None:
    """Delete a webhook with its deliveries; queued tasks for them then find nothing to do.
    Recorded in the audit log."""
    with transaction.atomic():
        webhook = webhook_get(workspace=workspace, webhook_id=webhook_id, for_update=True)
        _audit(webhook, workspace, "webhook.delete", actor, {"url": webhook.url})
        webhook.delete()


def webhook_rotate_secret(
    *, workspace: Workspace, webhook_id: str, grace_seconds: int, actor: Actor | None = None
) -> Webhook:
    """Give the webhook a new secret; the returned instance carries it in plain text (stored
    encrypted, shown only now). For ``grace_seconds`` every delivery is signed with both the new
    and the old secret, so receivers swap secrets without a window of failed signatures; 0 ends
    the old secret now. A rotation inside a grace period replaces the pending one: the secret
    kept beside the new one is always the one in use until now. Not idempotent by itself (each
    call is a new secret): the API's Idempotency-Key makes a retried request answer once."""
    with transaction.atomic():
        webhook = webhook_get(workspace=workspace, webhook_id=webhook_id, for_update=True)
        now = timezone.now()
        webhook.previous_secret = webhook.secret if grace_seconds > 0 else ""
        webhook.previous_secret_expires_at = now + dt.timedelta(seconds=grace_seconds) if grace_seconds > 0 else None
        webhook.secret = new_secret()
        webhook.save(update_fields=["secret", "previous_secret", "previous_secret_expires_at", "updated_at"])
        _audit(webhook, workspace, "webhook.rotate_secret", actor, {"graceSeconds": grace_seconds})
        return webhook


def webhook_send_test(*, workspace: Workspace, webhook_id: str) -> SendResult:
    """Send ``webhook.test`` now, with the same URL guard, signature and deadline as deliveries.
    Records nothing and does not count toward auto-disable."""
    webhook = webhook_get(workspace=workspace, webhook_id=webhook_id)
    payload = serialize_envelope(
        event_id=new_id("evt"),
        name="webhook.test",
        created_at=timezone.now(),
        data={"webhookId": webhook.pk, "events": list(EVENT_NAMES) if webhook.events is None else webhook.events},
    )
    body = payload.encode("utf-8")
    headers = signed_headers(
        secret=webhook.secret,
        webhook_id=webhook.pk,
        event_name="webhook.test",
        body=body,
        previous_secret=webhook.previous_secret_at(timezone.now()),
    )
    return post(url=webhook.url, body=body, headers=headers, timeout=settings.WEBHOOK_TIMEOUT_SECONDS)


def delivery_redeliver(*, workspace: Workspace, webhook_id: str, delivery_id: str) -> Delivery:
    """A new delivery of the same event body to the same webhook, enqueued after commit.
    Refused with 400 ``webhook_inactive`` while the webhook is disabled."""
    with transaction.atomic():
        webhook = webhook_get(workspace=workspace, webhook_id=webhook_id)
        original = delivery_get(webhook=webhook, delivery_id=delivery_id)
        if not webhook.active:
            raise BadRequest(
                "Webhook is disabled; re-enable it with PATCH active true before redelivering", code="webhook_inactive"
            )
        delivery = Delivery.objects.create(
            webhook=webhook, event_id=original.event_id, status=DeliveryStatus.PENDING, next_attempt_at=timezone.now()
        )
        ids = [delivery.pk]
        transaction.on_commit(lambda: enqueue_deliveries(ids), robust=True)
    return Delivery.objects.select_related("event").prefetch_related("attempts").get(pk=delivery.pk)


# The feed's sealing: one advisory-lock class for it, the workspace's id hashed as the object.
_SEAL_LOCK_SQL = "SELECT pg_advisory_xact_lock(%s, hashtext(%s))"
_SEAL_LOCK_CLASS = 0x4576  # "Ev"
_SEAL_SQL = """
UPDATE webhooks_event e SET seq = v.seq
FROM (SELECT unnest(%(ids)s::text[]) AS id, nextval('webhooks_event_seq') AS seq) v
WHERE e.id = v.id
"""


def events_seal(*, workspace: Workspace, limit: int = SEAL_BATCH) -> int:
    """Number the workspace's committed events that have no feed number yet (oldest first, at
    most ``limit``), so GET /events can list them after every event numbered before.

    Why numbers given after commit: an event's ``createdAt`` is stamped inside the transaction
    that emits it, and that transaction may commit after later-stamped events are already
    visible; a reader paging by instant would pass it and never see it. A number is given only to
    an event already committed, from an increasing sequence, by one sealer of the workspace at a
    time (a transaction-scoped advisory lock held until the numbers commit), so an event that
    becomes visible later always gets a larger number than any a reader has seen: nothing can
    appear behind a cursor. Safe to run any number of times; returns how many were numbered."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_SEAL_LOCK_SQL, [_SEAL_LOCK_CLASS, str(workspace.pk)])
        ids = list(
            Event.objects.filter(workspace=workspace, seq__isnull=True)
            .order_by("created_at", "id")
            .values_list("pk", flat=True)[:limit]
        )
        if ids:
            cursor.execute(_SEAL_SQL, {"ids": ids})
    return len(ids)


def events_prune(*, batch: int = PRUNE_BATCH, max_batches: int = PRUNE_MAX_BATCHES) -> int:
    """Delete events older than EVENTS_RETENTION_DAYS, with their deliveries and attempts: the
    outbox is the one store of GET /events, so it keeps exactly the window the feed serves. An
    event still being delivered (a pending delivery) is kept until it is done. Oldest first, in
    batches (each its own transaction), at most ``max_batches`` per run; running it twice deletes
    nothing more. Returns how many events were deleted."""
    cutoff = timezone.now() - dt.timedelta(days=settings.EVENTS_RETENTION_DAYS)
    deleted = 0
    for _ in range(max_batches):
        with transaction.atomic():
            doomed = list(
                Event.objects.filter(created_at__lt=cutoff)
                .exclude(deliveries__status=DeliveryStatus.PENDING)
                .order_by("created_at")
                .values_list("pk", flat=True)[:batch]
            )
            if doomed:
                Event.objects.filter(pk__in=doomed).delete()
        deleted += len(doomed)
        if len(doomed) < batch:
            break
    return deleted
