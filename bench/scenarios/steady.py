"""``steady``: 20 targets per second falling due continuously for 5 minutes (60 s with --quick):
lateness, the publish queue's depth (Redis LLEN) and the backlog of due, unfinished targets,
sampled every second."""

from __future__ import annotations

import math
import time

from bench.context import Bench
from bench.report import Report, percentile
from bench.scenarios import publishing

RATE = 20
LEAD_SECONDS = 15
DRAIN_SECONDS = 30  # after the last arrival, how long the backlog may take to clear (budget)
BACKLOG_SQL = """
SELECT count(*) FROM posts_posttarget t JOIN posts_post p ON p.id = t.post_id
WHERE p.id LIKE %s AND p.scheduled_at <= now() AND t.status NOT IN ('PUBLISHED', 'FAILED')
"""


def run(bench: Bench) -> Report:
    report = Report("steady")
    duration = 60 if bench.quick else 300
    publishing.publishing_workspace(bench)
    publishing.clear_logs(bench)
    start = math.ceil(time.time()) + LEAD_SECONDS
    total = RATE * duration
    run_id, _ = publishing.seed_due_posts(
        bench, tag="steady", posts=total, due_sql=f"g / {RATE}.0", targets_per_post=1, start=start
    )
    while time.time() < start:
        time.sleep(0.2)
    samples: list[dict[str, float]] = []
    deadline = start + duration + DRAIN_SECONDS
    while time.time() < deadline:
        tick = time.time()
        waiting = int(bench.sql(BACKLOG_SQL, [f"post_{run_id}_%"])[0][0])
        samples.append({"t": round(tick - start, 1), "queue": publishing.queue_depth(bench), "backlog": waiting})
        if tick > start + duration and waiting == 0:
            break
        time.sleep(max(0.0, 1.0 - (time.time() - tick)))
    result = publishing.outcome(bench, run_id)
    _, dups = publishing.duplicates(bench)
    report.details["abandoned"] = publishing.abandon(bench, run_id)
    during = [s for s in samples if s["t"] <= duration]
    queue = [s["queue"] for s in during]
    backlog = [s["backlog"] for s in during]
    longest = stretch = 0
    for value in backlog:
        stretch = stretch + 1 if value > RATE else 0  # more than one second of arrivals waiting
        longest = max(longest, stretch)
    published = result["statuses"].get("PUBLISHED", 0)
    report.add("targets published", published, target=f"= {total}").met = published == total
    report.add("lateness p50", result["p50"], "s")
    report.add("lateness p99", result["p99"], "s", at_most=3)
    report.add("lateness max", result["max"], "s")
    report.add("queue depth (LLEN publish) p50", percentile(queue, 50))
    report.add("queue depth (LLEN publish) max", max(queue) if queue else None)
    report.add("due-unfinished backlog p50", percentile(backlog, 50), "targets")
    report.add("due-unfinished backlog max", max(backlog) if backlog else None, "targets")
    report.add("longest stretch backlog > 1 s of arrivals", longest, "s", at_most=5)
    report.add("duplicates seen by the simulators", dups, at_most=0)
    report.details.update({"durationSeconds": duration, "samples": samples, "statuses": result["statuses"]})
    report.notes.append(
        "staged tasks wait in the worker with a countdown (ETA), not in the list: the backlog of due, "
        "unfinished targets is the depth that matters"
    )
    return report
