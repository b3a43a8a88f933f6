"""``python -m bench [--scenario NAME] [--quick] [--keep]``: start the bench stack, run the
scenarios, print a table each (and write var/bench/<scenario>.json), stop everything. Each
scenario starts from a settled database (``bench.settle``).

``python -m bench --baseline REV [--rounds N]``: the same scenarios on a worktree of REV and on this
tree, alternating, N rounds each, medians side by side (``bench.compare``)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

SCENARIOS = ("api", "burst", "steady", "webhooks", "analytics", "media", "comments", "memory")
# Run only when named (--scenario): media re-encodes video for minutes of one core, and comments
# runs the comment sync of 1,000 accounts for 15 minutes: each past the 20 minutes the default run
# is budgeted to.
ON_REQUEST = ("media", "comments")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--scenario",
        choices=SCENARIOS,
        action="append",
        help=f"run only this one (repeatable); {', '.join(ON_REQUEST)} only runs when named",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="shorter waits: steady 60 s instead of 5 min, burst/webhooks cut off sooner, fewer samples",
    )
    parser.add_argument(
        "--analytics-posts",
        type=int,
        default=None,
        help="tracked posts to seed for analytics (default 10,000,000, the issue's; 2,000,000 saves about 2.5 minutes)",
    )
    parser.add_argument(
        "--comments-accounts", type=int, default=None, help="comments: accounts to seed (default 1,000)"
    )
    parser.add_argument(
        "--comments-posts", type=int, default=None, help="comments: young posts per account (default 50)"
    )
    parser.add_argument(
        "--comments-seconds", type=float, default=None, help="comments: seconds to watch the sync (default 900)"
    )
    parser.add_argument("--worker-pool", default="prefork", help="Celery pool (the Procfile's: prefork)")
    parser.add_argument("--worker-concurrency", type=int, default=None, help="Celery concurrency (Procfile: 4)")
    parser.add_argument(
        "--keep", action="store_true", help="keep the bench database afterwards (with --baseline: the worktree)"
    )
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="compare with this commit: each scenario on a worktree of REV (its application code, this bench) "
        "and on this tree, alternating; medians and ratios in var/bench/compare-<scenario>.json",
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each side with --baseline (default 3)")
    args = parser.parse_args(argv)
    selected = [s for s in SCENARIOS if (s in args.scenario if args.scenario else s not in ON_REQUEST)]
    if args.baseline:
        return _compare(args, selected)

    from bench.stack import DB_NAME, LOG_DIR, BenchStack, server_database_url

    LOG_DIR.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    stack = BenchStack(server_url=server_database_url(), worker_pool=args.worker_pool)
    if args.worker_concurrency:
        stack.worker_concurrency = args.worker_concurrency
    failures = 0
    try:
        stack.redis.start()
        stack.sandbox_redis.start()
        os.environ.update(stack.env())  # this process works on the bench database and Redis too
        print(f"bench: migrating a fresh database ({stack.database_url.rsplit('/', 1)[-1]})", flush=True)
        stack.create_database()
        import django

        django.setup()
        from django.conf import settings

        import config

        # Read before the bench's environment, the settings would point at another database and Redis.
        if settings.DATABASES["default"]["NAME"] != DB_NAME or stack.redis.url not in settings.CELERY_BROKER_URL:
            raise RuntimeError("the settings were read before the bench's environment was set: see bench.stack")

        # What this run measures (with --baseline, a reference's worktree): web, worker and beat
        # start in the same directory, with it first on PYTHONPATH.
        code = str(Path(config.__file__).resolve().parent.parent)
        print(f"bench: application code from {code}", flush=True)
        from bench import celery_app  # noqa: F401  (the Celery app this process enqueues with)
        from bench.context import Bench
        from bench.settle import settle_database

        print("bench: starting web, sandbox, worker and beat", flush=True)
        stack.start()
        runner = Bench(stack=stack, quick=args.quick)
        runner.record_memory("start-up")
        failures = run_scenarios(
            runner,
            selected,
            settle=settle_database,
            code=code,
            analytics_posts=args.analytics_posts,
            comments=_comments_options(args),
        )
    finally:
        stack.stop()
        stack.redis.stop()
        stack.sandbox_redis.stop()
        if not args.keep:
            try:
                from django.db import connections

                connections.close_all()
            except Exception:  # Django was never set up: nothing to close
                pass
            stack.drop_database()
    print(f"bench: done in {time.monotonic() - started:.0f} s; JSON under var/bench/", flush=True)
    return 1 if failures else 0


def run_scenarios(
    runner: Any,
    selected: list[str],
    *,
    settle: Callable[[], dict[str, Any]],
    code: str,
    analytics_posts: int | None = None,
    comments: dict[str, Any] | None = None,
    load: Callable[[str], Any] = importlib.import_module,
) -> int:
    """Each of ``selected`` in turn, each after its own ``settle()`` (the database vacuumed,
    analysed, checkpointed, autovacuum idle: ``bench.settle``), so a scenario run after another
    reads what it reads alone. Writes and prints each report; returns how many scenarios raised."""
    failures = 0
    for name in selected:
        print(f"bench: settling the database before {name} …", flush=True)
        settled = settle()
        print(f"bench: running {name} …", flush=True)
        module = load(f"bench.scenarios.{name}")
        scenario_started = time.monotonic()
        try:
            if name == "analytics" and analytics_posts:
                report = module.run(runner, total=analytics_posts)
            elif name == "comments" and comments:
                report = module.run(runner, **comments)
            else:
                report = module.run(runner)
        except Exception:
            failures += 1
            traceback.print_exc()
            continue
        report.details["scenarioSeconds"] = round(time.monotonic() - scenario_started, 1)
        report.details["settle"] = settled
        report.details["applicationCode"] = code
        if settled["autovacuum"]["stillRunning"]:
            report.notes.append(f"autovacuum was still running when {name} started: see details.settle")
        # The machine is shared: the load average beside each table says how shared it was.
        report.details["loadAverage"] = [round(x, 2) for x in os.getloadavg()]
        if name != "memory":
            runner.record_memory(name)
        report.write()
        print(report.render(), flush=True)
        load_average = report.details["loadAverage"]
        print(
            f"   ({report.details['scenarioSeconds']:.0f} s; load average "
            f"{load_average[0]} / {load_average[1]} / {load_average[2]})\n",
            flush=True,
        )
    return failures


def _comments_options(args: argparse.Namespace) -> dict[str, Any]:
    """The comments scenario's sizes given on the command line (the scenario's defaults for the rest)."""
    given = {"accounts": args.comments_accounts, "posts": args.comments_posts, "seconds": args.comments_seconds}
    return {name: value for name, value in given.items() if value is not None}


def _compare(args: argparse.Namespace, selected: list[str]) -> int:
    from bench import compare
    from bench.stack import server_database_url

    if args.rounds < 1:
        raise SystemExit("--rounds must be at least 1")
    options = ["--quick"] if args.quick else []
    if args.analytics_posts:
        options += ["--analytics-posts", str(args.analytics_posts)]
    for flag, value in _comments_options(args).items():
        options += [f"--comments-{flag}", str(value)]
    options += ["--worker-pool", args.worker_pool]
    if args.worker_concurrency:
        options += ["--worker-concurrency", str(args.worker_concurrency)]
    # One server for both sides (a reference's worktree would otherwise start an embedded one of its own).
    env = {**os.environ, "DATABASE_URL": server_database_url()}
    return compare.run(
        baseline=args.baseline, scenarios=selected, rounds=args.rounds, options=options, keep=args.keep, env=env
    )


if __name__ == "__main__":
    sys.exit(main())
