"""The per-workspace limit and the duplicate check hold when creates race."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from core.errors import ApplicationError
from tests.factories import WorkspaceFactory
from webhooks.models import Webhook
from webhooks.services import webhook_create


def _race(workspace: Any, urls: list[str]) -> list[str]:
    barrier = threading.Barrier(len(urls))
    outcomes: list[str] = []
    lock = threading.Lock()

    def create(url: str) -> None:
        try:
            barrier.wait()
            webhook_create(workspace=workspace, url=url)
            outcome = "created"
        except ApplicationError as exc:
            outcome = exc.code or "error"
        finally:
            connection.close()
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=create, args=(url,)) for url in urls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


@pytest.mark.django_db(transaction=True)
def test_concurrent_creates_stop_at_exactly_ten(public_dns: Any) -> None:
    public_dns({"hooks.example.com": ["93.184.216.34"]})
    workspace = WorkspaceFactory()
    outcomes = _race(workspace, [f"https://hooks.example.com/{i}" for i in range(16)])
    assert sorted(outcomes) == ["created"] * 10 + ["webhook_limit_reached"] * 6
    assert Webhook.objects.filter(workspace=workspace).count() == 10


@pytest.mark.django_db(transaction=True)
def test_concurrent_duplicates_create_one(public_dns: Any) -> None:
    public_dns({"hooks.example.com": ["93.184.216.34"]})
    workspace = WorkspaceFactory()
    outcomes = _race(workspace, ["https://hooks.example.com/same", "HTTPS://HOOKS.example.com:443/same"] * 4)
    assert sorted(outcomes) == ["conflict"] * 7 + ["created"]
