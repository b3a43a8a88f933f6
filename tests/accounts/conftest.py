"""Fixtures of the accounts tests: the connect pages and simulators over real HTTP, and a
record of the events the accounts app emits."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from typing import Any

import pytest
import requests

from accounts.connect import connect_link_create
from accounts.models import SocialAccount
from platforms.base import Platform
from workspaces.models import Workspace


@pytest.fixture
def site(live_server: Any, settings: Any) -> str:
    """This app over real HTTP: connect pages at PUBLIC_BASE_URL, simulators at /sandbox."""
    settings.PUBLIC_BASE_URL = live_server.url
    settings.SANDBOX_BASE_URL = f"{live_server.url}/sandbox"
    return str(live_server.url)


def unauthorized_events(workspace_id: str) -> list[dict[str, Any]]:
    """The ``data`` of every ``account.unauthorized`` event the outbox recorded, oldest first."""
    from webhooks.models import Event

    rows = Event.objects.filter(workspace_id=workspace_id, name="account.unauthorized").order_by("created_at")
    return [json.loads(row.payload)["data"] for row in rows]


@pytest.fixture(autouse=True)
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[Any]]]:
    """Every Celery task these tests enqueue, as (task name, args), in order; nothing reaches a
    broker (the test settings' broker URL does not select this test's Redis database yet)."""
    from celery.app.task import Task

    from config.celery import app

    calls: list[tuple[str, list[Any]]] = []

    def send_task(name: str, args: Any = None, kwargs: Any = None, **options: Any) -> None:
        calls.append((name, list(args or [])))

    def apply_async(self: Task, args: Any = None, kwargs: Any = None, **options: Any) -> None:
        calls.append((self.name, list(args or [])))

    monkeypatch.setattr(app, "send_task", send_task)
    monkeypatch.setattr(Task, "apply_async", apply_async)
    return calls


def revoke(site: str, platform: Platform, external_id: str, revoked: bool = True) -> None:
    """Flip the simulator's per-account revoked flag (token checks fail while set)."""
    response = requests.post(
        f"{site}/sandbox/_control/{platform.slug}/accounts/{external_id}/revoke", json={"revoked": revoked}, timeout=10
    )
    assert response.status_code == 200, response.text


def platform_present(platform: Platform) -> bool:
    return (
        importlib.util.find_spec(f"platforms.{platform.slug}") is not None
        and importlib.util.find_spec(f"platforms.sandbox.{platform.slug}") is not None
    )


def require_platform(platform: Platform) -> None:
    """Every platform and its simulator exist: a missing one fails the test, never skips it."""
    assert platform_present(platform), f"platforms/{platform.slug}.py or its simulator is missing"


@pytest.fixture
def connect_via_link(site: str, workspace: Workspace) -> Callable[..., requests.Response]:
    """``connect_via_link("MASTODON")`` → the final response of ``GET <link>/<PLATFORM>``
    following redirects (a new link of ``workspace`` unless ``url`` is given)."""

    def connect(platform: str, url: str | None = None) -> requests.Response:
        require_platform(Platform(platform))
        link_url = url or connect_link_create(workspace_id=workspace.id).url
        return requests.get(f"{link_url}/{platform}", timeout=30)

    return connect


@pytest.fixture
def connect_account(site: str) -> Callable[..., SocialAccount]:
    """``connect_account("PINTEREST", workspace)`` → a new simulated account connected into the
    workspace through the platform's real consent and code exchange (no connect pages)."""
    from accounts.services import accounts_connect
    from tests.platforms.conftest import connect_sandbox_account

    def connect(platform: str, workspace: Workspace) -> SocialAccount:
        require_platform(Platform(platform))
        identities = connect_sandbox_account(platform)
        return accounts_connect(workspace_id=workspace.id, platform=platform, identities=identities)[0]

    return connect
