"""The Celery app: queues, routing by app, and the beat schedule gathered from each app.

Each domain app may define ``BEAT_SCHEDULE`` in its ``schedule.py``; they are merged here so no
app edits another's schedule. Tasks are named ``<app>.<task>`` and routed to the app's queue.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from celery import Celery
from celery.signals import worker_process_init, worker_process_shutdown
from kombu import Queue

from core import work

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("crosspost")
app.config_from_object("django.conf:settings", namespace="CELERY")

QUEUE_BY_APP = {
    "posts": "publish",
    "webhooks": "webhooks",
    "analytics": "analytics",
    # The comment syncs are reads like analytics refreshes; replies, hides and deletes are platform
    # steps that a person waits for, on the publish queue (QUEUE_BY_TASK).
    "engagement": "analytics",
}
# Tasks with a queue of their own, whatever their app: media fitting (CPU-heavy, minutes per
# file) runs on workers of its own so that it never delays publishing.
QUEUE_BY_TASK = {
    "media.fit": "media",
    "engagement.run_comment_actions": "publish",
    "engagement.sweep_comment_actions": "publish",
}
QUEUES = ("publish", "webhooks", "analytics", "default", "media")
SCHEDULE_APPS = ("core", "workspaces", "accounts", "media", "webhooks", "posts", "analytics", "engagement", "audit")


def route_task(name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **kw: Any) -> dict[str, str]:
    if name in QUEUE_BY_TASK:
        return {"queue": QUEUE_BY_TASK[name]}
    return {"queue": QUEUE_BY_APP.get(name.split(".", 1)[0], "default")}


def collect_beat_schedule() -> dict[str, dict[str, Any]]:
    schedule: dict[str, dict[str, Any]] = {}
    for app_label in SCHEDULE_APPS:
        try:
            module = importlib.import_module(f"{app_label}.schedule")
        except ModuleNotFoundError as exc:
            if exc.name != f"{app_label}.schedule":
                raise
            continue
        schedule.update(getattr(module, "BEAT_SCHEDULE", {}))
    return schedule


app.conf.task_queues = [Queue(name) for name in QUEUES]
app.conf.task_routes = (route_task,)
app.autodiscover_tasks()


@app.on_after_finalize.connect
def _install_beat_schedule(sender: Celery, **kwargs: Any) -> None:
    sender.conf.beat_schedule = collect_beat_schedule()


@worker_process_init.connect
def _start_work_threads(**kwargs: Any) -> None:
    """Each worker process owns the threads its tasks run remote calls on (``core.work``)."""
    work.start_worker_pool()


@worker_process_shutdown.connect
def _stop_work_threads(**kwargs: Any) -> None:
    work.stop_worker_pool()


# Request context into tasks, task metrics, beat's heartbeat (signal handlers; importing connects them).
importlib.import_module("core.task_observability")
