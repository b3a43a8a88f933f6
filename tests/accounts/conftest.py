"""Fixtures of the accounts tests: the connect pages and simulators over real HTTP, and a
record of the events the accounts app emits."""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Callable
from typing import Any

import pytest
import requests

from accounts.connect import connect_link_create
from platforms.base import Platform
from workspaces.models import Workspace


@pytest.fixture
def site(live_server: Any, settings: Any) -> str:
    """This app over real HTTP: connect pages at PUBLIC_BASE_URL, simulators at /sandbox."""
    settings.PUBLIC_BASE_URL = live_server.url
    settings.SANDBOX_BASE_URL = f"{live_server.url}/sandbox"
    return str(live_server.url)


@pytest.fixture
def emitted(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every ``emit_event`` call, in order. The real outbox is still called once it exists
    (until the webhooks app implements it, only the call is recorded)."""
    import webhooks.events

    calls: list[dict[str, Any]] = []
    real = webhooks.events.emit_event

    def record(*, workspace_id: str, name: str, data: dict[str, Any]) -> None:
        calls.append({"workspace_id": workspace_id, "name": name, "data": data})
        with contextlib.suppress(NotImplementedError):
            real(workspace_id=workspace_id, name=name, data=data)

    monkeypatch.setattr(webhooks.events, "emit_event", record)
    return calls


def platform_present(platform: Platform) -> bool:
    return (
        importlib.util.find_spec(f"platforms.{platform.slug}") is not None
        and importlib.util.find_spec(f"platforms.sandbox.{platform.slug}") is not None
    )


def require_platform(platform: Platform) -> None:
    if not platform_present(platform):
        pytest.skip(f"platforms/{platform.slug}.py or its simulator has not landed yet")


@pytest.fixture
def connect_via_link(
    site: str, workspace: Workspace, emitted: list[dict[str, Any]]
) -> Callable[..., requests.Response]:
    """``connect_via_link("MASTODON")`` → the final response of ``GET <link>/<PLATFORM>``
    following redirects (a new link of ``workspace`` unless ``url`` is given)."""

    def connect(platform: str, url: str | None = None) -> requests.Response:
        require_platform(Platform(platform))
        link_url = url or connect_link_create(workspace_id=workspace.id).url
        return requests.get(f"{link_url}/{platform}", timeout=30)

    return connect
