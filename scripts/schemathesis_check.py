"""``make schemathesis``: the OpenAPI description checked against the live service.

Starts the web process on a database and a Redis database of its own (on the embedded servers
unless DATABASE_URL / REDIS_URL are given), seeds a workspace with an admin key, gives it
through the API what no generated request can make (connected sandbox accounts, a recurring
series, a webhook with a delivery), runs schemathesis with every check, seeded and bounded, its
stateful phase following the description's links from those resources to the operations that
take their ids, then stops the server. Exit status is schemathesis's: 0 when the description
and the service agree.

    .venv/bin/python scripts/schemathesis_check.py [--seed N] [--max-examples N] [-- extra schemathesis args]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

DATABASE_SUFFIX = "_schemathesis"  # next to the database given, so two checkouts' runs never meet
# A hard bound against a hung run; a seeded run of -n 15 takes one to two minutes on an idle
# machine, and ten times that on a loaded one (two shared cores at a load of 9: 9 min of coverage).
RUN_TIMEOUT_SECONDS = 1800
START_TIMEOUT_SECONDS = 60


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _own_database_url(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"{parts.path.rstrip('/') or '/crosspost'}{DATABASE_SUFFIX}"))


def _last_redis_db(url: str) -> int:
    """The server's highest database (tests count up from 1): 63 on the embedded Redis, 15 on a default one."""
    import redis

    client = redis.Redis.from_url(url.replace("redis+socket://", "unix://"), decode_responses=True)
    try:
        databases = client.config_get("databases")
    except redis.ResponseError:  # CONFIG refused (a managed Redis): every server has at least 16
        return 15
    return int(databases["databases"] or 16) - 1


def _own_redis_url(url: str) -> str:
    db = _last_redis_db(url)
    if url.startswith(("redis+socket://", "unix://")):
        return f"{url.split('?', 1)[0]}?db={db}"
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{db}"))


def _recreate_database(url: str) -> None:
    """A fresh, empty database for every run, so a run never depends on the one before."""
    import environ
    import psycopg

    config = environ.Env.db_url_config(url)
    name = config["NAME"]
    with psycopg.connect(
        host=unquote(config.get("HOST") or "") or None,
        port=config.get("PORT") or None,
        user=config.get("USER") or None,
        password=config.get("PASSWORD") or None,
        dbname="postgres",
        autocommit=True,
    ) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


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


# Connected through the sandbox's connect flow, first listed first: the account links lead to the
# first account, and PINTEREST answers its own operation (boards) besides the common ones.
SEEDED_PLATFORMS = ("PINTEREST", "MASTODON")
SEEDED_WEBHOOK_URL = "http://127.0.0.1:9/seeded"  # the discard port, as the hooks' URLs


def _call(base: str, key: str, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    request = urllib.request.Request(  # noqa: S310 (our own server)
        f"{base}/api/v1{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 (our own server)
            answer: dict[str, Any] = json.loads(response.read())
            return answer
    except urllib.error.HTTPError as exc:
        raise SystemExit(f"seeding: {method} {path} answered {exc.code}: {exc.read().decode(errors='replace')}")


def _seed_through_the_api(base: str, key: str) -> None:
    """What a generated request cannot create: accounts (a platform's consent), then a webhook
    and a recurring series on one of them, whose post.scheduled event is the webhook's delivery."""
    _call(base, key, "POST", "/webhooks", {"url": SEEDED_WEBHOOK_URL})
    for platform in SEEDED_PLATFORMS:
        link = _call(base, key, "POST", "/connect-links", {})
        with urllib.request.urlopen(f"{link['url']}/{platform}", timeout=60):  # noqa: S310 (follows the consent redirects)
            pass
    accounts = _call(base, key, "GET", "/social-accounts")["accounts"]
    if [account["platform"] for account in accounts] != list(SEEDED_PLATFORMS):
        raise SystemExit(f"the sandbox connect flow gave {accounts}, not one account of each of {SEEDED_PLATFORMS}")
    tomorrow = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
    _call(
        base,
        key,
        "POST",
        "/social-posts",
        {
            "contentType": "TEXT",
            "text": "Seeded for schemathesis",
            "timezone": "UTC",
            "platforms": ["MASTODON"],
            "mastodonConnectionIds": [accounts[1]["id"]],
            "scheduledAt": tomorrow.isoformat(),
            "recurrence": {"frequency": "DAILY", "maxOccurrences": 3},
        },
    )


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
    # "workspace: Schemathesis (ws_…), role: admin": every case acts there, whatever X-Workspace-Id
    # schemathesis would generate (a random one is only ever 403 workspace_access_denied).
    workspace_id = output.split("(", 1)[1].split(")", 1)[0]
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env["PUBLIC_BASE_URL"] = base
    env["PORT"] = str(port)  # the sandbox simulators are mounted on this same process
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
        _seed_through_the_api(base, key)
        command = [
            str(Path(sys.executable).parent / "schemathesis"),
            "run",
            f"{base}/api/v1/openapi.json",
            "-H",
            f"Authorization: Bearer {key}",
            "-H",
            f"X-Workspace-Id: {workspace_id}",
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
