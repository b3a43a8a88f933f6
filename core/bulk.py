"""Many rows in one statement with one parameter.

Django 5.2's ``bulk_create`` on PostgreSQL sends one array per column (``UNNEST``); under the
client-side binding Django uses with psycopg 3, the driver writes each array as a literal, quoting
every element in Python. For rows with long text (an event's envelope, a post's text) that is most
of the statement's cost. Here the rows travel as one JSON document, serialized by the ``json``
module's C encoder and quoted once by libpq, and PostgreSQL unpacks it with
``jsonb_to_recordset``. The publishing hot path's writes use it (events, deliveries, tracked posts,
the outcome and "started sending" updates); everything else keeps the ORM's ``bulk_create``.

Only public API: the model's ``_meta`` (documented), each field's ``pre_save`` /
``get_prep_value`` / ``db_type``, the connection's ``quote_name``."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, models


class _RowEncoder(DjangoJSONEncoder):
    def default(self, o: Any) -> Any:
        if isinstance(o, dt.datetime):
            return o.isoformat()  # every microsecond (Django's encoder keeps milliseconds): leases are compared
        return super().default(o)


def rows_param(rows: Sequence[dict[str, Any]]) -> str:
    """Rows as one statement parameter: a JSON array for ``jsonb_to_recordset(%s::jsonb)``. A key
    left out, or None, reads as NULL; a JSON value stays JSON (a ``jsonb`` column of the record)."""
    return json.dumps(rows, cls=_RowEncoder, separators=(",", ":"))


def insert(
    objs: Sequence[models.Model],
    *,
    unique_fields: Sequence[str] = (),
    update_fields: Sequence[str] = (),
) -> None:
    """``INSERT`` the unsaved instances ``objs`` (one model, primary keys set by their defaults) in one
    statement, as ``bulk_create`` would: every concrete column, ``auto_now_add`` filled. With
    ``unique_fields`` and ``update_fields``: ``ON CONFLICT (unique) DO UPDATE`` those fields, like
    ``bulk_create(update_conflicts=True, ...)``."""
    if not objs:
        return
    meta = type(objs[0])._meta
    fields = list(meta.concrete_fields)
    quote = connection.ops.quote_name
    rows = [{_column(field): field.get_prep_value(field.pre_save(obj, add=True)) for field in fields} for obj in objs]
    columns = ", ".join(quote(_column(field)) for field in fields)
    record = ", ".join(f"{quote(_column(field))} {field.db_type(connection)}" for field in fields)
    table = quote(meta.db_table)
    sql = f"INSERT INTO {table} ({columns}) SELECT {columns} FROM jsonb_to_recordset(%s::jsonb) AS v({record})"  # noqa: S608 (the model's quoted names)
    if unique_fields:
        conflict = ", ".join(quote(_column(meta.get_field(name))) for name in unique_fields)
        updates = ", ".join(
            f"{quote(_column(meta.get_field(name)))} = EXCLUDED.{quote(_column(meta.get_field(name)))}"
            for name in update_fields
        )
        sql += f" ON CONFLICT ({conflict}) DO UPDATE SET {updates}"
    with connection.cursor() as cursor:
        cursor.execute(sql, [rows_param(rows)])


def _column(field: Any) -> str:
    column = getattr(field, "column", None)
    if not isinstance(column, str):
        raise TypeError(f"{field!r} has no column of its own")
    return column
