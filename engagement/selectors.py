"""Reads of the inbox, always of one workspace: another workspace's comment or post is a 404."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Min, Q
from django.utils import timezone

from accounts.models import AccountStatus
from core.errors import NotFound, ValidationFailed
from core.fields import format_instant
from engagement.models import ActionStatus, Comment, CommentAction, CommentSource
from engagement.records import ACTION_COLUMNS, COMMENT_COLUMNS, action_record, comment_record
from posts.models import Post, PostTarget

COMMENT_NOT_FOUND = "Comment not found"
POST_NOT_FOUND = "Post not found or access denied"
CURSOR_HELP = "after must be a nextCursor returned by GET /comments"
# The most comments of one entry a tree holds (``truncated`` says when there were more).
TREE_LIMIT = 2000


@dataclass(frozen=True)
class CommentPage:
    items: list[dict[str, Any]]
    next_cursor: str | None
    has_more: bool


def _encode(row: dict[str, Any]) -> str:
    raw = f"{row['created_at'].isoformat()}|{row['id']}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(cursor: str) -> tuple[dt.datetime, str]:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        instant, _, comment_id = text.partition("|")
        parsed = dt.datetime.fromisoformat(instant)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValidationFailed([CURSOR_HELP]) from None
    if not comment_id or parsed.tzinfo is None:
        raise ValidationFailed([CURSOR_HELP])
    return parsed, comment_id


def comment_page(
    *,
    workspace_id: str,
    limit: int,
    after: str | None = None,
    account_id: str | None = None,
    platforms: list[str] | None = None,
    post_id: str | None = None,
    unanswered: bool | None = None,
    hidden: bool | None = None,
    since: dt.datetime | None = None,
    q: str | None = None,
) -> CommentPage:
    """The workspace's comments (deleted ones left out), newest first by ``createdAt`` (ties by id),
    ``limit`` of them after the cursor: one query (a row more than the page says whether more
    follow). ``unanswered``: others' comments without a reply of the account's (true) or with one
    (false)."""
    comments = Comment.objects.filter(workspace_id=workspace_id, deleted_at__isnull=True)
    if account_id is not None:
        comments = comments.filter(account_id=account_id)
    if platforms:
        comments = comments.filter(platform__in=platforms)
    if post_id is not None:
        comments = comments.filter(post_id=post_id)
    if unanswered is True:
        comments = comments.filter(answered=False, from_account=False)
    elif unanswered is False:
        comments = comments.filter(answered=True)
    if hidden is not None:
        comments = comments.filter(hidden=hidden)
    if since is not None:
        comments = comments.filter(created_at__gte=since)
    if q:
        comments = comments.filter(Q(text__icontains=q) | Q(author_name__icontains=q) | Q(author_handle__icontains=q))
    if after is not None:
        instant, comment_id = _decode(after)
        comments = comments.filter(Q(created_at__lt=instant) | Q(created_at=instant, id__lt=comment_id))
    rows = list(comments.order_by("-created_at", "-id").values(*COMMENT_COLUMNS)[: limit + 1])
    items, has_more = rows[:limit], len(rows) > limit
    return CommentPage(
        items=[comment_record(row) for row in items],
        next_cursor=_encode(items[-1]) if items else after,
        has_more=has_more,
    )


def comment_row(*, workspace_id: str, comment_id: str) -> dict[str, Any]:
    """One comment of the workspace as its row (404 otherwise)."""
    row = Comment.objects.filter(workspace_id=workspace_id, id=comment_id).values(*COMMENT_COLUMNS).first()
    if row is None:
        raise NotFound(COMMENT_NOT_FOUND)
    return row


def comment_detail(*, workspace_id: str, comment_id: str) -> dict[str, Any]:
    """The comment's record with ``actions``: every action asked for on it, oldest first. Two queries."""
    row = comment_row(workspace_id=workspace_id, comment_id=comment_id)
    actions = CommentAction.objects.filter(comment_id=comment_id).order_by("created_at", "id").values(*ACTION_COLUMNS)
    return {**comment_record(row), "actions": [action_record(a) for a in actions]}


def action_body(*, action_id: str) -> dict[str, Any]:
    row = CommentAction.objects.filter(id=action_id).values(*ACTION_COLUMNS).get()
    return action_record(row)


