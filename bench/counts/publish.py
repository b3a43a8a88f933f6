"""The worker's cost per published entry, in counts that load does not move.

``python -m bench.counts.publish`` publishes batches of 48 entries (16 posts × Mastodon, Telegram,
Bluesky, accounts connected through the simulators' connect flow) in-process through
``publish_targets``, the worker's own entry point (its thread pool of ``PUBLISH_ATTEMPT_THREADS``),
against the simulators over real HTTP (a separate gunicorn, as ``bench/stack.py`` starts them), in
two passes of a fresh database:

- **statements**, at full speed (simulator latency 100 ms): the SQL statements of every connection
  of the process (Django's ``execute_wrapper``) and the transactions' ``BEGIN``/``COMMIT`` (counted
  at ``commit``/``rollback``), per entry;
- **instructions**, under valgrind's callgrind with instrumentation switched on only around the
  measured window (``CALLGRIND_START_INSTRUMENTATION``/``STOP``/``DUMP_STATS``, from a small C
  helper compiled on the fly): instructions (``Ir``) per entry, every thread of the process. Under
  valgrind the process runs ~50× slower, so the simulators' latency (4 s), the gathering window
  (1 s) and the lease (2 h) are scaled with it and answers group as they do at full speed. The same
  pass measures the transport: keep-alive ``POST``s through ``platforms.http.send`` on the calling
  thread's platform session, to a simulator without latency, per call.

The driver imports nothing of its tree that 338c1b0 lacks, so copied into a worktree of another
commit it measures that commit (``docs/benchmarks.md``). It uses the PostgreSQL server of
``DATABASE_URL`` (a database of its own, ``<name>_counts``, dropped and made anew) and flushes the
Redis database of ``REDIS_URL``: point that at one nobody else uses. ``--keep`` leaves the
callgrind files (``var/counts/``) for ``callgrind_annotate --inclusive=yes``; ``--profile FILE``
writes a cProfile (CPU time) of the full-speed window, of the thread that runs the batches (claim,
reads, outcomes, events; the platform calls run on the pool's threads), for ``pstats``."""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.counts import callgrind

ROOT = Path(__file__).resolve().parents[2]
OUT_DIR = ROOT / "var" / "counts"
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable
POSTS_PER_BATCH = 16  # × 3 platforms: 48 entries a batch
# Under valgrind: the simulators' latency, the gathering window and the lease, scaled.
VALGRIND_LATENCY_MS = 4000
VALGRIND_GATHER_SECONDS = 1.0


# --- the parent: database, simulators, the two passes -------------------------------------


def _env(database_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "TEST_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        PLATFORM_MODE="sandbox",
        DEBUG="0",
        LOG_LEVEL="WARNING",
        DATABASE_URL=database_url,
        RATE_LIMIT_DEFAULT="100000000",
        CROSSPOST_VAR_DIR=str(OUT_DIR / "var"),
        **extra,
    )
    return env


