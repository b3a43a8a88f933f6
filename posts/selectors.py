"""Reads of posts, always scoped to one workspace."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Exists, OuterRef, QuerySet
from django.db.models.functions import Coalesce

from core.errors import NotFound
from posts.models import Post, PostTarget

POST_NOT_FOUND = "Post not found or access denied"


def post_get(*, workspace_id: str, post_id: str) -> Post:
    """The post with its targets, or 404 (posts of other workspaces included)."""
    post = Post.objects.filter(workspace_id=workspace_id, id=post_id).prefetch_related("targets").first()
    if post is None:
        raise NotFound(POST_NOT_FOUND)
    return post


def post_get_for_update(*, workspace_id: str, post_id: str) -> Post:
    """The post row locked until the caller's transaction ends (call inside one), or 404."""
    post = Post.objects.select_for_update().filter(workspace_id=workspace_id, id=post_id).first()
    if post is None:
        raise NotFound(POST_NOT_FOUND)
    return post


def post_list(
    *,
    workspace_id: str,
    statuses: list[str] | None = None,
    platforms: list[str] | None = None,
    start: dt.datetime | None = None,
    end: dt.datetime | None = None,
    oldest_first: bool = False,
) -> QuerySet[Post]:
    """Posts of the workspace. ``start``/``end`` (inclusive) bound ``scheduledAt``, or
    ``createdAt`` for posts never scheduled. Newest first by creation (ties: id descending);
    ``oldest_first`` is the exact reverse."""
    queryset = Post.objects.filter(workspace_id=workspace_id)
    if statuses:
        queryset = queryset.filter(status__in=statuses)
    if platforms:
        queryset = queryset.filter(Exists(PostTarget.objects.filter(post_id=OuterRef("pk"), platform__in=platforms)))
    if start is not None or end is not None:
        queryset = queryset.alias(moment=Coalesce("scheduled_at", "created_at"))
        bounds: dict[str, Any] = {}
        if start is not None:
            bounds["moment__gte"] = start
        if end is not None:
            bounds["moment__lte"] = end
        queryset = queryset.filter(**bounds)
    order = ["created_at", "id"] if oldest_first else ["-created_at", "-id"]
    return queryset.order_by(*order)
