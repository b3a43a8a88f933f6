"""Bulk seeding with ``INSERT … SELECT … FROM generate_series`` (never the API).

``insert_select`` writes every concrete column of a model: the expressions given, else the field's
Python default (prepared by the field itself: JSON, encrypted text), else ``now()`` for NOT NULL
timestamps. So a column added later by another app does not break the seeding. ``bulk_load``
drops a table's secondary indexes and constraints for the load and rebuilds them after, which
is several times faster than maintaining them row by row."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from django.db import connection, models

from accounts.models import SocialAccount
from core.crypto import encrypt
from workspaces.models import Organization, Workspace


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def insert_select(model: type[models.Model], *, source: str, exprs: dict[str, str], params: Any = None) -> int:
    """``INSERT INTO <model table> (<every column>) SELECT <exprs…> FROM <source>``; returns rows."""
    columns: list[str] = []
    selects: list[str] = []
    args: dict[str, Any] = dict(params or {})
    for field in model._meta.concrete_fields:
        assert field.column is not None
        if field.column not in exprs and isinstance(field, models.AutoField | models.BigAutoField):
            continue  # a serial primary key fills itself
        columns.append(_q(field.column))
        if field.column in exprs:
            selects.append(exprs[field.column])
            continue
        default = field.get_default() if field.has_default() else None
        if default is None and not field.null and isinstance(field, models.DateTimeField):
            selects.append("now()")
            continue
        key = f"default_{field.column}"
        args[key] = field.get_db_prep_save(default, connection)
        selects.append(f"%({key})s")
    sql = f"INSERT INTO {_q(model._meta.db_table)} ({', '.join(columns)}) SELECT {', '.join(selects)} FROM {source}"
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit TO off")
        cursor.execute(sql, args)
        return int(cursor.rowcount)


@contextlib.contextmanager
def bulk_load(model: type[models.Model]) -> Iterator[None]:
    """Drop the table's secondary indexes and non-primary-key constraints, yield, rebuild them."""
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conrelid = %s::regclass AND contype <> 'p'",
            [table],
        )
        constraints = cursor.fetchall()
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s "
            "AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass)",
            [table, table],
        )
        indexes = cursor.fetchall()
        for name, _ in constraints:
            cursor.execute(f"ALTER TABLE {_q(table)} DROP CONSTRAINT {_q(name)}")
        for name, _ in indexes:
            cursor.execute(f"DROP INDEX {_q(name)}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET maintenance_work_mem TO '256MB'")
            for _, definition in indexes:
                cursor.execute(definition)
            for name, definition in constraints:
                cursor.execute(f"ALTER TABLE {_q(table)} ADD CONSTRAINT {_q(name)} {definition}")
            cursor.execute(f"ANALYZE {_q(table)}")


class Timer:
    def __init__(self) -> None:
        self.started = time.monotonic()

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started


def workspaces(prefix: str, count: int) -> list[str]:
    """``count`` workspaces with ids ``ws_<prefix>_<n>``, all of one organization; returns the ids
    in order."""
    organization, _ = Organization.objects.get_or_create(name=f"bench {prefix}")
    insert_select(
        Workspace,
        source=f"generate_series(0, {count - 1}) g",
        exprs={"id": f"'ws_{prefix}_' || g", "name": f"'bench {prefix} ' || g", "organization_id": "%(organization)s"},
        params={"organization": organization.id},
    )
    return [f"ws_{prefix}_{n}" for n in range(count)]


def accounts(prefix: str, workspace_count: int, platforms: list[str], *, extra_first: list[str] | None = None) -> None:
    """One account per platform in each workspace ``ws_<prefix>_<n>`` (ids ``acc_<prefix>_<n>_<k>``),
    tokens encrypted like real ones (they are not valid on any simulator). The first workspace
    gets ``extra_first`` platforms too."""
    token = encrypt("sbx-bench-not-a-real-token")
    for k, platform in enumerate(platforms):
        _accounts(prefix, f"generate_series(0, {workspace_count - 1}) g", k, platform, token)
    for k, platform in enumerate(extra_first or [], start=len(platforms)):
        _accounts(prefix, "generate_series(0, 0) g", k, platform, token)


def _accounts(prefix: str, source: str, k: int, platform: str, token: str) -> None:
    insert_select(
        SocialAccount,
        source=source,
        exprs={
            "id": f"'acc_{prefix}_' || g || '_{k}'",
            "workspace_id": f"'ws_{prefix}_' || g",
            "platform": "%(platform)s",
            "external_id": f"'ext-{prefix}-' || g || '-{k}'",
            "display_name": f"'{platform.title()} ' || g",
            "username": f"'user{k}_' || g",
            "access_token": "%(token)s",
        },
        params={"platform": platform, "token": token},
    )


def analyze() -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def settle(*models: type[models.Model]) -> None:
    """VACUUM (ANALYZE) freshly loaded tables, as autovacuum would have long since done to rows this
    old: their visibility map set (index-only scans read no heap pages), and no autovacuum of
    millions of rows starting in the middle of the measurements."""
    with connection.cursor() as cursor:
        for model in models:
            cursor.execute(f"VACUUM (ANALYZE) {_q(model._meta.db_table)}")
