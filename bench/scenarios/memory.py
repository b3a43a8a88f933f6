"""``memory``: RSS of the web and worker processes after each scenario of this run (after start-up
only, plus a short load, when run alone). Targets per process: web ≤ 150 MB, worker ≤ 250 MB."""

from __future__ import annotations

from bench.context import Bench
from bench.loadgen import lua_script, run_wrk
from bench.report import Report


def run(bench: Bench) -> Report:
    report = Report("memory")
    if len(bench.memory) <= 1:
        # Run alone: put a little weight on both before reading them.
        run_wrk(
            bench.stack.web_url,
            lua_script(name="bare", method="GET", path="/healthz", key=""),
            connections=8,
            seconds=5,
        )
        from bench.scenarios.publishing import noop_floor

        noop_floor(bench, 2000)
        bench.record_memory("a short load (healthz + 2,000 no-op tasks)")
    for sample in bench.memory:
        web = sample["web"][1:] or sample["web"]  # gunicorn workers (the master forks them)
        worker = sample["worker"]
        report.add(f"web RSS per process after {sample['after']}", max(web) if web else None, "MB", at_most=150)
        report.add(
            f"worker RSS per process after {sample['after']}", max(worker) if worker else None, "MB", at_most=250
        )
    report.details["samples"] = bench.memory
    report.notes.append("max over the processes of each tree: gunicorn workers; Celery main + 4 pool processes")
    return report