def build_tree(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Comment records (oldest first) as a forest: each with ``replies`` (its direct replies, the same
    way down). A reply whose parent is not among them (not stored, or deleted) stands at the top."""
    nodes = {record["id"]: {**record, "replies": []} for record in records}
    roots: list[dict[str, Any]] = []
    for record in records:
        node = nodes[record["id"]]
        parent = nodes.get(record["parentId"]) if record["parentId"] else None
        if parent is None or parent is node:
            roots.append(node)
        else:
            parent["replies"].append(node)
    return roots


def post_comment_tree(*, workspace_id: str, post_id: str) -> dict[str, Any]:
    """``{postId, entries}``: every entry of the post, in its order, with its comments as a tree
    (oldest first at every level, ties in the platform's id order; deleted ones left out), when its comments were last read
    (``lastSyncedAt``, null: never) and whether the tree stopped at ``TREE_LIMIT`` comments. Three
    queries whatever the number of entries and comments."""
    if not Post.objects.filter(workspace_id=workspace_id, id=post_id).exists():
        raise NotFound(POST_NOT_FOUND)
    entries = list(
        PostTarget.objects.filter(post_id=post_id)
        .order_by("created_at", "id")
        .values("id", "platform", "account_id", "platform_post_id")
    )
    synced = dict(
        CommentSource.objects.filter(target_id__in=[e["id"] for e in entries]).values_list(
            "target_id", "last_synced_at"
        )
    )
    rows = Comment.objects.filter(post_id=post_id, deleted_at__isnull=True).order_by(
        "created_at", "platform_comment_id"
    )
    by_entry: dict[str, list[dict[str, Any]]] = {}
    for row in rows.values(*COMMENT_COLUMNS)[: TREE_LIMIT * max(len(entries), 1) + 1]:
        by_entry.setdefault(row["target_id"], []).append(comment_record(row))
    body = []
    for entry in entries:
        records = by_entry.get(entry["id"], [])
        last = synced.get(entry["id"])
        body.append(
            {
                "platformId": entry["id"],
                "platform": entry["platform"],
                "accountId": entry["account_id"],
                "platformPostId": entry["platform_post_id"] or None,
                "lastSyncedAt": format_instant(last),
                "truncated": len(records) > TREE_LIMIT,
                "comments": build_tree(records[:TREE_LIMIT]),
            }
        )
    return {"postId": post_id, "entries": body}


# --- the staff dashboard and /metrics -------------------------------------------------------------


@dataclass(frozen=True)
class InboxState:
    """How far behind the comment syncs are and what waits: sources due and not read yet (of
    connected accounts) and how long the oldest has waited; others' comments without an answer
    and how long the oldest has waited since it was found; actions not done yet."""

    due_sources: int
    sync_lag_seconds: float
    unanswered: int
    oldest_unanswered_seconds: float
    open_actions: int


def inbox_state(*, workspace_id: str | None = None, now: dt.datetime | None = None) -> InboxState:
    """Three aggregates over partial indexes, whatever the data."""
    now = now or timezone.now()
    sources = CommentSource.objects.filter(next_due_at__lte=now, account__status=AccountStatus.ACTIVE)
    waiting = Comment.objects.filter(answered=False, from_account=False, deleted_at__isnull=True)
    actions = CommentAction.objects.filter(status__in=[ActionStatus.PENDING, ActionStatus.SENDING])
    if workspace_id is not None:
        sources = sources.filter(workspace_id=workspace_id)
        waiting = waiting.filter(workspace_id=workspace_id)
        actions = actions.filter(workspace_id=workspace_id)
    due = sources.aggregate(count=Count("pk"), oldest=Min("next_due_at"))
    backlog = waiting.aggregate(count=Count("pk"), oldest=Min("first_seen_at"))
    return InboxState(
        due_sources=due["count"],
        sync_lag_seconds=(now - due["oldest"]).total_seconds() if due["oldest"] else 0.0,
        unanswered=backlog["count"],
        oldest_unanswered_seconds=(now - backlog["oldest"]).total_seconds() if backlog["oldest"] else 0.0,
        open_actions=actions.count(),
    )
