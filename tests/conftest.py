"""Fixtures every test module may use. Real PostgreSQL and Redis (embedded or the URLs given)."""

from __future__ import annotations

import functools
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
from rest_framework.test import APIClient

from config import embedded
from core.redis import get_redis
from tests.factories import WorkspaceFactory
from tests.pool_answers import answering_pools
from workspaces.models import Workspace
from workspaces.services import api_key_create


def pytest_configure(config: pytest.Config) -> None:
    """With no DATABASE_URL / REDIS_URL, the embedded servers under var/ (the settings only name
    them). Before any test connects; under xdist the controller runs this before it starts the
    workers, which then find the servers up (and inherit the URLs it exports)."""
    embedded.ensure_services()


@pytest.fixture(autouse=True)
def _clean_redis() -> Iterator[None]:
    """Each test starts with this worker's Redis database empty."""
    get_redis().flushdb()
    yield


@pytest.fixture(autouse=True)
def _pool_answers() -> Iterator[None]:
    """Recorded answers (``responses``) reach plain platform calls at the pool, where they go."""
    with answering_pools():
        yield


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A loopback port every connection to is refused: bound without listen() and held for the
    test. A port bound then released may be taken by another process meanwhile (the other test
    worker's servers bind port 0 all the time), and the test would reach that server instead."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


@pytest.fixture
def workspace(db: Any) -> Workspace:
    return WorkspaceFactory()


@pytest.fixture
def other_workspace(db: Any) -> Workspace:
    return WorkspaceFactory()


@pytest.fixture
def make_key(db: Any) -> Callable[..., str]:
    def make(role: str = "admin", workspace: Workspace | None = None, **kwargs: Any) -> str:
        return api_key_create(
            workspace=workspace or WorkspaceFactory(), name=f"{role} test key", role=role, **kwargs
        ).plaintext

    return make


@pytest.fixture
def anon() -> APIClient:
    return APIClient()


@pytest.fixture
def client_for(make_key: Callable[..., str], workspace: Workspace) -> Callable[..., APIClient]:
    """``client_for("editor")`` → an APIClient whose key has that role in ``workspace``."""

    def make(role: str = "admin", ws: Workspace | None = None, **kwargs: Any) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(role, ws or workspace, **kwargs)}")
        return client

    return make


@pytest.fixture
def api(client_for: Callable[..., APIClient]) -> APIClient:
    """An admin client of ``workspace``."""
    return client_for("admin")


class _QuietWSGIHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="session")
def _simulator_server() -> Iterator[str]:
    """One threaded HTTP server of this Django app for the whole session. The simulators keep
    their state in Redis and never touch the database, so unlike ``live_server`` this needs no
    transactional test (and no database flush after each test)."""
    server = ThreadedWSGIServer(("127.0.0.1", 0), _QuietWSGIHandler, allow_reuse_address=False)
    server.set_app(WSGIHandler())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def sandbox(_simulator_server: str, settings: Any) -> str:
    """The simulators over real HTTP, with every platform client pointed at its
    ``/sandbox/<slug>`` base. Returns the sandbox base URL. (Pages of the service itself that
    read the database, such as the connect pages, need ``live_server`` instead.)"""
    settings.SANDBOX_BASE_URL = f"{_simulator_server}/sandbox"
    return settings.SANDBOX_BASE_URL


FIXTURES_DIR = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def media_server() -> Iterator[str]:
    """A plain HTTP server on loopback serving ``tests/fixtures`` (sample.jpg, sample.png,
    sample.mp4, sample.pdf): public media URLs for the simulators to fetch."""
    handler = functools.partial(_QuietHandler, directory=str(FIXTURES_DIR))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass
