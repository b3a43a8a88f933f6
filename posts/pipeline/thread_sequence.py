"""Publishing a thread (the post, then each ``thread`` item as a reply to the one before it), one
item per publish attempt.

An attempt sends the first item the platform has not confirmed yet. What the platform confirmed
comes back as the entry's ``thread_items`` (every confirmed item, in order), which the pipeline
writes fenced by the attempt's claim before the next attempt is queued, so the next item is never
sent before the one before it is on record, and an attempt that dies resumes after the last
confirmed item. Each item has its own idempotency key (the entry id for the post itself, the entry
id and the item's index for a reply), so re-sending an item whose answer was lost creates nothing
twice where the platform deduplicates on the key (``idempotent_publish == "key"``); elsewhere the
pipeline never re-sends an item whose outcome is unknown. Runs on the platform-call threads:
no database access here.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from platforms.base import (
    Credentials,
    PlatformClient,
    PostRef,
    PublishRequest,
    PublishResult,
    ReplyTo,
)

# What each confirmed item keeps on the entry (``PostTarget.thread_items``).
ITEM_KEYS = ("platformPostId", "postUrl", "publishedAt", "cid")


def item_key(target_id: str, index: int) -> str:
    """The idempotency key / record key of item ``index``: the entry id for the post itself (as a
    post without a thread), the entry id and the index for each reply."""
    return target_id if index == 0 else f"{target_id}.{index}"


def item_request(request: PublishRequest, confirmed: list[dict[str, str]]) -> PublishRequest:
    """The request of the first item not in ``confirmed``: the post itself, or a reply to the last
    confirmed item in the thread of the first."""
    index = len(confirmed)
    if index == 0:
        return dataclasses.replace(request, thread=())
    part = request.thread[index - 1]
    root, parent = confirmed[0], confirmed[-1]
    return PublishRequest(
        target_id=item_key(request.target_id, index),
        content_type=request.content_type,
        text=part.text,
        media=part.media,
        options=request.options,
        reply_to=ReplyTo(
            root=PostRef(root["platformPostId"], root.get("cid", "")),
            parent=PostRef(parent["platformPostId"], parent.get("cid", "")),
        ),
    )


def publish_next(
    client: PlatformClient,
    creds: Credentials,
    request: PublishRequest,
    state: dict[str, Any],
    confirmed: list[dict[str, str]],
) -> PublishResult:
    """Send (or go on with the multi-step flow of) the first unconfirmed item. Not ``done`` while
    items remain: ``thread_items`` then holds every confirmed item for the pipeline to write before
    it queues the next attempt; ``done`` once the last is confirmed, with the first item's id and
    URL as the entry's."""
    confirmed = [dict(item) for item in confirmed]
    total = len(request.thread) + 1
    if len(confirmed) < total:
        result = client.publish(creds, item_request(request, confirmed), state)
        if not result.done:
            return PublishResult(
                done=False, state=dict(result.state), poll_after=result.poll_after, thread_items=tuple(confirmed)
            )
        if not result.platform_post_id:
            return result  # no id to reply to: the pipeline's unknown-outcome rule applies
        confirmed.append(
            {
                "platformPostId": result.platform_post_id,
                "postUrl": result.url,
                "publishedAt": result.published_at.isoformat() if result.published_at else "",
                "cid": result.cid,
            }
        )
        if len(confirmed) < total:
            return PublishResult(done=False, state={}, poll_after=0.0, thread_items=tuple(confirmed))
    first = confirmed[0]
    return PublishResult(
        done=True,
        platform_post_id=first["platformPostId"],
        url=first.get("postUrl", ""),
        published_at=_instant(first.get("publishedAt", "")),
        cid=first.get("cid", ""),
        thread_items=tuple(confirmed),
    )


def _instant(value: str) -> dt.datetime | None:
    """An ISO instant written by :func:`publish_next` back as a datetime (None when empty)."""
    return dt.datetime.fromisoformat(value) if value else None
