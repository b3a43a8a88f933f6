"""The worker's shutdown as a line of the JSON log format: Celery announces it through its public
``worker_shutting_down`` signal, from inside its signal handler, and core.task_observability
writes the line without the logging module's locks (the e2e test of process logs sees it from a
real worker)."""

from __future__ import annotations

import json
from typing import Any

from celery.signals import worker_shutting_down

import core.task_observability  # noqa: F401 (connects the handler, as config.celery does)


def test_the_shutdown_signal_writes_one_json_line_on_standard_error(capfd: Any) -> None:
    worker_shutting_down.send(sender="e2e-1@host", sig="SIGTERM", how="Warm", exitcode=0)

    out, err = capfd.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    record = json.loads(line)
    assert record["logger"] == "crosspost.processes" and record["level"] == "INFO"
    assert record["message"] == "worker e2e-1@host: Warm shutdown (SIGTERM)"
    assert (record["request_id"], record["workspace_id"], record["key_prefix"]) == ("-", "-", "-")
