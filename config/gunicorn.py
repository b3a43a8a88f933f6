"""gunicorn settings every way the web process starts (Procfile, `make run`, the e2e tests, the
bench, the schemathesis check): the root `gunicorn.conf.py`, which gunicorn reads by default,
imports this module. gunicorn supervises the processes; each serves the buffering front
(core.front: an asyncio loop that reads every request whole before a thread runs Django)."""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings

wsgi_app = "config.asgi:application"
worker_class = "core.front.FrontWorker"
# The access log goes to stdout as JSON lines, capability URLs redacted: the front writes each
# line (core.front, through core.logs.access_record) to gunicorn's access logger.
# Nothing here manages gunicorn at run time; a control socket would sit outside the checkout.
control_socket_disable = True
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-")
errorlog = "-"


def on_starting(server: Any) -> None:
    """Load the settings in the master too: they name the metrics directory (and export it), so
    the workers inherit it and ``child_exit`` below marks their files in the same place."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

    os.environ["PROMETHEUS_MULTIPROC_DIR"] = settings.PROMETHEUS_MULTIPROC_DIR


def child_exit(server: Any, worker: Any) -> None:
    """A worker that exits (restarted, killed, timed out) leaves its metric files; marking it dead
    lets /metrics drop its live gauges while its counters stay in the sums."""
    # prometheus-client fixes its storage when first imported, from PROMETHEUS_MULTIPROC_DIR, and
    # the workers fork from this master: it must load here only after on_starting exported it.
    from prometheus_client import multiprocess  # noqa: PLC0415 -- see above

    multiprocess.mark_process_dead(worker.pid)
