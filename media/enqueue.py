"""The one way media work is queued: by task name, so no service imports the tasks module (which
imports the services) and there is no import cycle. Call it from ``transaction.on_commit`` only:
the rows must be committed before a worker looks for them. Every media task re-checks its row, so
a duplicate message is harmless and a lost one is picked up by the resumers."""

from __future__ import annotations

from collections.abc import Iterable

from celery import current_app as app

GENERATE_IMAGE = "media.generate_image"
MAKE_PREVIEW = "media.make_preview"
PROBE_MEDIA = "media.probe"
FIT_MEDIA = "media.fit"  # routed to the queue of its own, media (config.celery)


def enqueue_each(task_name: str, ids: Iterable[str]) -> None:
    """One ``task_name`` message per id (``GENERATE_IMAGE`` for AI image jobs, ``MAKE_PREVIEW``
    and ``PROBE_MEDIA`` for media files, ``FIT_MEDIA`` for
    media variants)."""
    for object_id in ids:
        app.send_task(task_name, args=[object_id])
