"""Response bodies declared once: for every key, what the OpenAPI description shows and how the
value is read from a row. The hot paths render with :meth:`Record.render` (a dict comprehension,
no serializer machinery per item); the description documents :meth:`Record.serializer`, built
from the same declaration, so the body and its schema cannot drift apart.

A body whose keys depend on the row (a post's platform entry carries its platform's config values)
is several records merged: each renders its keys, the serializer documents the union."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from operator import itemgetter
from typing import Any, NamedTuple

from rest_framework import serializers

from core.fields import format_instant

Reader = Callable[[Any], Any]


class Key(NamedTuple):
    """One key of a body: its documented field and how its value is read from the row."""

    schema: serializers.Field
    read: Reader


class Record:
    """An ordered set of keys. ``render(row)`` is the body of one row."""

    def __init__(self, keys: Mapping[str, Key]) -> None:
        self.keys = dict(keys)
        self._readers = tuple((name, key.read) for name, key in self.keys.items())

    def render(self, row: Any) -> dict[str, Any]:
        return {name: read(row) for name, read in self._readers}

    def serializer(self, name: str, *more: Record) -> type:
        """The serializer class the description documents, named ``name``: this record's keys,
        then those of ``more`` (keys present in some bodies only are declared ``required=False``)."""
        fields: dict[str, serializers.Field] = {}
        for record in (self, *more):
            for key_name, key in record.keys.items():
                if key_name not in fields:
                    # A copy made now, in body order: a serializer orders its declared fields by
                    # when each was made, and a key may be documented by several serializers.
                    fields[key_name] = copy.deepcopy(key.schema)
        return type(name, (serializers.Serializer,), fields)


# --- readers ---------------------------------------------------------------------------------


def column(name: str) -> Reader:
    """The row's value as it is."""
    return itemgetter(name)


def text_or_none(name: str) -> Reader:
    """A text column stored as "" when absent, answered as null."""
    return lambda row: row[name] or None


def listed(name: str) -> Reader:
    """An array column (or JSON list) answered as a list, never null."""
    return lambda row: list(row[name] or [])


def instant(name: str) -> Reader:
    """A datetime answered as CONTRACT.md's instant; rows read by the selectors carry it already
    formatted."""

    def read(row: Any) -> str | None:
        value = row[name]
        return value if value is None or isinstance(value, str) else format_instant(value)

    return read


def id_text(name: str) -> Reader:
    """A nullable integer id answered as a string."""
    return lambda row: None if row[name] is None else str(row[name])
