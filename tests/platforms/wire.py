"""A tiny loopback server for the transport tests: it accepts connections on its own thread and
does one scripted thing with each (answer, drop the connection after reading the request, reset
it, hold it, speak plain text to a TLS client), recording what it read."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

OK_MESSAGE = b'{"ok": true, "result": {"message_id": 7, "date": 1700000000, "chat": {"id": -1001, "username": "c"}}}'


@dataclass
class Seen:
    """What the server read: one entry per connection, the bytes read on it."""

    connections: list[bytes] = field(default_factory=list)
    ended: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))  # one per closed connection

    def requests(self) -> int:
        return sum(data.count(b"HTTP/1.1\r\n") for data in self.connections)


def read_request(conn: socket.socket) -> bytes:
    """One whole HTTP request (headers, then as many body bytes as Content-Length says)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def drop_after_request(conn: socket.socket, seen: bytearray, release: threading.Event) -> None:
    seen += read_request(conn)


def reset_after_request(conn: socket.socket, seen: bytearray, release: threading.Event) -> None:
    seen += read_request(conn)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def hold_after_request(conn: socket.socket, seen: bytearray, release: threading.Event) -> None:
    seen += read_request(conn)
    release.wait(30)


def hold_silent(conn: socket.socket, seen: bytearray, release: threading.Event) -> None:
    """Accept and say nothing (a TLS client waits for the server's hello)."""
    release.wait(30)


def plain_text_to_tls(conn: socket.socket, seen: bytearray, release: threading.Event) -> None:
    seen += conn.recv(65536)  # the client's hello
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def answer_then_close(conn: socket.socket, seen: bytearray, release: threading.Event) -> None:
    """Answer one request keeping the connection alive, then close it: the client's pool now holds
    a connection the server has closed."""
    seen += read_request(conn)
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\n"
        + b"Content-Length: %d\r\n\r\n" % len(OK_MESSAGE)
        + OK_MESSAGE
    )


Behaviour = Callable[[socket.socket, bytearray, threading.Event], None]


@contextmanager
def serving(behaviour: Behaviour, *, on_request: Callable[[], None] | None = None) -> Iterator[tuple[int, Seen]]:
    """A server doing ``behaviour`` with every connection (then closing it); yields its port and
    what it read. ``on_request`` runs on the server's thread before the behaviour."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    seen = Seen()
    release = threading.Event()
    closed = threading.Event()

    def handle(conn: socket.socket) -> None:
        data = bytearray()
        try:
            if on_request is not None:
                on_request()
            behaviour(conn, data, release)
        except OSError:
            pass
        finally:
            seen.connections.append(bytes(data))
            conn.close()
            seen.ended.release()

    handlers: list[threading.Thread] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            if closed.is_set():  # the wake-up connection below: the test is over
                conn.close()
                return
            handler = threading.Thread(target=handle, args=(conn,), daemon=True)
            handlers.append(handler)
            handler.start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    port = int(listener.getsockname()[1])
    try:
        yield port, seen
    finally:
        closed.set()
        release.set()
        # Closing the listener does not wake a thread blocked in accept() (not on Linux): the join
        # below waited out its whole timeout after every test. A connection of our own wakes it.
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        thread.join(10)
        listener.close()
        # What each connection read is recorded when its handler ends (released above): the test
        # reads it after this block, so every handler has finished by then.
        for handler in handlers:
            handler.join(10)
