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

A platform session (:class:`PlatformSession`) sends a plain call (no cookies, auth, proxies or
per-call options of its own: every call the platform clients make) on a shorter path than
``requests.Session.request``: the request is prepared from the call and the session's headers
alone (no merging of environment settings, of empty cookie jars, auth and params; a URL prepared
once per process), sent on the adapter's pool itself (:meth:`TrackingAdapter.send_plain`: the pool
and ``urlopen`` call ``HTTPAdapter.send`` would use, urllib3's failures raised as the same
``requests`` exceptions, the same ``requests.Response``), the response hooks run, and cookies and
redirects are handled only when the answer carries them, as ``Session.send`` would. Anything else
takes ``requests``' own path. Tests that replay recorded answers (``responses``) reach a plain call
at the pool (``tests/pool_answers.py``), where production sends it.

urllib3 never re-sends on its own here: the adapter keeps requests' ``max_retries=0`` (urllib3's
``Retry(0, read=False)``): one connection attempt, no retry after an error. A keep-alive connection
the server closed while it sat in the pool is noticed before reuse (urllib3 drops it and connects
anew, nothing written yet); one that fails after the request was written on it is "maybe sent",
like any other failure after writing.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from requests.hooks import dispatch_hook
from requests.models import PreparedRequest
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers
from urllib3 import exceptions as urllib3_exceptions
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import (
    ClosedPoolError,
    ConnectTimeoutError,
    LocationValueError,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)
from urllib3.response import BaseHTTPResponse
from urllib3.util import Timeout


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

    def send_plain(self, request: PreparedRequest, *, timeout: Any, verify: Any) -> requests.Response:
        """``send`` for a plain call (no proxy, no client certificate, not streamed), on the pool
        itself: the same pool (TLS settings included) and the same ``urlopen`` call as ``send``,
        urllib3's failures raised as the same ``requests`` exceptions, and the answer the same
        ``requests.Response`` (status, reason, headers, encoding, url, request, cookies, its body
        read from ``raw`` by ``content`` as usual), without the proxy, header and cookie work a
        plain call does not need."""
        try:
            pool = self.get_connection_with_tls_context(request, verify)
        except LocationValueError as exc:
            raise requests.exceptions.InvalidURL(exc, request=request) from exc
        assert isinstance(pool, HTTPConnectionPool)  # the pool manager's pools (HTTPS is a subclass)
        self.cert_verify(pool, request.url or "", verify, None)
        if isinstance(timeout, tuple):
            connect, read = timeout
            timeout = Timeout(connect=connect, read=read)
        elif not isinstance(timeout, Timeout):
            timeout = Timeout(connect=timeout, read=timeout)
        path = request.path_url
        if path.startswith("//"):  # as HTTPAdapter.request_url: not to be read as a host
            path = f"/{path.lstrip('/')}"
        try:
            raw = pool.urlopen(
                method=str(request.method),
                url=path,
                body=request.body,
                headers=request.headers,
                redirect=False,
                assert_same_host=False,
                preload_content=False,
                decode_content=False,
                retries=self.max_retries,
                timeout=timeout,
                chunked=not (request.body is None or "Content-Length" in request.headers),
            )
        except (ProtocolError, OSError, ClosedPoolError) as exc:
            raise requests.ConnectionError(exc, request=request) from exc
        except MaxRetryError as exc:
            reason = exc.reason
            if isinstance(reason, ConnectTimeoutError) and not isinstance(reason, NewConnectionError):
                raise requests.ConnectTimeout(exc, request=request) from exc
            if isinstance(reason, urllib3_exceptions.SSLError):
                raise requests.exceptions.SSLError(exc, request=request) from exc
            raise requests.ConnectionError(exc, request=request) from exc
        except urllib3_exceptions.SSLError as exc:
            raise requests.exceptions.SSLError(exc, request=request) from exc
        except ReadTimeoutError as exc:
            raise requests.ReadTimeout(exc, request=request) from exc
        except urllib3_exceptions.InvalidHeader as exc:
            raise requests.exceptions.InvalidHeader(exc, request=request) from exc
        response = requests.Response()
        response.status_code = raw.status
        response.headers = CaseInsensitiveDict(raw.headers)
        response.encoding = get_encoding_from_headers(response.headers)
        response.raw = raw
        response.reason = raw.reason  # type: ignore[assignment]  # as requests sets it
        response.url = request.url or ""
        response.request = request
        response.connection = self
        if "set-cookie" in response.headers:
            requests.cookies.extract_cookies_to_jar(response.cookies, request, raw)
        return response


