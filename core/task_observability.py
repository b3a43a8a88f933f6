"""Celery signal handlers: workers and beat log through the service's logging (one JSON line
format, their start-up included); the queuing request's context travels in each task message's
headers and is adopted by the worker while the task runs (its log lines carry the request id,
workspace and key prefix); every task run is counted by name and outcome with its duration; and
the beat process records a heartbeat each time it sends a task. Connected by ``config/celery.py``."""

from __future__ import annotations

import logging
import time
from typing import Any

from celery.signals import (
    beat_init,
    before_task_publish,
    celeryd_after_setup,
    setup_logging,
    task_postrun,
    task_prerun,
    worker_shutting_down,
)
from django.conf import settings

from core import health, logs

_started: dict[str, tuple[float, list[Any]]] = {}
_in_beat = False
logger = logging.getLogger("crosspost.processes")


@setup_logging.connect
def _use_the_service_logging(loglevel: Any = None, **kwargs: Any) -> None:
    """Workers and beat log exactly as the web does (settings.LOGGING: JSON, redacted, with the
    context) instead of through Celery's own plain handlers (connecting this signal is what keeps
    Celery off the root logger); ``--loglevel`` still sets the level. Their start-up banners are
    plain text printed past logging: the processes run with ``celery --quiet`` and the lines below
    say the same as JSON."""
    logs.configure(settings.LOGGING)
    if loglevel:
        logging.getLogger().setLevel(loglevel)


@worker_shutting_down.connect
def _log_worker_shutdown(sender: str = "", sig: str = "", how: str = "", **kwargs: Any) -> None:
    """The worker's shutdown as a line of the format. Celery sends this signal from its SIGTERM /
    SIGINT / SIGQUIT handler, where the logging module's locks could deadlock: hence core.logs.say,
    which takes none. (Celery also writes its own "worker: Warm shutdown (MainProcess)" there, as
    plain text on standard output, past logging and with no public way to change it: the JSON
    logs are all on standard error; docs/operations.md, "Logs".)"""
    logs.say(f"worker {sender}: {how} shutdown ({sig})", logger=logger.name)


@celeryd_after_setup.connect
def _log_worker_start(sender: str = "", instance: Any = None, conf: Any = None, **kwargs: Any) -> None:
    app = getattr(instance, "app", None)
    queues = sorted(app.amqp.queues.consume_from) if app is not None else []
    logger.info(
        "worker %s starting",
        sender,
        extra={
            "process_kind": "worker",
            "hostname": sender,
            "queues": queues,
            "concurrency": getattr(instance, "concurrency", None),
            "broker": app.connection_for_write().as_uri() if app is not None else "",
        },
    )


@beat_init.connect
def _mark_beat_process(sender: Any = None, **kwargs: Any) -> None:
    global _in_beat
    _in_beat = True
    scheduler = getattr(sender, "scheduler", None)
    logger.info(
        "beat starting",
        extra={
            "process_kind": "beat",
            "scheduler": type(scheduler).__name__ if scheduler is not None else "",
            "schedule": str(getattr(sender, "schedule_filename", "")),
            "max_interval_s": getattr(sender, "max_interval", None),
            "tasks": sorted(getattr(scheduler, "schedule", {}) or {}) if scheduler is not None else [],
        },
    )


@before_task_publish.connect
def _carry_context(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    if headers is not None:
        headers.update(logs.context_headers())
    if _in_beat:
        health.record_beat_heartbeat()


@task_prerun.connect
def _task_started(task_id: str = "", task: Any = None, **kwargs: Any) -> None:
    request = getattr(task, "request", None)
    tokens = logs.enter_task_context(lambda name: getattr(request, name, None))
    _started[task_id] = (time.perf_counter(), tokens)


@task_postrun.connect
def _task_finished(task_id: str = "", task: Any = None, state: str | None = None, **kwargs: Any) -> None:
    # prometheus-client reads its directory when first imported: core.metrics may load only
    # after the settings, which import this module (through config.celery) before setting it.
    from core import metrics  # noqa: PLC0415 -- see above

    started = _started.pop(task_id, None)
    seconds = None
    if started is not None:
        seconds = time.perf_counter() - started[0]
        logs.leave_task_context(started[1])
    name = getattr(task, "name", None) or "unknown"
    metrics.task_finished(task=name, outcome=(state or "UNKNOWN").lower(), seconds=seconds)
