"""``webhooks``: 10 webhooks × 2,000 events to loopback receivers answering in 20 ms. Events go
through the real outbox (``emit_event`` in this process, one transaction each, as fast as it
can); the receivers note when each (event, webhook) pair arrives."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import psutil
from django.db import transaction

from bench.context import Bench
from bench.report import Report, percentile

WEBHOOKS = 10
EVENTS = 2000
ANSWER_SECONDS = 0.020
WAIT_SECONDS = 150  # after the last event is emitted (make bench's 20-minute budget)


def _own_cpu_seconds() -> float:
    times = psutil.Process().cpu_times()
    return float(times.user + times.system)


class _Server(ThreadingHTTPServer):
    # The listen backlog is taken when the server is built (set on the instance afterwards it was
    # still 5): with 40 sends in flight, connections beyond it waited for a SYN retry (1 s, then 3 s),
    # so the receivers, not the deliveries, set the rate.
    request_queue_size = 1024
    daemon_threads = True


class Receivers:
    """One threaded loopback server; webhook ``n`` posts to ``/hook/<n>``."""

    def __init__(self) -> None:
        self.received: list[tuple[str, str, float]] = []
        self.lock = threading.Lock()
        receivers = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                arrived = time.time()
                time.sleep(ANSWER_SECONDS)
                try:
                    event_id = str(json.loads(body)["id"])
                except (ValueError, KeyError, TypeError):
                    event_id = "?"
                with receivers.lock:
                    receivers.received.append((self.path, event_id, arrived))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def count(self) -> int:
        with self.lock:
            return len(self.received)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def run(bench: Bench) -> Report:
    from bench.celery_app import app
    from webhooks.events import emit_event
    from webhooks.models import Delivery, DeliveryStatus, Event

    report = Report("webhooks")
    workspace_id, key = bench.workspace("bench webhooks")
    receivers = Receivers()
    try:
        for n in range(WEBHOOKS):
            response = bench.api("POST", "/webhooks", key, json={"url": f"{receivers.base}/hook/{n}"})
            if response.status_code != 201:
                raise RuntimeError(f"webhook creation answered {response.status_code}: {response.text[:300]}")
        groups = ("worker", "postgres", "redis")
        cpu_before = {name: bench.stack.cpu_seconds(name) for name in groups}
        own_before = _own_cpu_seconds()
        started = time.time()
        for n in range(EVENTS):
            with transaction.atomic():
                emit_event(workspace_id=workspace_id, name="post.published", data={"post": {"id": f"bench_{n}"}})
        emitted = time.time() - started
        expected = WEBHOOKS * EVENTS
        deadline = time.time() + (120 if bench.quick else WAIT_SECONDS)
        last, last_change = -1, time.time()
        while time.time() < deadline:
            got = receivers.count()
            if got >= expected:
                break
            if got != last:
                last, last_change = got, time.time()
            elif time.time() - last_change > 60:
                break
            time.sleep(0.5)
        time.sleep(1.0)
        cpu_by_group = {name: bench.stack.cpu_seconds(name) - cpu_before[name] for name in groups}
        cpu_by_group["bench (emitter + receivers)"] = _own_cpu_seconds() - own_before
        cpu_wall = time.time() - started
        created = dict(Event.objects.filter(workspace_id=workspace_id).values_list("id", "created_at"))
        with receivers.lock:
            received = list(receivers.received)
    finally:
        receivers.close()
    pairs: dict[tuple[str, str], float] = {}
    duplicates = 0
    for path, event_id, arrived in received:
        if (path, event_id) in pairs:
            duplicates += 1
            continue
        pairs[(path, event_id)] = arrived
    lags = [arrived - created[event_id].timestamp() for (_, event_id), arrived in pairs.items() if event_id in created]
    first_created = min(c.timestamp() for c in created.values()) if created else started
    last_arrival = max(pairs.values()) if pairs else None
    rate = len(pairs) / (last_arrival - first_created) if last_arrival else None
    lost = expected - len(pairs)
    report.add("deliveries received", len(pairs), target=f"= {expected}").met = len(pairs) == expected
    report.add("lost pairs", lost, at_most=0)
    report.add("duplicate receipts", duplicates)
    report.add("deliveries per second", rate, "/s", at_least=250)
    report.add("delivery lag p50", percentile(lags, 50), "s")
    report.add("delivery lag p99", percentile(lags, 99), "s", at_most=10)
    report.add("delivery lag max", max(lags) if lags else None, "s")
    report.add("event emission rate (this process)", EVENTS / emitted, "events/s")
    # Per delivery received; the bench process emits the events and runs the receivers.
    for name, seconds in cpu_by_group.items():
        report.add(f"{name} CPU per delivery", seconds / max(len(pairs), 1) * 1000, "ms")
    report.add("CPU of these processes / wall (2 cores = 2.0)", sum(cpu_by_group.values()) / cpu_wall)
    abandoned = Delivery.objects.filter(event__workspace_id=workspace_id, status=DeliveryStatus.PENDING).update(
        status=DeliveryStatus.FAILED, last_error="abandoned by the benchmark"
    )
    app.control.purge()
    report.details["abandoned"] = abandoned
    if abandoned:
        report.notes.append(f"{abandoned} deliveries still pending when the scenario stopped waiting (counted lost)")
    report.details.update(
        {
            "emitSeconds": round(emitted, 2),
            "received": len(received),
            "cpuSecondsByProcess": {k: round(v, 2) for k, v in cpu_by_group.items()},
            "cpuWallSeconds": round(cpu_wall, 1),
        }
    )
    return report
