"""Offset pagination: ``{<items>: [...], total, hasMore}``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from rest_framework import serializers

from core import serializers as strict


class OffsetQuery(strict.QuerySerializer):
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20)
    offset = serializers.IntegerField(min_value=0, default=0, max_value=10_000_000)


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
