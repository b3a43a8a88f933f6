"""POST /social-posts/bulk: up to 100 posts sharing their targets, each created on its own."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.utils import timezone
from rest_framework.exceptions import ValidationError as DRFValidationError

from core.errors import ApplicationError
from core.exception_handler import flatten_validation_detail
from core.fields import format_instant
from core.idempotency import fingerprint_of, run_once, validate_key
from posts.models import PostStatus
from posts.payloads import CONFIG_FIELDS, BulkItemInput
from posts.services.creation import NOW, post_create, require_for_timing, timing_of
from posts.validation import build_plan
from workspaces.access import Access

_ITEM_KEY_PREFIX = "bulk-item:"


@dataclass
class _Item:
    raw: Any
    data: dict[str, Any] | None
    error: str | None
    scheduled_at: dt.datetime | None


def _parse(raw: Any) -> _Item:
    serializer = BulkItemInput(data=raw)
    try:
        serializer.is_valid(raise_exception=True)
    except DRFValidationError as exc:
        return _Item(raw, None, "; ".join(flatten_validation_detail(exc.detail)), None)
    data = dict(serializer.validated_data)
    return _Item(raw, data, None, data["scheduledAt"])


def posts_bulk_create(
    *, access: Access, batch: dict[str, Any], raw_batch: dict[str, Any], now: dt.datetime | None = None
) -> dict[str, Any]:
    """Validate and create every item of ``batch["posts"]`` on its own (its own transaction), so
    one bad item never sinks the others; results keep the input order. The batch needs
    posts.publish as well when any item is due now (checked before anything is created). An item
    with ``idempotencyKey`` is created at most once per workspace and key (its first result is
    returned again)."""
    now = now or timezone.now()
    items = [_parse(raw) for raw in batch["posts"]]
    if any(i.data and timing_of(save_as_draft=False, scheduled_at=i.scheduled_at, now=now) == NOW for i in items):
        require_for_timing(access, NOW)
    shared = {k: v for k, v in batch.items() if k != "posts"}
    shared_raw = {k: v for k, v in raw_batch.items() if k != "posts"} if isinstance(raw_batch, dict) else {}
    results = [_run_item(access, item, shared, shared_raw, now) for item in items]
    succeeded = sum(1 for r in results if r["success"])
    return {"totalScheduled": succeeded, "totalFailed": len(results) - succeeded, "results": results}


def _failure(item: _Item, message: str) -> dict[str, Any]:
    return {
        "postId": None,
        "success": False,
        "isScheduled": False,
        "scheduledAt": format_instant(item.scheduled_at),
        "errorMessage": message,
    }


def _run_item(
    access: Access, item: _Item, shared: dict[str, Any], shared_raw: dict[str, Any], now: dt.datetime
) -> dict[str, Any]:
    if item.data is None:
        return _failure(item, item.error or "Invalid item")
    data = {**shared, **{k: v for k, v in item.data.items() if k != "idempotencyKey"}}
    for name in CONFIG_FIELDS.values():
        if name in item.data:
            data[name] = item.data[name]
    workspace_id = access.workspace.id

    def execute() -> tuple[int, Any]:
        plan = build_plan(workspace_id=workspace_id, data=data, full=True)
        post = post_create(workspace_id=workspace_id, plan=plan, now=now, user_id=access.member_id)
        return 201, {
            "postId": post.id,
            "success": True,
            "isScheduled": post.status == PostStatus.SCHEDULED,
            "scheduledAt": format_instant(post.scheduled_at),
            "errorMessage": None,
        }

    try:
        key = item.data.get("idempotencyKey")
        if not key:
            return execute()[1]  # type: ignore[no-any-return]
        outcome = run_once(
            workspace_id=workspace_id,
            key=_ITEM_KEY_PREFIX + validate_key(key.strip()),
            fingerprint=fingerprint_of("bulk-item", shared_raw, item.raw),
            execute=execute,
        )
        return outcome.body  # type: ignore[no-any-return]
    except ApplicationError as exc:
        message = exc.message if isinstance(exc.message, str) else "; ".join(exc.message)
        return _failure(item, message)
