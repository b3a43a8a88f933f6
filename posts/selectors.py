"""Reads of posts, always scoped to one workspace."""

from __future__ import annotations

import datetime as dt
import functools
import json
from dataclasses import dataclass
from typing import Any

from django.db import connection

from core.errors import NotFound
from posts.models import Post, PostStatus
from posts.rendering import POST_FIELDS, TARGET_FIELDS

POST_NOT_FOUND = "Post not found or access denied"


def post_get_for_update(*, workspace_id: str, post_id: str) -> Post:
    """The post row locked until the caller's transaction ends (call inside one), or 404."""
    post = Post.objects.select_for_update().filter(workspace_id=workspace_id, id=post_id).first()
    if post is None:
        raise NotFound(POST_NOT_FOUND)
    return post


def post_status(*, workspace_id: str, post_id: str) -> str | None:
    """The post's status; None when this workspace has no such post (the caller's own lookup then
    answers 404, after the body was validated as for any post)."""
    status = Post.objects.filter(workspace_id=workspace_id, id=post_id).values_list("status", flat=True).first()
    return None if status is None else str(status)


def _instant(column: str) -> str:
    """SQL of a timestamp column as the API writes it (:func:`core.fields.format_instant`: UTC,
    always milliseconds, ``Z``; NULL stays NULL). PostgreSQL's ``to_char`` costs a fraction of
    parsing the instant into a datetime and formatting it again in Python."""
    return f"to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"


# The columns of a post row and of an entry row (``POST_FIELDS`` / ``TARGET_FIELDS``, in order):
# the values of ``.values(*POST_FIELDS)``, except that instants arrive formatted and JSON as text.
_POST_COLUMNS = {
    "id": "p.id",
    "status": "p.status",
    "content_type": "p.content_type",
    "text": "p.text",
    "timezone": "p.timezone",
    "scheduled_at": _instant("p.scheduled_at"),
    "media_urls": "p.media_urls",
    "media_alt_texts": "p.media_alt_texts",
    "thumbnail_url": "p.thumbnail_url",
    "late_policy": "p.late_policy",
    "max_lateness_seconds": "p.max_lateness_seconds",
    "thread": "p.thread",
    "first_comment": "p.first_comment",
    "recurring_post_id": "p.recurring_post_id",
    "occurrence_at": _instant("p.occurrence_at"),
    "created_by_id": "p.created_by_id",
    "created_at": _instant("p.created_at"),
    "updated_at": _instant("p.updated_at"),
    "unpublished_at": _instant("p.unpublished_at"),
}
_ACTION_JSON = (
    "jsonb_build_object('id', a.id, 'requestId', a.request_id, 'kind', a.kind, 'status', a.status,"
    " 'changes', a.changes, 'previous', a.previous, 'reason', a.reason, 'errorCode', a.error_code,"
    " 'errorMessage', a.error_message, 'requestedAt', "
    + _instant("a.created_at")
    + ", 'finishedAt', "
    + _instant("a.finished_at")
    + ")"
)
_ACTIONS_SQL = (
    "CASE WHEN t.last_action_at IS NULL THEN '[]' ELSE (SELECT coalesce(jsonb_agg("  # noqa: S608 (constant SQL)
    + _ACTION_JSON
    + " ORDER BY a.created_at, a.id), '[]') FROM posts_posttargetaction a WHERE a.target_id = t.id)::text END"
)
_TARGET_COLUMNS = {
    "id": "t.id",
    "post_id": "t.post_id",
    "platform": "t.platform",
    "status": "t.status",
    "account_id": "t.account_id",
    "page_id": "t.page_id",
    "account_name": "t.account_name",
    "text": "t.text",
    "platform_post_id": "t.platform_post_id",
    "post_url": "t.post_url",
    "error_message": "t.error_message",
    "error_code": "t.error_code",
    "published_at": _instant("t.published_at"),
    "tiktok_draft_fallback": "t.tiktok_draft_fallback",
    "config": "t.config",
    "thread_items": "t.thread_items",
    "comment_status": "t.comment_status",
    "first_comment": "t.first_comment",
    "first_comment_text": "t.first_comment_text",
    "media_fit": "t.media_fit",
    "created_at": _instant("t.created_at"),
    "updated_at": _instant("t.updated_at"),
    "unpublished_at": _instant("t.unpublished_at"),
    "last_action_at": _instant("t.last_action_at"),
    "media": "t.media",
    # An entry's edits and removals after publishing (read only for an entry that has any).
    "actions": _ACTIONS_SQL,
}
assert tuple(_POST_COLUMNS) == POST_FIELDS and tuple(_TARGET_COLUMNS) == TARGET_FIELDS
_JSON_FIELDS = frozenset(
    {"media_urls", "media_alt_texts", "config", "thread", "thread_items", "first_comment", "media", "actions"}
)  # jsonb: Django's connection reads it as text
_POST_SQL = ", ".join(_POST_COLUMNS.values())
_TARGET_SQL = ", ".join(_TARGET_COLUMNS.values())


