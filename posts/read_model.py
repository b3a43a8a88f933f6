"""The list's read model: every post's record stored as the JSON the API answers, with the stamp
of the rows it was rendered from (:data:`posts.selectors._STAMP`: the row versions of the post,
its entries and its media files). A list reads the stored record of each post on its page where
the stamp still matches and renders, then stores, only the others. So a list of posts that have
not changed costs one query and no rendering, and no writer (the API, the pipeline's own SQL, a
preview made later) has to know the read model exists: whatever it writes changes the stamp.

The stamp also names the renderer (:func:`renderer`), so a release that renders records
differently never answers a record stored by another."""

from __future__ import annotations

import functools
import hashlib
import inspect
from typing import Any

import rest_framework
from rest_framework.renderers import JSONRenderer

import core.fields
import core.records
import media.selectors
from media.storage import get_media_storage
from posts import rendering
from posts.models import PostRecord
from posts.selectors import PostPage, post_rows

_JSON = JSONRenderer()


@functools.cache
def renderer() -> str:
    """A short name of the code and settings a record is rendered with: the source of the
    modules that render it, the JSON renderer's version and the address previews are served from."""
    digest = hashlib.sha256(rest_framework.VERSION.encode())
    for module in (core.records, core.fields, rendering, media.selectors):
        digest.update(inspect.getsource(module).encode())
    digest.update(get_media_storage().public_url("k").encode())
    return digest.hexdigest()[:16]


def encode(value: Any) -> bytes:
    """JSON as every response body of the API is rendered (DRF's ``JSONRenderer``)."""
    return _JSON.render(value)


def page_bodies(page: PostPage, *, workspace_id: str) -> list[bytes]:
    """The records of the page's posts as JSON, in page order: stored ones where current, the
    others rendered from their rows now and stored for the next list (a post deleted since the
    page was read is left out)."""
    missing = [entry.post_id for entry in page.entries if entry.body is None]
    fresh: dict[str, bytes] = {}
    if missing:
        rows, targets = post_rows(workspace_id=workspace_id, post_ids=missing)
        fresh = {record["id"]: encode(record) for record in rendering.post_records(rows, targets)}
        stamps = {entry.post_id: entry.stamp for entry in page.entries}
        # Sorted: two lists storing the same posts at once lock their rows in the same order.
        PostRecord.objects.bulk_create(
            [
                PostRecord(post_id=post_id, stamp=stamps[post_id], body=fresh[post_id].decode())
                for post_id in sorted(fresh)
            ],
            update_conflicts=True,
            unique_fields=["post"],
            update_fields=["stamp", "body"],
        )
    return [
        entry.body.encode() if entry.body is not None else fresh[entry.post_id]
        for entry in page.entries
        if entry.body is not None or entry.post_id in fresh
    ]
