"""gunicorn settings every way the web process starts (Procfile, `make run`, the e2e tests, the
bench, the schemathesis check): the root `gunicorn.conf.py`, which gunicorn reads by default,
imports this module. gunicorn supervises the processes; each serves the buffering front
(core.front: an asyncio loop that reads every request whole before a thread runs Django)."""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings

from config import embedded

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

wsgi_app = "config.asgi:application"
worker_class = "core.front.FrontWorker"
# Every line gunicorn writes (its own and the access log, which the front writes through
# core.logs.log_access) goes through the service's logging: one JSON line format, redacted, with
# the request's context, like the web's, the worker's and beat's lines.
logconfig_dict = settings.LOGGING
accesslog = "-"
errorlog = "-"
# Nothing manages gunicorn at run time: no control socket (gunicorn's default puts one in
# $HOME/.gunicorn/, shared by every checkout of the machine, and a second one's exit deletes it).
# Should it ever be enabled, its place is this checkout's var/; gunicorn writes no pid file unless
# told to.
control_socket_disable = True
control_socket = str(embedded.VAR_DIR / "gunicorn.ctl")


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
