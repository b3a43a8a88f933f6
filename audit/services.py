"""The audit log's writes. :func:`record` is the one way a change is recorded; every app that
changes keys, workspaces, webhooks, accounts, plans or deletes posts calls it inside the
transaction of that change.

Usage (an account disconnect, in the service that makes it)::

    from audit.actors import Actor
    from audit.services import record

    @transaction.atomic
    def account_disconnect(*, workspace: Workspace, account_id: str, actor: Actor) -> None:
        ...  # the change
        record(
            actor=actor,                       # audit.actors.actor_of_request(request) in a view
            action="account.disconnect",       # "<target type>.<verb>"
            organization_id=workspace.organization_id,
            workspace_id=workspace.id,
            target_type="social_account",
            target_id=account.id,
            changes={"platform": account.platform},  # small, never a secret
        )

Because the row is written in the caller's transaction, a change and its record commit or roll
back together: a change without its record cannot exist. Outside a transaction ``record``
refuses to run (``RuntimeError``): it would commit on its own."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from audit.actors import Actor
from audit.models import AuditEvent

MAX_CHANGES_BYTES = 4096
# Keys whose values are never recorded, whatever the caller passes (a secret shown once stays so).
_SECRET_WORDS = ("secret", "token", "password", "plaintext", "credential", "hash")
PRUNE_BATCH = 5000
PRUNE_MAX_BATCHES = 50


def _without_secrets(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            str(k): _without_secrets(v)
            for k, v in value.items()
            if not any(word in str(k).lower() for word in _SECRET_WORDS)
        }
    if isinstance(value, list | tuple):
        return [_without_secrets(v) for v in value]
    return value


def _bounded(changes: dict[str, Any]) -> dict[str, Any]:
    cleaned = _without_secrets(changes)
    text = json.dumps(cleaned, default=str)
    if len(text.encode()) <= MAX_CHANGES_BYTES:
        return json.loads(text)  # type: ignore[no-any-return]
    return {"truncated": True, "fields": sorted(cleaned)}


def record(
    *,
    actor: Actor,
    action: str,
    organization_id: str,
    target_type: str,
    target_id: str,
    workspace_id: str | None = None,
    changes: dict[str, Any] | None = None,
) -> AuditEvent:
    """Write one audit event in the caller's transaction (RuntimeError outside one). ``changes``:
    a small JSON object of what changed; keys naming a secret (secret, token, password, …) are
    dropped at any depth, and an object over 4 KiB is replaced by the list of its keys."""
    if not connection.in_atomic_block:
        raise RuntimeError("audit.record must run inside the transaction of the change it records")
    return AuditEvent.objects.create(
        organization_id=organization_id,
        workspace_ref=workspace_id or "",
        actor_type=actor.type,
        actor_id=actor.id[:60],
        actor_label=actor.label[:200],
        action=action,
        target_type=target_type,
        target_id=target_id[:60],
        changes=_bounded(changes or {}),
        request_id=actor.request_id[:64],
        source_address=actor.source_address,
        created_at=timezone.now(),
    )


def audit_events_prune(*, batch: int = PRUNE_BATCH, max_batches: int = PRUNE_MAX_BATCHES) -> int:
    """Delete audit events older than AUDIT_RETENTION_DAYS, oldest first, in batches (each its own
    transaction), at most ``max_batches`` per run. Running it twice deletes nothing more.
    Returns how many were deleted."""
    cutoff = timezone.now() - dt.timedelta(days=settings.AUDIT_RETENTION_DAYS)
    deleted = 0
    for _ in range(max_batches):
        with transaction.atomic():
            doomed = list(
                AuditEvent.objects.filter(created_at__lt=cutoff)
                .order_by("created_at")
                .values_list("pk", flat=True)[:batch]
            )
            if doomed:
                AuditEvent.objects.filter(pk__in=doomed).delete()
        deleted += len(doomed)
        if len(doomed) < batch:
            break
    return deleted
