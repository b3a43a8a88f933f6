"""Writes of the posts API (the views call these; the pipeline has its own)."""

from posts.services.bulk import posts_bulk_create
from posts.services.changes import post_update
from posts.services.creation import (
    creation_result,
    payload_of,
    post_create,
    post_validate,
    require_for_timing,
    timing_of,
)
from posts.services.transitions import post_delete, post_publish, post_retry, post_unschedule

__all__ = [
    "creation_result",
    "payload_of",
    "post_create",
    "post_delete",
    "post_publish",
    "post_retry",
    "post_unschedule",
    "post_update",
    "post_validate",
    "posts_bulk_create",
    "require_for_timing",
    "timing_of",
]
