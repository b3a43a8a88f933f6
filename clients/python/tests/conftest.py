"""Fixtures of the clients' suite. The end-to-end tests (one module, one xdist group) share ONE
running stack of this repository (web, sandbox, worker, beat on a fresh test database:
``tests/e2e/harness.py``), stopped as soon as that module is done."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from crosspost import Client

from tests.e2e.harness import E2EStack, start_stack

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures"
PLATFORMS = ("BLUESKY", "MASTODON", "TELEGRAM")


@pytest.fixture(scope="module")
def stack() -> Iterator[E2EStack]:
    with start_stack() as running:
        yield running


@pytest.fixture(scope="module")
def base_url(stack: E2EStack) -> str:
    return f"{stack.web_url}/api/v1"


@pytest.fixture(scope="module")
def sdk(stack: E2EStack, base_url: str) -> Iterator[Client]:
    with Client(stack.api_key, base_url=base_url) as client:
        yield client


@pytest.fixture(scope="module")
def accounts(stack: E2EStack) -> list[dict[str, Any]]:
    """One sandbox account per platform of ``PLATFORMS``, connected through connect links."""
    return [stack.connect_account(platform) for platform in PLATFORMS]


@pytest.fixture
def cli_env(stack: E2EStack, base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The CLI's environment: the stack's key and URL, and a config directory of this test."""
    monkeypatch.setenv("CROSSPOST_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("CROSSPOST_WORKSPACE_ID", raising=False)
    return {"CROSSPOST_API_KEY": stack.api_key, "CROSSPOST_BASE_URL": base_url}
