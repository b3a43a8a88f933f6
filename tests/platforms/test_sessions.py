"""A platform client is built on one thread (the task's) and called from the worker's threads: each
call uses the calling thread's own ``requests.Session`` (its pool, its cookies), never one shared
between threads, unless the client was given a session of its own."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import requests

from platforms import mastodon
from platforms.base import AppCredentials, Platform, PlatformClient, thread_session
from platforms.registry import get_client


def _on_threads(count: int, read: PlatformClient) -> list[tuple[requests.Session, requests.Session]]:
    started = threading.Barrier(count)  # each call on a thread of its own

    def both() -> tuple[requests.Session, requests.Session]:
        started.wait(timeout=10)
        return read.session, thread_session()

    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = [pool.submit(both) for _ in range(count)]
        return [future.result() for future in futures]


def test_a_client_uses_the_session_of_the_thread_that_calls_it() -> None:
    client = get_client(Platform.MASTODON)
    assert client.session is thread_session()
    seen = _on_threads(3, client)
    assert all(used is own for used, own in seen)
    assert len({id(used) for used, _ in seen} | {id(thread_session())}) == 4
    assert thread_session() is thread_session()  # kept for the thread's life: keep-alive is reused


def test_a_session_given_to_the_client_is_the_one_it_uses_everywhere() -> None:
    given = requests.Session()
    client = mastodon.Client(base_url="http://127.0.0.1:9", app=AppCredentials(), session=given, timeout=2)
    assert client.session is given
    assert all(used is given for used, _ in _on_threads(2, client))


def test_the_thread_session_ignores_proxies_from_the_environment() -> None:
    assert thread_session().trust_env is False