def _rows(names: tuple[str, ...], records: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    rows = [dict(zip(names, record, strict=True)) for record in records]
    for row in rows:
        for name in _JSON_FIELDS.intersection(row):
            row[name] = json.loads(row[name])
    return rows


def _split(records: list[tuple[Any, ...]], skip: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows of ``skip`` leading columns, a post's columns and one of its entries' (NULLs for a post
    without entries) → the posts' rows in order (each once) and the entries' rows in order. The
    first column of each part is its id (the joined rows are told apart by it)."""
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
    return _rows(POST_FIELDS, posts), _rows(TARGET_FIELDS, targets)


# Built once here from the constant column lists above; every value is a parameter.
_ROWS_SQL = (
    f"SELECT {_POST_SQL}, {_TARGET_SQL} FROM posts_post p "  # noqa: S608 (constant columns, values are parameters)
    "LEFT JOIN posts_posttarget t ON t.post_id = p.id WHERE p.workspace_id = %s AND p.id = ANY(%s) "
    "ORDER BY p.id, t.created_at, t.id"  # TARGET_ORDER: the order of post.targets.all()
)


def post_rows(*, workspace_id: str, post_ids: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The ``POST_FIELDS`` rows of the workspace's posts among ``post_ids`` (by id; others are
    left out) and the ``TARGET_FIELDS`` rows of their entries (in ``post.targets.all()`` order),
    in one query."""
    with connection.cursor() as cursor:
        cursor.execute(_ROWS_SQL, [workspace_id, post_ids])
        return _split(cursor.fetchall(), 0)


def post_row(*, workspace_id: str, post_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``POST_FIELDS`` row of the post and the ``TARGET_FIELDS`` rows of its entries, or 404
    (for posts of other workspaces too)."""
    posts, targets = post_rows(workspace_id=workspace_id, post_ids=[post_id])
    if not posts:
        raise NotFound(POST_NOT_FOUND)
    return posts[0], targets


# The filters of the list, each written only when given: a statement carries only its own
# conditions (planning each statement is most of the cost of a short list's SQL, and conditions
# for filters not given cost planning time too).
_FILTERS = {
    "statuses": "p.status = ANY(%(statuses)s::text[])",
    "platforms": "EXISTS (SELECT 1 FROM posts_posttarget f WHERE f.post_id = p.id AND f.platform = ANY(%(platforms)s::text[]))",
    "start": "COALESCE(p.scheduled_at, p.created_at) >= %(start)s::timestamptz",
    "end": "COALESCE(p.scheduled_at, p.created_at) <= %(end)s::timestamptz",
}


# What a post's record is rendered from, as a stamp: the row version of the post, of each of its
# entries and of the media files its previews come from, each named by the transaction that wrote
# it (``xmin``) and where it lies (``ctid``: a transaction that writes a row twice leaves two
# versions with the same ``xmin``, never at the same place). Any write to any of them (the API,
# the pipeline's own SQL, a preview made later) gives the post a new stamp, and so does an entry
# added or removed.
_STAMP = (
    "page.row_version"
    " || coalesce((SELECT string_agg(t.xmin::text || t.ctid::text, ',' ORDER BY t.created_at, t.id)"
    " FROM posts_posttarget t WHERE t.post_id = page.id), '')"
    " || CASE WHEN page.media_urls = '[]'::jsonb THEN '' ELSE '|' || coalesce((SELECT string_agg("
    "m.xmin::text || m.ctid::text, ',' ORDER BY m.id) FROM media_mediafile m"
    " WHERE m.public_url IN (SELECT jsonb_array_elements_text(page.media_urls))), '') END"
)


@functools.cache
def _page_sql(filters: tuple[str, ...], direction: str) -> str:
    """The total is the workspace's PostCount unfiltered, else a count on the workspace's index;
    the page is the first ``limit`` rows of that index after ``offset``, each with its stamp and
    its stored record where that was rendered from the same stamp (``%(renderer)s`` names the code
    that rendered it). Built from the constant texts above, once per set of filters and direction."""
    where = " AND ".join(["p.workspace_id = %(workspace)s", *(_FILTERS[name] for name in filters)])
    # Unfiltered, the total is the workspace's PostCount (a few shard rows kept by triggers), not a
    # count over each of its posts; a filtered total still counts what matches.
    count = (
        f"SELECT count(*) AS total FROM posts_post p WHERE {where}"  # noqa: S608 (constant texts, values are parameters)
        if filters
        else "SELECT coalesce(sum(posts), 0) AS total FROM posts_postcount WHERE workspace_id = %(workspace)s"
    )
    return (
        f"WITH c AS ({count}), "  # noqa: S608 (constant texts, values are parameters)
        "page AS (SELECT p.id, p.created_at AS sort_at, p.xmin::text || p.ctid::text AS row_version, p.media_urls "
        f"FROM posts_post p WHERE {where} ORDER BY p.created_at {direction}, p.id {direction} "
        "LIMIT %(limit)s OFFSET %(offset)s), "
        f"stamped AS (SELECT page.id, page.sort_at, %(renderer)s || ':' || {_STAMP} AS stamp FROM page) "
        "SELECT c.total, stamped.id, stamped.stamp, (SELECT r.body FROM posts_postrecord r "
        "WHERE r.post_id = stamped.id AND r.stamp = stamped.stamp) FROM c LEFT JOIN stamped ON true "
        f"ORDER BY stamped.sort_at {direction}, stamped.id {direction}"
    )


@dataclass(frozen=True)
class PageEntry:
    post_id: str
    stamp: str
    body: str | None  # the stored record, when it was rendered from ``stamp``


@dataclass(frozen=True)
class PostPage:
    entries: list[PageEntry]
    total: int
    has_more: bool


def post_page(
    *,
    workspace_id: str,
    renderer: str,
    limit: int,
    offset: int,
    statuses: list[str] | None = None,
    platforms: list[str] | None = None,
    start: dt.datetime | None = None,
    end: dt.datetime | None = None,
    oldest_first: bool = False,
) -> PostPage:
    """A page of the workspace's posts, each with its stamp and its stored record where that is
    current (rendered by ``renderer`` from the rows as they are now), and their total, in one
    query. ``start``/``end`` (inclusive) bound ``scheduledAt``, or ``createdAt`` for posts never
    scheduled. Newest first by creation (ties: id descending); ``oldest_first`` is the exact reverse.

    Written as SQL: the list is the hottest read, and building it with the ORM (count, page,
    values, entries) cost several times the CPU of running it."""
    given: dict[str, Any] = {
        "statuses": list(statuses) if statuses else None,
        "platforms": list(platforms) if platforms else None,
        "start": start,
        "end": end,
    }
    filters = tuple(name for name, value in given.items() if value is not None)
    params = {name: given[name] for name in filters}
    params.update(workspace=workspace_id, limit=limit, offset=offset, renderer=renderer)
    with connection.cursor() as cursor:
        cursor.execute(_page_sql(filters, "ASC" if oldest_first else "DESC"), params)
        records = cursor.fetchall()
    total = int(records[0][0])
    # No post on the page: the one row carries the total and NULLs.
    entries = [PageEntry(post_id, stamp, body) for _, post_id, stamp, body in records if post_id is not None]
    return PostPage(entries=entries, total=total, has_more=offset + len(entries) < total)


def oldest_due_scheduled_at(now: dt.datetime) -> dt.datetime | None:
    """When the oldest SCHEDULED post that is due at ``now`` was due (None when none is): what
    /readyz and /metrics call the scheduler's lag. One read on the partial index of due posts."""
    return (
        Post.objects.filter(status=PostStatus.SCHEDULED, scheduled_at__lte=now)
        .order_by("scheduled_at")
        .values_list("scheduled_at", flat=True)
        .first()
    )
