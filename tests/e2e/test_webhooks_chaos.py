"""Killing the webhook worker (SIGKILL) mid-run loses no (event, webhook) pair."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection, transaction

from tests.factories import WorkspaceFactory
from tests.factories.webhooks import WebhookFactory
from webhooks.delivery.engine import deliveries_sweep
from webhooks.events import emit_event
from webhooks.models import Delivery, Event

ROOT = Path(__file__).resolve().parents[2]
EVENTS = int(os.environ.get("CHAOS_EVENTS", 500))
WEBHOOKS = 3


class PairCounter:
    """A loopback receiver recording (path, event id) pairs; answers 200 after a short pause.

    After ``hold_after`` POSTs it holds every further answer until ``released`` is set, and the
    POST that crosses it calls ``on_hold`` (the kill) from the receiver's own thread at once: the
    worker's sends hang mid-flight and the kill lands in the middle of the run however slowly the
    test process is scheduled. (Polling from the test let a loaded machine's worker finish first,
    or leave held sends to time out and count as failures: 15 in a row emit ``webhook.failing`` to
    the other webhooks, 20 disable one and drop its deliveries, so load changed the outcome.)"""

    def __init__(self, hold_after: int) -> None:
        self.pairs: set[tuple[str, str]] = set()
        self.posts = 0
        self.lock = threading.Lock()
        self.released = threading.Event()
        self.on_hold: Any = None
        self.killed = threading.Event()
        self.pairs_at_kill = 0
        counter = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                event_id = body.split(b'"id":"', 1)[1].split(b'"', 1)[0].decode()
                time.sleep(0.005)
                with counter.lock:
                    counter.pairs.add((self.path, event_id))
                    counter.posts += 1
                    held = counter.posts > hold_after
                    crossing = counter.posts == hold_after + 1
                    if crossing:
                        counter.pairs_at_kill = len(counter.pairs)
                if crossing:
                    counter.on_hold()
                    counter.killed.set()
                if held:
                    counter.released.wait(timeout=600)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # the default 5 drops connects when two workers send at once

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # an answer held past the kill goes to a closed connection

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"


def _database_url() -> str:
    db = connection.settings_dict
    credentials = quote(db["USER"] or "", safe="")
    if db.get("PASSWORD"):
        credentials += ":" + quote(db["PASSWORD"], safe="")
    host = quote(db.get("HOST") or "", safe="")
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{credentials}@{host}{port}/{db['NAME']}"


def _start_worker(log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "REDIS_URL": settings.REDIS_URL,  # our Redis database; settings derive the broker URL from it
        "PLATFORM_MODE": "sandbox",
        "WEBHOOK_ALLOW_PRIVATE_URLS": "1",
        # Generous: the property under test is the kill, not how a loaded machine answers in 1 s.
        "WEBHOOK_TIMEOUT_SECONDS": "5",
        "WEBHOOK_RETRY_DELAYS": "0.5,0.5,0.5,0.5,0.5",
        "TESTING": "0",
    }
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "webhooks", "-c", "4"]
    command += [
        "--without-heartbeat",
        "--without-gossip",
        "--without-mingle",
        "-l",
        os.environ.get("CHAOS_LOG", "warning"),
    ]
    with log.open("ab") as sink:
        return subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True, stdout=sink, stderr=sink)


def _kill(worker: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=10)


@pytest.fixture
def workers() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for worker in started:
        _kill(worker)


def _wait_for(condition: Any, timeout: float, every: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every)
    return condition()


def _missing_report(missing: set[tuple[str, str]], hooks: list[Any], before_kill: int, log: Path) -> str:
    """What became of the deliveries of the missing pairs (status, attempts, last error)."""
    by_path = {hook.url.rsplit("/", 1)[1]: hook.id for hook in hooks}
    lines = [f"missing {len(missing)} pairs; before the kill {before_kill}"]
    for path, event_id in sorted(missing)[:10]:
        for delivery in Delivery.objects.filter(webhook_id=by_path[path.lstrip("/")], event_id=event_id):
            errors = list(delivery.attempts.values_list("status_code", "error"))
            lines.append(
                f"{path} {event_id}: {delivery.status}, {delivery.attempt_count} attempts, "
                f"lease {delivery.lease_until}, next {delivery.next_attempt_at}, attempts {errors}"
            )
    lines.append(log.read_text()[-2000:])
    return "\n".join(lines)


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_sigkill_mid_run_loses_no_event_webhook_pair(
    workers: list[subprocess.Popen[bytes]], settings: Any, tmp_path: Path
) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 5.0
    receiver = PairCounter(hold_after=EVENTS * WEBHOOKS // 5)
    workspace = WorkspaceFactory()
    hooks = [WebhookFactory(workspace=workspace, url=receiver.url(f"/w{i}")) for i in range(WEBHOOKS)]
    first = _start_worker(tmp_path / "worker.log")
    workers.append(first)
    receiver.on_hold = lambda: _kill(first)
    for index in range(EVENTS):
        with transaction.atomic():
            emit_event(workspace_id=workspace.id, name="post.published", data={"post": {"id": f"p{index}"}})
    # This workspace's rows, the events the loop emitted and nothing else (no webhook.failing notice:
    # no send failed before the kill).
    ours = Delivery.objects.filter(webhook__workspace=workspace)
    event_ids = list(Event.objects.filter(workspace=workspace).values_list("id", flat=True))
    assert len(event_ids) == EVENTS and ours.count() == EVENTS * WEBHOOKS

    assert receiver.killed.wait(timeout=120), (tmp_path / "worker.log").read_text()[-3000:]
    delivered_before_kill = receiver.pairs_at_kill
    receiver.released.set()
    assert delivered_before_kill < EVENTS * WEBHOOKS, "the kill came too late to prove anything"

    workers.append(_start_worker(tmp_path / "worker.log"))
    expected = {(f"/w{i}", event_id) for i in range(WEBHOOKS) for event_id in event_ids}

    def all_delivered() -> bool:
        deliveries_sweep(overdue_seconds=2)
        return receiver.pairs >= expected

    assert _wait_for(all_delivered, timeout=180, every=1.0), _missing_report(
        expected - receiver.pairs, hooks, delivered_before_kill, tmp_path / "worker.log"
    )
    assert receiver.pairs == expected
    if os.environ.get("CHAOS_LOG"):
        print((tmp_path / "worker.log").read_text()[-3000:])

    # A POST the killed worker sent but never recorded is sent again once its lease runs out
    # (receivers must be idempotent); then every delivery is closed as succeeded.
    def all_recorded() -> bool:
        deliveries_sweep(overdue_seconds=2)
        return not ours.exclude(status="succeeded").exists()

    assert _wait_for(all_recorded, timeout=90, every=1.0), list(
        ours.exclude(status="succeeded").values_list("status", "attempt_count", "lease_until", "last_error")
    )
    assert len(hooks) == WEBHOOKS
