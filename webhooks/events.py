"""The events outbox (DESIGN.md §7). Owned by the webhooks app; every other app calls
``emit_event`` inside its own transaction."""

from __future__ import annotations

from typing import Any

EVENT_NAMES = (
    "post.published",
    "post.partially_failed",
    "post.failed",
    "post.scheduled",
    "account.unauthorized",
    "image.completed",
    "image.failed",
    "webhook.test",
)


def emit_event(*, workspace_id: str, name: str, data: dict[str, Any]) -> None:
    """Record event ``name`` with ``data`` for every active webhook of the workspace, in the
    caller's transaction; deliveries are enqueued after commit."""
    raise NotImplementedError("implemented by the webhooks issue")
