"""``make schemathesis``: the OpenAPI description checked against the live service.

Starts the web process on a database and a Redis database of its own (on the embedded servers
unless DATABASE_URL / REDIS_URL are given), seeds a workspace with an admin key, runs
schemathesis with every check, seeded and bounded, then stops the server. Exit status is
schemathesis's: 0 when the description and the service agree.

    .venv/bin/python scripts/schemathesis_check.py [--seed N] [--max-examples N] [-- extra schemathesis args]
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

DATABASE_NAME = "crosspost_schemathesis"
REDIS_DB = 63  # the embedded Redis has 64 databases; tests use 1 + worker index
RUN_TIMEOUT_SECONDS = 600  # a hard bound; a seeded run of -n 15 takes one to two minutes
START_TIMEOUT_SECONDS = 60


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _own_database_url(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{DATABASE_NAME}"))


def _own_redis_url(url: str) -> str:
    if url.startswith(("redis+socket://", "unix://")):
        return f"{url.split('?', 1)[0]}?db={REDIS_DB}"
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{REDIS_DB}"))


def _recreate_database(url: str) -> None:
    """A fresh, empty database for every run, so a run never depends on the one before."""
    import environ
    import psycopg

    config = environ.Env.db_url_config(url)
    with psycopg.connect(
        host=unquote(config.get("HOST") or "") or None,
        port=config.get("PORT") or None,
        user=config.get("USER") or None,
        password=config.get("PASSWORD") or None,
        dbname="postgres",
        autocommit=True,
    ) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DATABASE_NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')


def _flush_redis(url: str) -> None:
    import redis

    redis.Redis.from_url(url.replace("redis+socket://", "unix://")).flushdb()


def _environment() -> dict[str, str]:
    os.environ.setdefault("PLATFORM_MODE", "sandbox")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from config import embedded

    embedded.ensure_services()
    env = dict(os.environ)
    env["DATABASE_URL"] = _own_database_url(os.environ["DATABASE_URL"])
    env["REDIS_URL"] = _own_redis_url(os.environ["REDIS_URL"])
    env.pop("TESTING", None)
    # Webhook receivers on loopback (the hooks point generated URLs there), and no limit on how
    # many a workspace registers (schemathesis creates one per case).
    env["WEBHOOK_ALLOW_PRIVATE_URLS"] = "1"
    env["WEBHOOK_MAX_PER_WORKSPACE"] = "1000000"
    return env


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=BASE_DIR, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout


def _wait_until_up(base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while True:
        if server.poll() is not None:
            raise SystemExit(f"the web process exited with {server.returncode} before answering")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2) as response:  # noqa: S310 (our own server)
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"the web process did not answer {base}/healthz within {START_TIMEOUT_SECONDS} s")
        time.sleep(0.2)  # polling a readiness endpoint, not synchronising on a guess


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--max-examples", type=int, default=15)
    parser.add_argument("extra", nargs="*", help="passed to schemathesis run (after --)")
    options = parser.parse_args()

    env = _environment()
    _recreate_database(env["DATABASE_URL"])
    _flush_redis(env["REDIS_URL"])
    _manage(env, "migrate", "--no-input", "-v", "0")
    output = _manage(
        env,
        "create_api_key",
        "--workspace",
        "Schemathesis",
        "--create-workspace",
        "--role",
        "admin",
        "--rate-limit",
        "1000000",
    )
    key = output.strip().splitlines()[-1]
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env["PUBLIC_BASE_URL"] = base
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "--graceful-timeout",
            "5",
            "--log-level",
            "warning",
        ],
        cwd=BASE_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    try:
        _wait_until_up(base, server)
        command = [
            str(Path(sys.executable).parent / "schemathesis"),
            "run",
            f"{base}/api/v1/openapi.json",
            "-H",
            f"Authorization: Bearer {key}",
            "--checks",
            "all",
            "-n",
            str(options.max_examples),
            "--seed",
            str(options.seed),
            "--generation-database",
            "none",
            "--no-color",
            *options.extra,
        ]
        print(
            f"schemathesis against {base} (seed {options.seed}, {options.max_examples} examples per operation)",
            flush=True,
        )
        try:
            return subprocess.run(command, cwd=BASE_DIR, env=env, timeout=RUN_TIMEOUT_SECONDS).returncode
        except subprocess.TimeoutExpired:
            print(f"schemathesis did not finish within {RUN_TIMEOUT_SECONDS} s", flush=True)
            return 1
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


if __name__ == "__main__":
    sys.exit(main())
