"""Loopback webhook receivers for the webhooks tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from webhooks.delivery.engine import deliveries_attempt
from webhooks.delivery.transport import SendResult


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Behaviour:
    status: int = 200
    body: bytes = b"ok"
    mode: str = "normal"  # normal | slow | drip_body | drip_headers | silent
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


class Receiver:
    """A threaded HTTP server on 127.0.0.1 recording every request; behaviour set per path."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.behaviours: dict[str, Behaviour] = {}
        self.released = threading.Event()
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with receiver.lock:
                    receiver.requests.append(
                        Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic())
                    )
                    behaviour = receiver.behaviours.get(self.path.split("?")[0], Behaviour())
                receiver.respond(self, behaviour)

            do_GET = do_POST

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def url(self, path: str = "/hook") -> str:
        return f"{self.base}{path}"

    def behave(self, path: str, **kwargs: Any) -> None:
        self.behaviours[path] = Behaviour(**kwargs)

    def to(self, path: str) -> list[Received]:
        with self.lock:
            return [r for r in self.requests if r.path.split("?")[0] == path]

    def respond(self, handler: BaseHTTPRequestHandler, behaviour: Behaviour) -> None:
        wfile = handler.wfile
        try:
            if behaviour.mode == "silent":
                self.released.wait(60)
                return
            if behaviour.mode == "slow":
                self.released.wait(behaviour.delay)
            head = f"HTTP/1.1 {behaviour.status} X\r\n"
            for name, value in behaviour.headers.items():
                head += f"{name}: {value}\r\n"
            if behaviour.mode == "drip_body":
                head += "Content-Length: 100000\r\n\r\n"
                wfile.write(head.encode())
                wfile.flush()
                for _ in range(1000):
                    if self.released.wait(behaviour.delay):
                        return
                    wfile.write(b"x")
                    wfile.flush()
                return
            head += f"Content-Length: {len(behaviour.body)}\r\nConnection: close\r\n\r\n"
            if behaviour.mode == "drip_headers":
                for byte in head.encode():
                    if self.released.wait(behaviour.delay):
                        return
                    wfile.write(bytes([byte]))
                    wfile.flush()
                wfile.write(behaviour.body)
                return
            wfile.write(head.encode() + behaviour.body)
            wfile.flush()
        except OSError:
            pass

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def attempt_one(delivery_id: str) -> SendResult | None:
    """The next attempt of one delivery (``deliveries_attempt`` with a batch of one): what it got
    back, or None when nothing was sent (not due, held by another worker, closed)."""
    return deliveries_attempt(delivery_ids=[delivery_id]).get(delivery_id)


@pytest.fixture
def allow_private(settings: Any) -> None:
    """Loopback receivers are private targets: admit them as local testing does."""
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True


@pytest.fixture
def fast_retries(settings: Any) -> None:
    settings.WEBHOOK_RETRY_DELAYS = [0.0, 0.0, 0.0, 0.0, 0.0]
    settings.WEBHOOK_TIMEOUT_SECONDS = 1.0


@pytest.fixture
def public_dns(monkeypatch: pytest.MonkeyPatch) -> Callable[[dict[str, list[str]]], None]:
    """Answer ``socket.getaddrinfo`` for the given names (our resolver's one lookup)."""
    import socket

    real = socket.getaddrinfo
    table: dict[str, list[str]] = {}

    def fake(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host in table:
            return [
                (socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port))
                for ip in table[host]
            ]
        if isinstance(host, str) and host not in {"127.0.0.1", "localhost"}:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)

    def set_answers(answers: dict[str, list[str]]) -> None:
        table.clear()
        table.update(answers)

    return set_answers
