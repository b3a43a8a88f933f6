"""Recorded answers at the level production sends plain platform calls: the connection pool.

A platform session sends a plain call on the adapter's pool itself (``TrackingAdapter.send_plain``:
``urlopen``), not through ``HTTPAdapter.send``, which ``responses`` replaces. So while ``responses``
stands in for ``HTTPAdapter.send`` (any ``RequestsMock`` started), :func:`answering_pools` makes the
platform pools' ``urlopen`` hand the request it was given (method, the pool's origin and the path,
headers, body) to that stand-in and return the urllib3 answer it built, unread: the recorded-answer
tests keep ``responses``' registrations, matchers and ``calls``, and the call still takes the
session's and the adapter's production path down to the socket. Otherwise the pools are real."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from platforms import transport

_STAND_IN_ADAPTER = HTTPAdapter(max_retries=0)


def _answer(pool: Any, real: Any, method: str, url: str, body: Any = None, headers: Any = None, **kwargs: Any) -> Any:
    send = requests.adapters.HTTPAdapter.send
    if getattr(send, "__module__", "") != "responses":  # no responses active: the real pool
        return real(pool, method, url, body=body, headers=headers, **kwargs)
    default_port = {"http": 80, "https": 443}[pool.scheme]
    origin = f"{pool.scheme}://{pool.host}" + ("" if pool.port in (None, default_port) else f":{pool.port}")
    request = requests.Request(method, origin + url, headers=dict(headers or {}), data=body).prepare()
    timeout = kwargs.get("timeout")
    response = send(_STAND_IN_ADAPTER, request, timeout=getattr(timeout, "read_timeout", timeout))
    return response.raw


@contextmanager
def answering_pools() -> Iterator[None]:
    """Inside the block the platform pools answer from ``responses`` while it is active."""
    classes = (transport._HTTPPool, transport._HTTPSPool)
    reals = [cls.urlopen for cls in classes]
    for cls, real in zip(classes, reals, strict=True):

        def urlopen(self: Any, method: str, url: str, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            return _answer(self, _real, method, url, *args, **kwargs)

        cls.urlopen = urlopen  # type: ignore[method-assign]
    try:
        yield
    finally:
        for cls, real in zip(classes, reals, strict=True):
            cls.urlopen = real  # type: ignore[method-assign]
