"""One POST to a vetted, pinned address under a total wall-clock deadline.

The host is resolved once and every address checked (``url_safety.resolve_target``); the socket
is opened to that address while the Host header, TLS SNI and certificate check use the name, so
a second DNS answer cannot redirect the request. Nothing here reads proxy settings from the
environment, and redirects are never followed. A watchdog shuts the socket down when the
deadline passes, so a receiver that drips its headers or body a byte at a time is cut off at
the deadline, not at a per-read timeout.
"""

from __future__ import annotations

import contextlib
import heapq
import http.client
import itertools
import os
import socket
import ssl
import threading
import time
from dataclasses import dataclass

from webhooks.url_safety import Target, UnsafeUrl, resolve_target

MAX_KEPT_BODY = 4096


@dataclass(frozen=True)
class SendResult:
    status_code: int | None  # None: no HTTP response arrived
    error: str  # empty on success
    response_body: str  # at most the first 4 KB, decoded leniently
    duration_ms: int

    @property
    def ok(self) -> bool:
        return not self.error and self.status_code is not None and 200 <= self.status_code < 300


class _Deadline:
    """Shuts down every socket registered with it when the time is up."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends_at = time.monotonic() + seconds
        self.expired = False
        self.cancelled = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        _watchdog.watch(self)

    def remaining(self) -> float:
        left = self.ends_at - time.monotonic()
        if left <= 0:
            raise TimeoutError("deadline reached")
        return left

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            if self.expired:
                sock.close()
                raise TimeoutError("deadline reached")
            self._sockets.append(sock)

    def expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def cancel(self) -> None:
        self.cancelled = True


class _Watchdog:
    """One thread per process expires every deadline when its time comes (a timer thread for each
    POST cost a thread start per send). Started on first use, and again in a forked child."""

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._wake = threading.Condition()
        self._heap: list[tuple[float, int, _Deadline]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, deadline: _Deadline) -> None:
        with self._wake:
            heapq.heappush(self._heap, (deadline.ends_at, next(self._order), deadline))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="webhook-deadlines", daemon=True)
                self._thread.start()
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._heap:
                    self._wake.wait()
                ends_at, _, deadline = self._heap[0]
                if not deadline.cancelled:
                    left = ends_at - time.monotonic()
                    if left > 0:
                        self._wake.wait(left)
                        continue
                heapq.heappop(self._heap)
            if not deadline.cancelled:
                deadline.expire()


_watchdog = _Watchdog()


class _PinnedHTTPConnection(http.client.HTTPConnection):
    io_sock: socket.socket

    def __init__(self, target: Target, address: str, deadline: _Deadline) -> None:
        super().__init__(target.host, target.port, timeout=deadline.remaining())
        self._address = address
        self._deadline = deadline

    def _open(self) -> socket.socket:
        sock = socket.create_connection((self._address, self.port), self._deadline.remaining())
        self._deadline.watch(sock)
        return sock

    def connect(self) -> None:
        self.sock = self.io_sock = self._open()


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    io_sock: socket.socket

    def __init__(self, target: Target, address: str, deadline: _Deadline, context: ssl.SSLContext) -> None:
        super().__init__(target.host, target.port, timeout=deadline.remaining(), context=context)
        self._address = address
        self._deadline = deadline
        self._tls = context

    def connect(self) -> None:
        raw = socket.create_connection((self._address, self.port), self._deadline.remaining())
        self._deadline.watch(raw)
        self.sock = self.io_sock = self._tls.wrap_socket(raw, server_hostname=self.host)


def _connection(target: Target, address: str, deadline: _Deadline) -> _PinnedHTTPConnection | _PinnedHTTPSConnection:
    if target.scheme == "https":
        return _PinnedHTTPSConnection(target, address, deadline, ssl.create_default_context())
    return _PinnedHTTPConnection(target, address, deadline)


def _clean(raw: bytes) -> str:
    return raw[:MAX_KEPT_BODY].decode("utf-8", errors="replace").replace("\x00", "\ufffd")


def post(*, url: str, body: bytes, headers: dict[str, str], timeout: float) -> SendResult:
    """POST ``body`` to ``url``; never raises for anything the receiver or the network does."""
    started = time.monotonic()

    def done(status: int | None, error: str, kept: bytes = b"") -> SendResult:
        return SendResult(status, error, _clean(kept), int((time.monotonic() - started) * 1000))

    # One deadline for the whole attempt: the name lookup (on the receiver owner's DNS) spends
    # from the same seconds as connecting, sending and reading.
    try:
        target = resolve_target(url, timeout=timeout)
    except UnsafeUrl as exc:
        return done(None, f"refused: {exc}")
    left = timeout - (time.monotonic() - started)
    if left <= 0:
        return done(None, f"timed out: no complete response within {timeout:g} s")
    deadline = _Deadline(left)
    status: int | None = None
    kept = b""
    try:
        conn = _connect_first(target, deadline)
        try:
            conn.request("POST", target.path, body=body, headers=headers)
            response = conn.getresponse()
            status = response.status
            while len(kept) < MAX_KEPT_BODY:
                # http.client drops conn.sock once the response owns the stream; the socket lives on.
                conn.io_sock.settimeout(deadline.remaining())
                piece = response.read1(MAX_KEPT_BODY - len(kept))
                if not piece:
                    break
                kept += piece
            if deadline.expired:
                raise TimeoutError("deadline reached")
        finally:
            conn.close()
    except TimeoutError:
        return done(status, f"timed out: no complete response within {timeout:g} s", kept)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if deadline.expired:
            return done(status, f"timed out: no complete response within {timeout:g} s", kept)
        return done(status, _describe(exc), kept)
    finally:
        deadline.cancel()
    assert status is not None
    if 300 <= status < 400:
        return done(status, f"redirect not followed (HTTP {status})", kept)
    if not 200 <= status < 300:
        return done(status, f"HTTP {status}", kept)
    return done(status, "", kept)


def _connect_first(target: Target, deadline: _Deadline) -> _PinnedHTTPConnection | _PinnedHTTPSConnection:
    """Connect to the first vetted address that accepts; only vetted addresses are tried."""
    last_error: Exception | None = None
    for address in target.addresses:
        conn = _connection(target, address, deadline)
        try:
            conn.connect()
            return conn
        except TimeoutError:
            conn.close()
            raise
        except OSError as exc:
            conn.close()
            last_error = exc
    raise last_error or OSError("no address to connect to")


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLError):
        return f"TLS error: {exc.reason or exc}"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, http.client.HTTPException):
        return f"invalid HTTP response: {type(exc).__name__}"
    return f"connection failed: {exc.strerror or exc}" if isinstance(exc, OSError) else f"error: {exc}"
