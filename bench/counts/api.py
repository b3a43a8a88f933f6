"""The web process's cost per request, in counts that load does not move.

``python -m bench.counts.api [-n N] [--without MIDDLEWARE]`` makes N WSGI calls of the Django
application in this process (no server, no load generator; ``bench.cpu_api``'s database, seed and
caller) per endpoint: a draft created, the list of 20, a get, the bare view ``/healthz``. After a
warm-up of every endpoint, two figures per request:

- **statements**: the SQL statements Django sent (``CaptureQueriesContext``), counted in a pass of
  their own so that the capture does not add to the instructions;
- **instructions**: under valgrind's callgrind (``Ir``), started with instrumentation off and switched
  on only around each endpoint's N calls (``CALLGRIND_ZERO_STATS``/``START_INSTRUMENTATION`` and
  ``STOP_INSTRUMENTATION``/``DUMP_STATS_AT``, from a small C helper compiled on the fly with ``cc``
  and the valgrind headers), so neither the set-up nor the seed nor the warm-up is counted.

``--without NAME`` (repeatable) leaves a middleware out of ``settings.MIDDLEWARE`` (by its dotted path
or its last part), to read what it costs. ``--no-valgrind`` counts the statements only.

The driver imports nothing that 338c1b0 lacks (``bench.cpu_api`` is unchanged since), so copied into a
worktree of another commit it measures that commit the same way::

    git worktree add /tmp/ref 338c1b0 && ln -s "$PWD/.venv" /tmp/ref/.venv
    cp -r bench/counts /tmp/ref/bench/ && (cd /tmp/ref && .venv/bin/python -m bench.counts.api)

It uses the PostgreSQL server of ``DATABASE_URL`` with a database of its own (``<name>_counts_api``,
made anew and dropped at the end) and the Redis of ``REDIS_URL``. ``--keep`` leaves the callgrind
files in ``var/counts/`` for ``callgrind_annotate --inclusive=yes``."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.counts import callgrind

ROOT = Path(__file__).resolve().parents[2]
OUT_DIR = ROOT / "var" / "counts"
ENDPOINTS = ("create", "list", "get", "bare")


def _database_name() -> str:
    url = os.environ.get("DATABASE_URL", "")
    base = url.rsplit("/", 1)[-1].split("?")[0] if url else "crosspost"
    return f"{base or 'crosspost'}_counts_api"


def parent(args: argparse.Namespace) -> int:
    child = [sys.executable, "-m", "bench.counts.api", "--child", "-n", str(args.n), "--warmup", str(args.warmup)]
    for name in args.without:
        child += ["--without", name]
    env = {**os.environ, "COUNTS_DATABASE": args.database or _database_name()}
    if args.show_statements:
        child.append("--show-statements")
    statements = subprocess.run([*child, "--pass", "statements"], env=env, cwd=ROOT, check=True, stdout=subprocess.PIPE)
    figures: dict[str, Any] = {"statements": json.loads(statements.stdout.decode().splitlines()[-1])}
    if not args.no_valgrind:
        out = OUT_DIR / "api.callgrind.out"
        for stale in OUT_DIR.glob(out.name + "*"):
            stale.unlink()
        env["COUNTS_HELPER"] = str(callgrind.helper(OUT_DIR))
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
        subprocess.run([*command, *child, "--pass", "instructions"], env=env, cwd=ROOT, check=True, capture_output=True)
        figures["instructions"] = {name: total / args.n for name, total in callgrind.dumps(out).items()}
        if not args.keep:
            for path in OUT_DIR.glob(out.name + "*"):
                path.unlink()
    print(f"per request, {args.n} calls each after a warm-up of {args.warmup}", end="")
    print(f" (without {', '.join(args.without)})" if args.without else "")
    print(f"  {'endpoint':9} {'instructions':>14} {'statements':>11}")
    for name in ENDPOINTS:
        instructions = figures.get("instructions", {}).get(name)
        shown = f"{instructions:,.0f}" if instructions is not None else "—"
        print(f"  {name:9} {shown:>14} {figures['statements'][name]:>11.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


def child(args: argparse.Namespace) -> int:
    """Set up, warm up, then count one pass (its figures as one JSON line on stdout)."""
    import ctypes

    from bench import cpu_api

    cpu_api.DB_NAME = os.environ["COUNTS_DATABASE"]
    # Before anything reads the settings (``config`` imports its Celery app, which reads them on
    # some commits): the run's own database, which ``_configure`` then makes anew.
    if os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"] = os.environ["DATABASE_URL"].rsplit("/", 1)[0] + "/" + cpu_api.DB_NAME
    helper = ctypes.CDLL(os.environ["COUNTS_HELPER"]) if args.pass_ == "instructions" else None
    devnull = open(os.devnull, "w")  # noqa: SIM115 -- the set-up's chatter, kept off the JSON line
    saved_stdout, sys.stdout = sys.stdout, devnull
    try:
        cpu_api._configure()
        from django.conf import settings

        if args.without:
            left_out = set(args.without)
            settings.MIDDLEWARE = [
                m for m in settings.MIDDLEWARE if m not in left_out and m.rsplit(".", 1)[-1] not in left_out
            ]
        key, post_id, account_id = cpu_api._seed()
        from bench.scenarios.api import draft_body

        draft = json.dumps(draft_body(account_id)).encode()
        calls = {
            "create": (cpu_api.wsgi_caller("POST", "/api/v1/social-posts", key, draft), 201),
            "list": (cpu_api.wsgi_caller("GET", "/api/v1/social-posts?limit=20", key), 200),
            "get": (cpu_api.wsgi_caller("GET", f"/api/v1/social-posts/{post_id}", key), 200),
            "bare": (cpu_api.wsgi_caller("GET", "/healthz", ""), 200),
        }
        for call, expected in calls.values():  # imports, connections, caches, the key's last use
            for _ in range(args.warmup):
                status = call()
                assert status == expected, status
        figures: dict[str, float] = {}
        for name, (call, expected) in calls.items():
            if helper is None:
                from django.db import connection
                from django.test.utils import CaptureQueriesContext

                with CaptureQueriesContext(connection) as captured:
                    statuses = [call() for _ in range(args.n)]
                figures[name] = len(captured.captured_queries) / args.n
                if args.show_statements:
                    print(f"-- {name}, the last call's statements:", file=sys.stderr)
                    calls_sql = [q["sql"] for q in captured.captured_queries]
                    for sql in calls_sql[-int(figures[name]) :] if figures[name] >= 1 else []:
                        print(f"   {sql[:300]}", file=sys.stderr)
            else:
                helper.counts_start()
                statuses = [call() for _ in range(args.n)]
                helper.counts_stop(name.encode())
            assert set(statuses) == {expected}, statuses
    finally:
        sys.stdout = saved_stdout
        devnull.close()
        cpu_api._drop()
    print(json.dumps(figures))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.counts.api", description=__doc__)
    parser.add_argument("-n", type=int, default=100, help="measured calls per endpoint")
    parser.add_argument("--warmup", type=int, default=20, help="calls per endpoint before the measured ones")
    parser.add_argument("--without", action="append", default=[], help="a middleware left out (repeatable)")
    parser.add_argument("--database", help="the database made for the run (default: <DATABASE_URL's>_counts_api)")
    parser.add_argument("--no-valgrind", action="store_true", help="statements only")
    parser.add_argument("--show-statements", action="store_true", help="print one call's SQL per endpoint (stderr)")
    parser.add_argument("--keep", action="store_true", help="keep the callgrind files in var/counts/")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--pass", dest="pass_", choices=("statements", "instructions"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    return child(args) if args.child else parent(args)


if __name__ == "__main__":
    sys.exit(main())
