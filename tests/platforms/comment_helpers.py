"""Helpers of the engagement suites (``test_comments_<platform>.py``): draining a client's comment
pages, a post whose audience has written enough comments, moving a simulated post back in time,
and a reply request."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any

from platforms.base import Credentials, PostRef, PublishRequest, RemoteComment, ReplyTo
from platforms.sandbox.store import SandboxStore


def every_comment(
    client: Any, creds: Credentials, post_id: str, *, since: dt.datetime | None = None
) -> tuple[list[RemoteComment], int]:
    """Every comment ``list_comments`` yields for the post, following the cursor; and the page count."""
    found: list[RemoteComment] = []
    cursor, pages = "", 0
    while True:
        page = client.list_comments(creds, post_id, since=since, cursor=cursor)
        pages += 1
        found.extend(page.comments)
        assert pages < 50, "the cursor never ends"
        if not page.cursor:
            return found, pages
        cursor = page.cursor


def post_with_comments(publish: Callable[[int], str], expected: Callable[[str], list[Any]], *, at_least: int) -> str:
    """Publish posts (``publish(n)`` gives the n-th post's id) until the audience of one has written
    ``at_least`` comments (each post's audience is derived from its id: most have several)."""
    for number in range(30):
        post_id = publish(number)
        if len(expected(post_id)) >= at_least:
            return post_id
    raise AssertionError(f"no post of 30 drew {at_least} comments")


def backdate(slug: str, kind: str, item_id: str, field: str, *, hours: float) -> float:
    """Move a simulated post ``hours`` back (its ``field`` holds the Unix time it was published);
    the new time."""
    published = time.time() - hours * 3600
    assert SandboxStore(slug).update(kind, item_id, **{field: published}) is not None
    return published


def reply_request(target_id: str, text: str, post_id: str, comment_id: str, *, post_cid: str = "") -> PublishRequest:
    """The request of a reply to ``comment_id`` under ``post_id`` (``target_id`` its key)."""
    return PublishRequest(
        target_id=target_id,
        content_type="TEXT",
        text=text,
        reply_to=ReplyTo(root=PostRef(post_id, post_cid), parent=PostRef(comment_id)),
    )
