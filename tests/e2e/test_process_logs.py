"""The log of every process as an operator reads it (issue 30, items 9 and 10), on real gunicorn,
Celery worker and beat processes started the way ``make run`` starts them: every line each of them
writes, from start-up to shutdown, is one JSON object of one format; access lines name the
workspace and key prefix of the key that authenticated the request; a publish attempt that failed
says when it is retried; a simulated fault is the simulator's INFO line, not an ERROR of ours; and
no process leaves a control socket in the user's home, where another checkout's would meet it."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.harness import E2EStack, start_stack, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

ENVELOPE = ("time", "level", "logger", "message", "request_id", "workspace_id", "key_prefix")
PROCESSES = ("web.log", "sandbox.log", "worker.log", "beat.log")
# What Celery itself writes from its shutdown signal handler: plain text on standard output, past
# logging, with no public way to change it (the worker logs its shutdown as a JSON line too, on
# standard error with every other line: core.task_observability). The harness writes both streams
# to one file; this line, and only this one, is let through.
CELERY_PLAIN = {"worker.log": {"worker: Warm shutdown (MainProcess)"}}


def _records(stack: E2EStack, name: str) -> list[dict[str, Any]]:
    text = (stack.workdir / name).read_text(errors="replace")
    records = []
    for line in text.splitlines():
        if not line.strip() or line in CELERY_PLAIN.get(name, ()):
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise AssertionError(f"{name}: a line that is not JSON: {line[:300]!r}") from None
        assert isinstance(record, dict), line[:300]
        missing = [key for key in ENVELOPE if key not in record]
        assert not missing, (name, missing, line[:300])
        assert record["level"] in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), line[:300]
        records.append(record)
    return records


def _messages(records: list[dict[str, Any]], logger: str) -> list[str]:
    return [r["message"] for r in records if r["logger"] == logger]


def test_every_process_writes_one_json_line_format_from_start_to_shutdown() -> None:
    home = Path(tempfile.mkdtemp(prefix="crosspost-home-"))
    runtime = Path(tempfile.mkdtemp(prefix="crosspost-xdg-"))
    with start_stack(HOME=str(home), XDG_RUNTIME_DIR=str(runtime)) as stack:
        listed = stack.api("GET", "/social-posts", headers={"X-Request-Id": "logs-e2e-list"})
        assert listed.status_code == 200, listed.text
        account = stack.connect_account("MASTODON")
        # The instance answers the first create with a 502: the attempt fails and is retried.
        armed = requests.post(
            f"{stack.sandbox_url}/sandbox/_control/mastodon/faults",
            json={"kind": "server_error", "path": "/api/v1/statuses", "method": "POST", "times": 1},
            timeout=30,
        )
        assert armed.ok, armed.text
        created = stack.create_text_post(account, "Logs e2e, published on the second attempt")
        assert created.status_code == 201, created.text
        post_id = created.json()["postId"]
        wait_for(
            lambda: stack.api("GET", f"/social-posts/{post_id}").json()["status"] == "COMPLETED",
            timeout=120,
            what="the post to publish on its retry",
        )
        wait_for(
            lambda: b"beat starting" in (stack.workdir / "beat.log").read_bytes(),
            timeout=60,
            what="beat's start-up line",
        )
        # No control socket where gunicorn puts one by default ($XDG_RUNTIME_DIR, else $HOME/.gunicorn).
        assert list(home.iterdir()) == [] and list(runtime.iterdir()) == []
        stack.stop()  # the shutdown lines too

        logs = {name: _records(stack, name) for name in PROCESSES}

    web, sandbox, worker, beat = (logs[name] for name in PROCESSES)
    # gunicorn's own lines (master start-up, worker boots, shutdown) and the access log.
    assert "Starting gunicorn" in " ".join(_messages(web, "gunicorn.error"))
    assert any(m.startswith("Shutting down") for m in _messages(web, "gunicorn.error"))
    (listing,) = [r for r in web if r["logger"] == "gunicorn.access" and r["request_id"] == "logs-e2e-list"]
    assert (listing["method"], listing["path"], listing["status"]) == ("GET", "/api/v1/social-posts", "200")
    assert listing["workspace_id"].startswith("ws_")
    assert listing["key_prefix"] == "_".join(stack.api_key.split("_")[:2])
    # The worker: its start, its readiness, one line per attempt outcome, its shutdown.
    assert any(m.endswith(" starting") for m in _messages(worker, "crosspost.processes"))
    assert any(m.endswith(" ready.") for m in _messages(worker, "celery.apps.worker"))
    assert any(m.endswith(": Warm shutdown (SIGTERM)") for m in _messages(worker, "crosspost.processes"))
    attempts = [r for r in worker if r["logger"] == "posts.pipeline.attempts" and r["post_id"] == post_id]
    assert [(r["outcome"], r["attempt"], r["platform"]) for r in attempts] == [
        ("retrying", 1, "MASTODON"),
        ("published", 2, "MASTODON"),
    ]
    retrying = attempts[0]
    assert retrying["level"] == "WARNING" and retrying["retry_in_s"] > 0
    assert retrying["message"].startswith(f"publish attempt failed, retrying in {retrying['retry_in_s']:g} s")
    # The request that created the post is the context of its attempts.
    assert retrying["request_id"] != "-" and retrying["workspace_id"] == listing["workspace_id"]
    # Beat: its start as a line of the format.
    assert "beat starting" in _messages(beat, "crosspost.processes")
    # The simulated fault: the simulator's INFO line, no error of the service anywhere.
    (fault,) = [r for r in sandbox if r["logger"] == "platforms.sandbox" and r.get("fault") == "server_error"]
    assert (fault["level"], fault["status"]) == ("INFO", 502)
    errors = [r for name in PROCESSES for r in logs[name] if r["level"] in ("ERROR", "CRITICAL")]
    assert errors == [], errors[:3]
