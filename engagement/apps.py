from __future__ import annotations

from django.apps import AppConfig
from django.db import DatabaseError

from core import metrics

# (gauge, InboxState attribute, help)
GAUGES = (
    (
        "crosspost_comment_sync_lag_seconds",
        "sync_lag_seconds",
        "How long the oldest due comment source (a published entry, a review feed) has waited to be read",
    ),
    ("crosspost_comment_sync_due_sources", "due_sources", "Comment sources due and not read yet"),
    ("crosspost_comments_unanswered", "unanswered", "Others' comments without a reply of the account's"),
    (
        "crosspost_comments_oldest_unanswered_seconds",
        "oldest_unanswered_seconds",
        "How long the oldest unanswered comment has waited since a sync found it",
    ),
    ("crosspost_comment_actions_open", "open_actions", "Comment actions (reply, hide, ...) not done yet"),
)


def inbox_gauges() -> list[tuple[str, str, float]]:
    """The inbox's figures for /metrics (none while the database cannot be read)."""
    from engagement.selectors import inbox_state  # noqa: PLC0415 -- models load only once apps are ready

    try:
        state = inbox_state()
    except DatabaseError:
        return []
    return [(name, help_text, float(getattr(state, attribute))) for name, attribute, help_text in GAUGES]


class EngagementConfig(AppConfig):
    name = "engagement"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # /metrics reports the comment sync's lag and the inbox's backlog; core asks this app.
        metrics.register_live_gauges(inbox_gauges)
