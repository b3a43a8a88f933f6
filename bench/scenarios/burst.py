"""``burst``: 2,000 posts × 3 platforms (6,000 targets) all due at the same second, sandbox latency
100 ms, the Procfile's worker; beside it the floor: the same workers draining 6,000 no-op tasks."""

from __future__ import annotations

import math
import time

from bench.context import Bench
from bench.report import Report
from bench.scenarios import publishing

POSTS = 2000
TARGETS_PER_POST = 3
LEAD_SECONDS = 20  # the seeding must be done before the posts fall due
# How long the scenario waits for the 6,000 targets after they fall due: part of make bench's
# 20-minute budget. Targets still unfinished then count with that wait as their lateness (a lower
# bound) and the rate is what was published in the window.
WAIT_SECONDS = 200


def run(bench: Bench) -> Report:
    report = Report("burst")
    publishing.publishing_workspace(bench)
    # The floor first, on idle workers: the same queue, the same processes, tasks doing nothing.
    floor = publishing.noop_floor(bench, POSTS * TARGETS_PER_POST)
    publishing.clear_logs(bench)
    due = math.ceil(time.time()) + LEAD_SECONDS
    run_id, seed_seconds = publishing.seed_due_posts(
        bench, tag="burst", posts=POSTS, due_sql="0", targets_per_post=TARGETS_PER_POST, start=due
    )
    total = POSTS * TARGETS_PER_POST
    report.details["seedSeconds"] = round(seed_seconds, 1)
    if time.time() >= due:
        report.notes.append(f"seeding took {seed_seconds:.1f} s: the posts were already due when it ended")
    groups = ("worker", "sandbox", "postgres", "redis", "beat")
    cpu_before = {name: bench.stack.cpu_seconds(name) for name in groups}
    wall_before = time.time()
    deadline = due + (WAIT_SECONDS if not bench.quick else 180)
    # The share of the cores is taken from the due second on: the lead before it is idle.
    time.sleep(max(due - time.time(), 0.0))
    cpu_at_due = sum(bench.stack.cpu_seconds(name) for name in groups)
    wall_at_due = time.time()
    while time.time() < deadline and publishing.terminal_count(bench, run_id) < total:
        time.sleep(1.0)
    cpu_by_group = {name: bench.stack.cpu_seconds(name) - cpu_before[name] for name in groups}
    cpu_wall = time.time() - wall_before
    cores_used = (sum(bench.stack.cpu_seconds(name) for name in groups) - cpu_at_due) / (time.time() - wall_at_due)
    cpu_used = cpu_by_group["worker"]
    result = publishing.outcome(bench, run_id)
    created, dups = publishing.duplicates(bench)
    report.details["abandoned"] = publishing.abandon(bench, run_id)

    published = result["statuses"].get("PUBLISHED", 0)
    window = (result["lastPublished"] - due) if result["lastPublished"] else None
    rate = published / window if window and window > 0 else None
    report.add("targets published", published, target=f"= {total}").met = published == total
    report.add("targets failed / unfinished", total - published, at_most=0)
    report.add("lateness p50", result["p50"], "s")
    report.add("lateness p99", result["p99"], "s", at_most=20)
    report.add("lateness max", result["max"], "s")
    report.add("target publishes per second", rate, "/s", at_least=300)
    report.add("no-op floor (same workers)", floor["perSecond"], "tasks/s")
    ratio = rate / floor["perSecond"] if rate else None
    report.add("ratio to the no-op floor", ratio, at_least=0.5)
    report.add("attempts beyond the first", result["retries"])
    report.add("duplicates seen by the simulators", dups, at_most=0)
    report.add("worker CPU seconds per target", cpu_used / total * 1000, "ms")
    done = max(sum(result["statuses"].get(s, 0) for s in ("PUBLISHED", "FAILED")), 1)
    for name in groups[1:]:
        report.add(f"{name} CPU per finished target", cpu_by_group[name] / done * 1000, "ms")
    report.add("CPU of these processes / wall from the due second (2 cores = 2.0)", cores_used)
    report.details.update(
        {
            "statuses": result["statuses"],
            "simulatorCreates": created,
            "noop": floor,
            "workerCpuSeconds": round(cpu_used, 2),
            "cpuSecondsByProcess": {k: round(v, 2) for k, v in cpu_by_group.items()},
            "cpuWallSeconds": round(cpu_wall, 1),
            "windowSeconds": window,
        }
    )
    report.notes.append("lateness = publishedAt − scheduledAt; Telegram dates have 1 s resolution")
    unfinished = total - sum(result["statuses"].get(s, 0) for s in ("PUBLISHED", "FAILED"))
    if unfinished:
        report.notes.append(
            f"{unfinished} targets were still unfinished when the scenario stopped waiting "
            f"({deadline - due:.0f} s after they fell due); their lateness counts as that wait (a lower bound)"
        )
    return report
