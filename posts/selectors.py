"""Reads of posts, always scoped to one workspace."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db import connection, models

from core.errors import NotFound
from posts.models import Post, PostStatus, PostTarget
from posts.rendering import POST_FIELDS, TARGET_FIELDS, TARGET_ORDER

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


def _select(field: Any, alias: str) -> str:
    column = f'{alias}."{field.column}"'
    if not isinstance(field, models.DateTimeField):
        return column
    utc = f"{column} AT TIME ZONE 'UTC'"
    # Milliseconds truncated like isoformat(timespec="milliseconds"); NULL stays NULL.
    return (
        f"to_char({utc}, 'YYYY-MM-DD\"T\"HH24:MI:SS') || CASE WHEN mod(extract(microseconds FROM {column})::bigint, "
        f"1000000) <> 0 THEN to_char({utc}, '.MS') ELSE '' END || 'Z'"
    )


# Most JSON values of a post row are empty: made directly (a new object each time) rather than parsed.
_EMPTY_JSON: dict[str, type[list[Any]] | type[dict[str, Any]]] = {"[]": list, "{}": dict}


class _Columns:
    """The SQL of a model's fields read as rows like ``.values()``, and the conversions the ORM
    would apply to them (``from_db_value``: the JSON fields), so a row read here equals the ORM's,
    except that instants arrive already formatted as the API renders them
    (:func:`core.fields.format_instant`: UTC, milliseconds when not whole seconds, ``Z``):
    PostgreSQL's ``to_char`` costs a fraction of parsing them into datetimes and formatting them
    again in Python."""

    def __init__(self, model: type[Post] | type[PostTarget], names: tuple[str, ...], alias: str) -> None:
        fields = [model._meta.get_field(name) for name in names]
        self.names = names
        self.sql = ", ".join(_select(field, alias) for field in fields)
        self.converters = [
            (index, field.from_db_value)  # type: ignore[union-attr]
            for index, field in enumerate(fields)
            if hasattr(field, "from_db_value")
        ]

    def rows(self, records: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
        rows = []
        for record in records:
            values = list(record)
            for index, convert in self.converters:
                value = values[index]
                empty = _EMPTY_JSON.get(value) if isinstance(value, str) else None
                values[index] = empty() if empty is not None else convert(value, None, connection)
            rows.append(dict(zip(self.names, values, strict=True)))
        return rows


_POST_TABLE = Post._meta.db_table
_TARGET_TABLE = PostTarget._meta.db_table
_post_columns = _Columns(Post, POST_FIELDS, "p")
_target_columns = _Columns(PostTarget, TARGET_FIELDS, "t")
_TARGET_ORDER_SQL = ", ".join(
    f't."{PostTarget._meta.get_field(name).column}"'  # type: ignore[union-attr]
    for name in TARGET_ORDER
)


assert POST_FIELDS[0] == TARGET_FIELDS[0] == "id"  # the joined rows below are told apart by their ids


def _split(records: list[tuple[Any, ...]], skip: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows of ``skip`` leading columns, a post's columns and one of its entries' (NULLs for a post
    without entries) → the posts' rows in order (each once) and the entries' rows in order."""
    split = skip + len(POST_FIELDS)
    posts: list[tuple[Any, ...]] = []
    targets: list[tuple[Any, ...]] = []
    last = None
    for record in records:
        post_id = record[skip]
        if post_id is None:
            continue
        if post_id != last:
            posts.append(record[skip:split])
            last = post_id
        if record[split] is not None:
            targets.append(record[split:])
    return _post_columns.rows(posts), _target_columns.rows(targets)


def post_row(*, workspace_id: str, post_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``POST_FIELDS`` row of the post and the ``TARGET_FIELDS`` rows of its entries (in
    ``post.targets.all()`` order), in one query; 404 for posts of other workspaces too."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {_post_columns.sql}, {_target_columns.sql} FROM {_POST_TABLE} p "
            f"LEFT JOIN {_TARGET_TABLE} t ON t.post_id = p.id WHERE p.workspace_id = %s AND p.id = %s "
            f"ORDER BY {_TARGET_ORDER_SQL}",
            [workspace_id, post_id],
        )
        posts, targets = _split(cursor.fetchall(), 0)
    if not posts:
        raise NotFound(POST_NOT_FOUND)
    return posts[0], targets


@dataclass(frozen=True)
class PostPage:
    rows: list[dict[str, Any]]  # POST_FIELDS rows
    targets: list[dict[str, Any]]  # TARGET_FIELDS rows of their entries
    total: int
    has_more: bool


def post_page(
    *,
    workspace_id: str,
    limit: int,
    offset: int,
    statuses: list[str] | None = None,
    platforms: list[str] | None = None,
    start: dt.datetime | None = None,
    end: dt.datetime | None = None,
    oldest_first: bool = False,
) -> PostPage:
    """A page of the workspace's posts, their entries and their total, in one query. ``start``/``end``
    (inclusive) bound ``scheduledAt``, or ``createdAt`` for posts never scheduled. Newest first
    by creation (ties: id descending); ``oldest_first`` is the exact reverse.

    Written as SQL: the list is the hottest read, and building it with the ORM (count, page,
    values, entries) cost several times the CPU of running it."""
    where = ["p.workspace_id = %s"]
    params: list[Any] = [workspace_id]
    if statuses:
        where.append("p.status = ANY(%s)")
        params.append(list(statuses))
    if platforms:
        where.append(f"EXISTS (SELECT 1 FROM {_TARGET_TABLE} t WHERE t.post_id = p.id AND t.platform = ANY(%s))")
        params.append(list(platforms))
    if start is not None:
        where.append("COALESCE(p.scheduled_at, p.created_at) >= %s")
        params.append(start)
    if end is not None:
        where.append("COALESCE(p.scheduled_at, p.created_at) <= %s")
        params.append(end)
    condition = " AND ".join(where)
    direction = "ASC" if oldest_first else "DESC"
    # The count reads the workspace's index only; the page is the first ``limit`` rows of the
    # same index after ``offset``, joined to its entries (each post's row repeats per entry).
    sql = (
        f"WITH c AS (SELECT count(*) AS total FROM {_POST_TABLE} p WHERE {condition}), "
        f"page AS (SELECT p.created_at AS sort_at, {_post_columns.sql} FROM {_POST_TABLE} p WHERE {condition} "
        f"ORDER BY p.created_at {direction}, p.id {direction} LIMIT %s OFFSET %s) "
        f"SELECT c.total, page.*, {_target_columns.sql} FROM c LEFT JOIN page ON true "
        f"LEFT JOIN {_TARGET_TABLE} t ON t.post_id = page.id "
        f"ORDER BY page.sort_at {direction}, page.id {direction}, {_TARGET_ORDER_SQL}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *params, limit, offset])
        records = cursor.fetchall()
    total = int(records[0][0])
    # No post on the page: the one row carries the total and NULLs.
    rows, targets = _split(records, 2)
    return PostPage(rows=rows, targets=targets, total=total, has_more=offset + len(rows) < total)


def oldest_due_scheduled_at(now: dt.datetime) -> dt.datetime | None:
    """When the oldest SCHEDULED post that is due at ``now`` was due (None when none is): what
    /readyz and /metrics call the scheduler's lag. One read on the partial index of due posts."""
    return (
        Post.objects.filter(status=PostStatus.SCHEDULED, scheduled_at__lte=now)
        .order_by("scheduled_at")
        .values_list("scheduled_at", flat=True)
        .first()
    )
