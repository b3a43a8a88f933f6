"""Offset pagination (``{<items>: [...], total, hasMore}``) and cursor pagination, newest first
(``{<items>: [...], nextCursor, hasMore}``)."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet
from rest_framework import serializers

from core import serializers as strict
from core.errors import ValidationFailed

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


# --- cursor pagination, newest first: the cursor is the last item's (created_at, id) ----------------


@dataclass(frozen=True)
class CursorPage:
    items: list[Any]
    next_cursor: str | None
    has_more: bool


def encode_cursor(created_at: dt.datetime, item_id: str) -> str:
    raw = f"{created_at.isoformat()}|{item_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, *, invalid: str) -> tuple[dt.datetime, str]:
    """(created_at, id) of a cursor of :func:`encode_cursor`; 400 with the message ``invalid``
    (naming the operation whose ``nextCursor`` it must be) for anything else."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        instant, _, item_id = text.partition("|")
        parsed = dt.datetime.fromisoformat(instant)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValidationFailed([invalid]) from None
    if not item_id or parsed.tzinfo is None:
        raise ValidationFailed([invalid])
    return parsed, item_id


def newest_first_page(queryset: QuerySet[Any], *, limit: int, after: str | None, invalid: str) -> CursorPage:
    """``limit`` rows of ``queryset`` (a model with ``created_at`` and a text ``id``), newest first,
    older than the cursor ``after``: one query, a row more than the page saying whether more
    follow. Rows made later never shift a page (keyset, not offset)."""
    if after is not None:
        instant, item_id = decode_cursor(after, invalid=invalid)
        queryset = queryset.filter(Q(created_at__lt=instant) | Q(created_at=instant, id__lt=item_id))
    rows = list(queryset.order_by("-created_at", "-id")[: limit + 1])
    items, has_more = rows[:limit], len(rows) > limit
    next_cursor = encode_cursor(items[-1].created_at, items[-1].id) if items else after
    return CursorPage(items=items, next_cursor=next_cursor, has_more=has_more)
