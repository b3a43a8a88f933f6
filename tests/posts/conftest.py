"""Fixtures of the posts API tests."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone

from posts.payloads import CONNECTION_FIELDS
from webhooks.models import Event


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Target ids handed to the pipeline (the services call enqueue_targets on commit)."""
    sent: list[str] = []

    def record(target_ids: Any, **kwargs: Any) -> None:
        sent.extend(target_ids)

    monkeypatch.setattr("posts.services.creation.enqueue_targets", record)
    monkeypatch.setattr("posts.services.transitions.enqueue_targets", record)
    return sent


@pytest.fixture
def commit(django_capture_on_commit_callbacks: Any) -> Callable[[Callable[[], Any]], Any]:
    """Run ``call`` and then its on-commit callbacks, as a real commit would."""

    def run(call: Callable[[], Any]) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return call()

    return run


def future(minutes: int = 60) -> dt.datetime:
    return (timezone.now() + dt.timedelta(minutes=minutes)).replace(microsecond=0)


def iso(moment: dt.datetime) -> str:
    """An instant as the API writes it: UTC, milliseconds, ``Z``."""
    utc = moment.astimezone(dt.UTC)
    return f"{utc:%Y-%m-%dT%H:%M:%S}.{utc.microsecond // 1000:03d}Z"


def events(workspace_id: str, name: str) -> list[dict[str, Any]]:
    rows = Event.objects.filter(workspace_id=workspace_id, name=name).order_by("created_at")
    return [json.loads(row.payload) for row in rows]


def targets(accounts: dict[str, Any], *platforms: str) -> dict[str, Any]:
    """The ``platforms`` and connection ids of a create body naming ``accounts``' account of each
    platform (Facebook's by its page id)."""
    ids = {p: [accounts[p].page_id if p == "FACEBOOK" else accounts[p].id] for p in platforms}
    return {"platforms": list(platforms), **{CONNECTION_FIELDS[p]: ids[p] for p in platforms}}
