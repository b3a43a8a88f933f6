"""What the wire saw of one platform call: whether the request reached the connection pool and
whether any byte of it was written to a socket.

An exception type alone does not say whether a request left: a TLS handshake that times out is a
``ReadTimeout``, a refused connection and a connection reset after the request are both a
``ConnectionError``, and an ``SSLError`` comes from the handshake or from reading the answer alike.
So the sessions of the platform clients (:func:`tracking_adapter`) use urllib3 connections that
note the moment the first byte of a request is written (after the TCP connect and the TLS
handshake), and :func:`watching` collects those notes for one call. A call that reached the pool
and wrote nothing (refused, DNS failure, connect or handshake failure or timeout, no connection
from the pool) was never sent; one that wrote anything may have been acted on.

urllib3 never re-sends on its own here: the adapter keeps requests' ``max_retries=0`` (urllib3's
``Retry(0, read=False)``): one connection attempt, no retry after an error. A keep-alive connection
the server closed while it sat in the pool is noticed before reuse (urllib3 drops it and connects
anew, nothing written yet); one that fails after the request was written on it is "maybe sent",
like any other failure after writing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.response import BaseHTTPResponse


@dataclass
class Wire:
    """One call's transport: ``reached_pool`` (the real transport ran, not a test double in its
    place) and ``written`` (a byte of the request went to a socket)."""

    reached_pool: bool = False
    written: bool = False


_wire: ContextVar[Wire | None] = ContextVar("platform_wire", default=None)


@contextmanager
def watching() -> Iterator[Wire]:
    """The :class:`Wire` of the calls made inside the block (on this thread)."""
    wire = Wire()
    token = _wire.set(wire)
    try:
        yield wire
    finally:
        _wire.reset(token)


def _before_write(conn: HTTPConnection) -> None:
    """Connect first (the TCP connect and the TLS handshake: a failure there sends nothing), then
    note that a byte of the request is about to go out."""
    if conn.sock is None:
        conn.connect()
    wire = _wire.get()
    if wire is not None:
        wire.written = True


class _HTTPConnection(HTTPConnection):
    def send(self, data: Any) -> None:
        _before_write(self)
        super().send(data)


class _HTTPSConnection(HTTPSConnection):
    def send(self, data: Any) -> None:
        _before_write(self)
        super().send(data)


def _note_pool() -> None:
    wire = _wire.get()
    if wire is not None:
        wire.reached_pool = True


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection

    def urlopen(self, *args: Any, **kwargs: Any) -> BaseHTTPResponse:
        _note_pool()
        return super().urlopen(*args, **kwargs)


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection

    def urlopen(self, *args: Any, **kwargs: Any) -> BaseHTTPResponse:
        _note_pool()
        return super().urlopen(*args, **kwargs)


class TrackingAdapter(HTTPAdapter):
    """requests' adapter whose pools use the write-noting connections."""

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}


def tracking_adapter(**kwargs: Any) -> TrackingAdapter:
    """An adapter for a platform session (``kwargs`` as for ``HTTPAdapter``; no retries)."""
    return TrackingAdapter(max_retries=0, **kwargs)
