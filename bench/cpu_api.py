"""``python -m bench.cpu_api [-n N] [--profile NAME]``: CPU time per request of the ``api``
scenario's endpoints, measured in this one process (``time.process_time`` around N WSGI calls of
the Django application, no server, no load generator), so the figure does not depend on what the
other sessions of a shared machine are doing; beside it, the CPU the PostgreSQL backend serving
those calls used (from ``/proc``, when the server runs on this machine).

It seeds its own database (``crosspost_cpu`` on the configured PostgreSQL server, embedded by
default; dropped at the end) with the ``api`` scenario's shape at a smaller scale (the SQL stays
index-driven, so the per-request CPU of the web process does not depend on the table size), then
times ``/healthz``, the list of 20, a get and a draft creation, several rounds interleaved, and
prints the median per request. ``--profile list`` prints cProfile's top functions for that one."""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DB_NAME = "crosspost_cpu"
POSTS = 50_000
WORKSPACES = 10


def _configure() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.update(DEBUG="0", LOG_LEVEL="WARNING", RATE_LIMIT_DEFAULT="100000000")
    from config import embedded

    embedded.ensure_services()  # the embedded PostgreSQL and Redis where no URL is set
    os.environ["DATABASE_URL"] = os.environ["DATABASE_URL"].rsplit("/", 1)[0] + "/" + DB_NAME
    import django
    import psycopg
    from django.conf import settings

    django.setup()
    db = settings.DATABASES["default"]
    admin = {"host": db["HOST"], "port": db.get("PORT") or None, "user": db["USER"], "dbname": "postgres"}
    if db.get("PASSWORD"):
        admin["password"] = db["PASSWORD"]
    with psycopg.connect(**{k: v for k, v in admin.items() if v}, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def _drop() -> None:
    import psycopg
    from django.conf import settings
    from django.db import connections

    connections.close_all()
    db = settings.DATABASES["default"]
    admin = {"host": db["HOST"], "port": db.get("PORT") or None, "user": db["USER"], "dbname": "postgres"}
    with psycopg.connect(**{k: v for k, v in admin.items() if v}, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')


def _seed() -> tuple[str, str, str]:
    from bench.context import Bench
    from bench.scenarios import api

    saved = api.POSTS, api.WORKSPACES
    api.POSTS, api.WORKSPACES = POSTS, WORKSPACES
    try:
        from bench.report import Report

        api.seed_posts(None, Report("api"))  # type: ignore[arg-type]
    finally:
        api.POSTS, api.WORKSPACES = saved
    key = Bench.api_key(None, "ws_api_0")  # type: ignore[arg-type]
    return key, "post_api_00000010", "acc_api_0_0"


def wsgi_caller(method: str, path: str, key: str, body: bytes = b"") -> Callable[[], int]:
    from django.core.handlers.wsgi import WSGIHandler

    app = WSGIHandler()
    route, _, query = path.partition("?")
    status: list[str] = []

    def start_response(code: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
        status.append(code)
        return lambda data: None

    def call() -> int:
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": route,
            "QUERY_STRING": query,
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "REMOTE_ADDR": "127.0.0.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": "127.0.0.1:8000",
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            "wsgi.version": (1, 0),
        }
        if key:
            environ["HTTP_AUTHORIZATION"] = f"Bearer {key}"
        if body:
            environ["CONTENT_TYPE"] = "application/json"
            environ["CONTENT_LENGTH"] = str(len(body))
        status.clear()
        response = app(environ, start_response)
        for _ in response:
            pass
        response.close()
        return int(status[0].split()[0])

    return call


def backend_cpu() -> tuple[int, float | None]:
    """The pid of the PostgreSQL backend serving this process's connection and the CPU seconds it
    has used, read from ``/proc`` when that server runs on this machine (the embedded one, or a
    local one we may read); None for the seconds elsewhere."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = int(cursor.fetchone()[0])
    try:
        if Path(f"/proc/{pid}/comm").read_text().strip() != "postgres":
            return pid, None
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return pid, None
    return pid, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


@dataclass
class CpuSamples:
    """CPU ms per request, one sample per round: of this process, and of the PostgreSQL backend
    that served it (a round is left out there when its connection changed or is not readable)."""

    web: dict[str, list[float]]
    postgres: dict[str, list[float]]


def cpu_samples(calls: dict[str, tuple[Callable[[], int], int]], *, n: int, rounds: int) -> CpuSamples:
    """CPU ms per request of each call, one sample per round, the calls interleaved by round
    (after a warm-up that also checks each answers its expected status)."""
    for call, expected in calls.values():  # imports, connections, the key's last use
        for _ in range(20):
            status = call()
            assert status == expected, status
    samples = CpuSamples(web={name: [] for name in calls}, postgres={name: [] for name in calls})
    for _ in range(rounds):
        for name, (call, _expected) in calls.items():
            pid, backend_started = backend_cpu()
            started = time.process_time()
            for _ in range(n):
                call()
            samples.web[name].append((time.process_time() - started) / n * 1000)
            pid_after, backend_ended = backend_cpu()
            if pid_after == pid and backend_started is not None and backend_ended is not None:
                samples.postgres[name].append((backend_ended - backend_started) / n * 1000)
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cpu_api", description=__doc__)
    parser.add_argument("-n", type=int, default=300, help="requests per endpoint per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", choices=("bare", "list", "get", "create"), action="append")
    args = parser.parse_args(argv)
    _configure()
    try:
        key, post_id, account_id = _seed()
        from bench.scenarios.api import draft_body

        draft = json.dumps(draft_body(account_id)).encode()
        calls = {
            "bare": (wsgi_caller("GET", "/healthz", ""), 200),
            "list": (wsgi_caller("GET", "/api/v1/social-posts?limit=20", key), 200),
            "get": (wsgi_caller("GET", f"/api/v1/social-posts/{post_id}", key), 200),
            "create": (wsgi_caller("POST", "/api/v1/social-posts", key, draft), 201),
        }
        samples = cpu_samples(calls, n=args.n, rounds=args.rounds)
        bare = statistics.median(samples.web["bare"])
        print(f"CPU ms per request (median of {args.rounds} rounds × {args.n}; min–max):")
        for name, values in samples.web.items():
            median = statistics.median(values)
            line = f"  {name:7} {median:7.3f}  ({min(values):.3f}–{max(values):.3f})  ×{median / bare:5.1f} bare"
            backend = samples.postgres[name]
            if backend:
                line += f"   PostgreSQL {statistics.median(backend):.3f}"
            print(line)
        for name in args.profile or []:
            call = calls[name][0]
            profiler = cProfile.Profile(time.process_time)  # CPU, not waits on PostgreSQL
            profiler.enable()
            for _ in range(args.n):
                call()
            profiler.disable()
            out = io.StringIO()
            stats = pstats.Stats(profiler, stream=out)
            print(f"\n== {name}: {stats.total_calls / args.n:.0f} function calls per request")  # type: ignore[attr-defined]
            stats.sort_stats("cumulative").print_stats(60)
            stats.sort_stats("tottime").print_stats(25)
            print(out.getvalue())
    finally:
        _drop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
