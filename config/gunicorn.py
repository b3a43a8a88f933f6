"""gunicorn settings every way the web process starts (Procfile, `make run`, the e2e tests):
the root `gunicorn.conf.py`, which gunicorn reads by default, imports this module."""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from gunicorn.glogging import Logger

from core.logs import access_record

# The access log goes to stdout as JSON lines, capability URLs redacted (core.logs).
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-")
errorlog = "-"


class RedactingAccessLogger(Logger):
    """gunicorn's logger, writing each access-log line as redacted JSON."""

    def access(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> None:
        if not (self.cfg.accesslog or self.cfg.logconfig or self.cfg.logconfig_dict or self.cfg.syslog):
            return

        try:
            self.access_log.info(access_record(self.atoms(resp, req, environ, request_time)))
        except Exception:
            self.error_log.exception("Failed to write the access log line")


logger_class = RedactingAccessLogger
# The access log's own format is unused: RedactingAccessLogger writes the whole line.
access_log_format = "%(h)s"


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