def tracking_adapter(**kwargs: Any) -> TrackingAdapter:
    """An adapter for a platform session (``kwargs`` as for ``HTTPAdapter``; no retries)."""
    return TrackingAdapter(max_retries=0, **kwargs)


@functools.lru_cache(maxsize=2048)
def _prepared_url(url: str) -> str:
    """``url`` as ``PreparedRequest.prepare_url`` writes it (IDNA host, quoting), kept per process:
    the clients call the same few URLs again and again. A URL it refuses raises every time."""
    prepared = PreparedRequest()
    prepared.prepare_url(url, {})
    return prepared.url or url


class PlatformSession(requests.Session):
    """A ``requests.Session`` whose plain calls skip the session-level work they do not need (see
    the module docstring); the answer is the same ``requests.Response``, its hooks, cookies and
    redirects handled as ``requests`` handles them."""

    def request(  # type: ignore[override]
        self,
        method: str,
        url: str,
        params: Any = None,
        data: Any = None,
        headers: Any = None,
        cookies: Any = None,
        files: Any = None,
        auth: Any = None,
        timeout: Any = None,
        allow_redirects: bool = True,
        proxies: Any = None,
        hooks: Any = None,
        stream: Any = None,
        verify: Any = None,
        cert: Any = None,
        json: Any = None,
    ) -> requests.Response:
        plain = (
            cookies is None
            and auth is None
            and not proxies
            and hooks is None
            and not stream
            and verify is None
            and cert is None
            and isinstance(url, str)
            and not self.trust_env
            and self.auth is None
            and not self.params
            and not self.proxies
            and not self.stream
            and self.cert is None
        )
        if not plain:
            return super().request(
                method,
                url,
                params=params,
                data=data,
                headers=headers,
                cookies=cookies,
                files=files,
                auth=auth,
                timeout=timeout,
                allow_redirects=allow_redirects,
                proxies=proxies,
                hooks=hooks,
                stream=stream,
                verify=verify,
                cert=cert,
                json=json,
            )
        merged = CaseInsensitiveDict(self.headers)
        if headers:
            merged.update(headers)
            for name in [name for name, value in merged.items() if value is None]:
                del merged[name]  # requests drops a header set to None
        prepared = PreparedRequest()
        prepared.prepare_method(method)
        if params:
            prepared.prepare_url(url, params)
        else:
            prepared.url = _prepared_url(url)
        prepared.prepare_headers(merged)
        prepared.prepare_cookies(self.cookies)
        prepared.prepare_body(data or {}, files, json)
        if "@" in (prepared.url or ""):  # credentials in the URL; without an "@" there are none
            prepared.prepare_auth(None, url)
        prepared.prepare_hooks(self.hooks)
        options: dict[str, Any] = {"timeout": timeout, "verify": self.verify, "cert": None, "proxies": {}}
        adapter = self.get_adapter(url=prepared.url or url)
        if isinstance(adapter, TrackingAdapter):
            response = adapter.send_plain(prepared, timeout=timeout, verify=self.verify)
        else:
            response = adapter.send(prepared, stream=False, **options)
        response = dispatch_hook("response", prepared.hooks, response, stream=False, **options)
        if "set-cookie" in response.headers:
            requests.cookies.extract_cookies_to_jar(self.cookies, prepared, response.raw)
        if allow_redirects and response.is_redirect:
            history = [response, *self.resolve_redirects(response, prepared, stream=False, **options)]
            response = history.pop()
            response.history = history
        response.content  # noqa: B018  (read now, as requests does for a call that does not stream)
        return response


def platform_session() -> PlatformSession:
    """A new platform session: its connections note when a request is first written, proxies from
    the environment are ignored, urllib3 retries nothing by itself."""
    session = PlatformSession()
    session.trust_env = False
    adapter = tracking_adapter(pool_connections=20, pool_maxsize=4)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = "Crosspost/1.0"
    return session