def _database(url: str) -> str:
    from bench.stack import admin_conninfo, with_database

    name = url.rsplit("/", 1)[-1].split("?")[0] + "_counts"
    import psycopg

    with psycopg.connect(**admin_conninfo(url), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    database_url = with_database(url, name)
    subprocess.run(
        [PYTHON, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=ROOT, env=_env(database_url), check=True
    )
    return database_url


def _gunicorn(env: dict[str, str], latency_ms: int) -> tuple[subprocess.Popen[bytes], str]:
    import requests

    from bench.stack import free_port, wait_for

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**env, "SANDBOX_LATENCY_MS": str(latency_ms), "WEB_THREADS": "48", "PORT": str(port)}
    env.update(PUBLIC_BASE_URL=url, SANDBOX_BASE_URL=f"{url}/sandbox", WEBHOOK_ALLOW_PRIVATE_URLS="1")
    log = open(OUT_DIR / f"gunicorn-{port}.log", "ab")  # noqa: SIM115 (owned by the child)
    args = [PYTHON, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", "2", "--timeout", "600"]
    conf = ROOT / "config" / "gunicorn.py"
    if not (conf.exists() and "wsgi_app" in conf.read_text()):  # older trees: no application, no threads
        args += ["--worker-class", "gthread", "--threads", "48", "config.wsgi:application"]
    process = subprocess.Popen(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    wait_for(lambda: requests.get(f"{url}/healthz", timeout=2).ok, timeout=120, what=f"{url}/healthz")
    return process, url


def _stop(process: subprocess.Popen[bytes]) -> None:
    import signal

    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=60)


def _child(args: list[str], env: dict[str, str], valgrind: bool) -> dict[str, Any]:
    command = [PYTHON, "-m", "bench.counts.publish", "--child", *args]
    if valgrind:
        env = {**env, "COUNTS_HELPER": str(callgrind.helper(OUT_DIR))}
        out = OUT_DIR / "callgrind.out"
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", *command]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    lines = [line for line in result.stdout.splitlines() if line.startswith("COUNTS ")]
    if result.returncode != 0 or not lines:
        raise RuntimeError(f"the measuring process failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return dict(json.loads(lines[-1][len("COUNTS ") :]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=8, help="measured batches at full speed (statements)")
    parser.add_argument("--valgrind-batches", type=int, default=4, help="measured batches under callgrind")
    parser.add_argument("--calls", type=int, default=200, help="measured transport calls under callgrind")
    parser.add_argument("--skip-valgrind", action="store_true", help="statements only")
    parser.add_argument(
        "--profile", help="write the full-speed window's cProfile (CPU time, the batches' own thread) to this file"
    )
    parser.add_argument("--keep", action="store_true", help="keep the callgrind files in var/counts/")
    parser.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child is not None:
        _measure(options.child)
        return
    shutil.rmtree(OUT_DIR, ignore_errors=True)
    OUT_DIR.mkdir(parents=True)
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    import redis
    from django.conf import settings

    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    figures: dict[str, Any] = {"commit": _commit()}
    database_url = _database(os.environ["DATABASE_URL"])
    env = _env(database_url)
    server, url = _gunicorn(env, 100)
    try:
        profile = {"COUNTS_PROFILE": str(Path(options.profile).resolve())} if options.profile else {}
        child_env = {**env, **_sandbox(url), **profile}
        figures["statements"] = _child(["statements", url, str(options.batches)], child_env, False)
    finally:
        _stop(server)
    if not options.skip_valgrind:
        slow, slow_url = _gunicorn(env, VALGRIND_LATENCY_MS)
        fast, fast_url = _gunicorn(env, 0)
        try:
            child_env = {**env, **_sandbox(slow_url), "PUBLISH_LEASE_SECONDS": "7200"}
            args = ["instructions", slow_url, str(options.valgrind_batches), fast_url, str(options.calls)]
            figures["instructions"] = _child(args, child_env, True)
        finally:
            _stop(slow)
            _stop(fast)
        dumps = callgrind.dumps(OUT_DIR / "callgrind.out")
        published = figures["instructions"]["published"]
        figures["instructions"]["Ir per entry"] = round(dumps["publish"] / max(published, 1))
        figures["instructions"]["Ir per transport call"] = round(dumps["transport"] / options.calls)
        if not options.keep:
            for path in OUT_DIR.glob("callgrind.out*"):
                path.unlink()
    print(json.dumps(figures, indent=2))


def _commit() -> str:
    result = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return result.stdout.strip()


def _sandbox(url: str) -> dict[str, str]:
    return {"PUBLIC_BASE_URL": url, "SANDBOX_BASE_URL": f"{url}/sandbox"}


# --- the child: set-up, warm-up, the measured window --------------------------------------


class _Counter:
    """Statements of every connection of this process and the BEGIN/COMMIT of its transactions."""

    def __init__(self) -> None:
        self.statements = 0
        self.transactions = 0

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        self.statements += 1
        return execute(sql, params, many, context)

    def install(self) -> None:
        from django.db.backends.signals import connection_created

        def created(sender: Any, connection: Any, **kwargs: Any) -> None:
            connection.execute_wrappers.append(self)
            commit, rollback = connection.commit, connection.rollback

            def counted_commit() -> None:
                self.transactions += 1
                commit()

            def counted_rollback() -> None:
                self.transactions += 1
                rollback()

            connection.commit, connection.rollback = counted_commit, counted_rollback

        connection_created.connect(created, weak=False)


def _measure(args: list[str]) -> None:
    import ctypes

    import django

    django.setup()
    from django.db import close_old_connections

    import core.work
    from bench.context import Bench
    from bench.scenarios import publishing
    from posts.models import PostTarget
    from posts.pipeline.dispatcher import dispatch_due
    from posts.pipeline.publisher import publish_targets

    kind, url, batches = args[0], args[1], int(args[2])
    helper = ctypes.CDLL(os.environ["COUNTS_HELPER"]) if "COUNTS_HELPER" in os.environ else None
    if helper is not None:
        core.work.GATHER_SECONDS = VALGRIND_GATHER_SECONDS
    close_old_connections()
    counter = _Counter()
    counter.install()

    class _Stack:
        web_url = url
        sandbox_url = url

    bench = Bench(stack=_Stack())  # type: ignore[arg-type]
    run, _ = publishing.seed_due_posts(
        bench, tag="counts", posts=POSTS_PER_BATCH * (batches + 1), due_sql="0", targets_per_post=3, start=time.time()
    )
    time.sleep(1.0)  # due
    dispatch_due()  # as beat's dispatcher does: the posts PENDING, their entries queued (no one consumes them)

    def batch(b: int) -> list[str]:
        return [f"pt_{run}_{g}_{k}" for g in range(b * POSTS_PER_BATCH, (b + 1) * POSTS_PER_BATCH) for k in range(3)]

    publish_targets(batch(0))  # the warm-up: the thread pool, the connections, the imports
    statements, transactions = counter.statements, counter.transactions
    attempted = 0
    profiler = cProfile.Profile(time.process_time) if "COUNTS_PROFILE" in os.environ else None
    if helper is not None:
        helper.counts_start()
    if profiler is not None:
        profiler.enable()
    for b in range(1, batches + 1):
        attempted += publish_targets(batch(b))
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(os.environ["COUNTS_PROFILE"])
    if helper is not None:
        helper.counts_stop(b"publish")
    measured = [i for b in range(1, batches + 1) for i in batch(b)]
    published = PostTarget.objects.filter(id__in=measured, status="PUBLISHED").count()
    figures: dict[str, Any] = {"entries": len(measured), "attempted": attempted, "published": published}
    statements, transactions = counter.statements - statements, counter.transactions - transactions
    figures["statements per entry"] = round(statements / max(published, 1), 2)
    figures["BEGIN/COMMIT per entry"] = round(2 * transactions / max(published, 1), 2)
    figures["statements with BEGIN/COMMIT per entry"] = round((statements + 2 * transactions) / max(published, 1), 2)
    if kind == "instructions" and helper is not None:
        figures["transport calls"] = _transport(helper, args[3], int(args[4]))
    print("COUNTS " + json.dumps(figures), flush=True)


def _transport(helper: Any, url: str, calls: int) -> int:
    """``calls`` keep-alive POSTs through ``platforms.http.send`` on this thread's platform session,
    after 50 unmeasured ones."""
    from platforms import http
    from platforms.base import thread_session

    target = f"{url}/sandbox/bluesky/xrpc/com.atproto.server.createSession"
    body = {"identifier": "counts.bsky.social", "password": "sandbox"}
    session = thread_session()
    for _ in range(50):
        http.send(session, "POST", target, timeout=60, json=body)
    helper.counts_start()
    for _ in range(calls):
        http.send(session, "POST", target, timeout=60, json=body)
    helper.counts_stop(b"transport")
    return calls


if __name__ == "__main__":
    main()
