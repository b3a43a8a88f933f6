"""Offset pagination: ``{<items>: [...], total, hasMore}``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from rest_framework import serializers

from core import serializers as strict

# The API has three pagination styles (each named in the descriptions of the operations using it):
OFFSET_PAGINATION = (
    "**Pagination (offset):** `limit` (1 to 100, default 20) items from `offset` (default 0); the answer's "
    "`total` counts every match and `hasMore` is true while items follow this page: ask again with "
    "`offset` + the number of items received."
)
PAGE_PAGINATION = (
    "**Pagination (page):** page number `page` (from 1) of `limit` (1 to 100, default 20) items; the answer "
    "repeats `page` and `limit`, `total` counts every match and `hasMore` is true while a next page "
    "(`page` + 1) holds items."
)
CURSOR_PAGINATION = (
    "**Pagination (cursor):** pass the answer's `nextCursor` back as `after`; `hasMore` is true while more "
    "items already follow, false once caught up (keep the cursor to poll later). No `total`: the feed grows."
)
LIMIT_HELP = "Items per page (1 to 100, default 20)."
OFFSET_HELP = "How many items to skip (default 0): the previous `offset` plus the items received."
TOTAL_HELP = "How many items match, on every page together."
HAS_MORE_HELP = "true while more items follow this page."


class OffsetQuery(strict.QuerySerializer):
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20, help_text=LIMIT_HELP)
    offset = serializers.IntegerField(min_value=0, default=0, max_value=10_000_000, help_text=OFFSET_HELP)


@dataclass(frozen=True)
class Page:
    items: list[Any]
    total: int
    has_more: bool


def paginate(queryset: QuerySet[Any], *, limit: int, offset: int) -> Page:
    """Two queries whatever the page size: the count and the page."""
    total = queryset.count()
    items = list(queryset[offset : offset + limit]) if offset < total else []
    return Page(items=items, total=total, has_more=offset + len(items) < total)
