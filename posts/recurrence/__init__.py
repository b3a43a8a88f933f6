"""Recurring series (spec §2 "Recurring post", CONTRACT.md §6): the rule (``rules``), the writes
(``services``), the reads (``selectors``) and the record (``rendering``).

The posts services call :func:`series_start` while creating the first post of a series and
:func:`upcoming_post_deleted` before deleting a post of a series; the pipeline hooks call
:func:`series_occurrences_claimed` and :func:`series_post_finished`; accounts call
:func:`series_account_removed`, each imported from ``posts.recurrence.services``. The names
below resolve lazily from the package for the pipeline hooks (``posts/pipeline/hooks.py``), so
that loading ``posts.recurrence.input`` for the payload shapes loads no service; they go when
the engine branch imports the services directly."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "series_account_removed",
    "series_delete",
    "series_occurrences_claimed",
    "series_pause",
    "series_post_finished",
    "series_resume",
    "series_start",
    "upcoming_post_deleted",
    "upcoming_post_unscheduled",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("posts.recurrence.services"), name)
    raise AttributeError(f"module 'posts.recurrence' has no attribute {name!r}")
