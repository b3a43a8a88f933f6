"""Stored idempotent responses are encrypted at rest whatever they carry (issue 28 item 2), and
the replay answers the very bytes of the first response."""

from __future__ import annotations

import datetime as dt
import json
import socket
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from core.crypto import decrypt
from core.idempotency import run_once
from core.models import IdempotencyRecord
from tests.factories.webhooks import WebhookFactory
from webhooks.models import Webhook


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """hooks.example.com resolves to a public address (the webhook URL guard's one lookup)."""
    real = socket.getaddrinfo

    def fake(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "hooks.example.com":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)


def _stored_row_text() -> str:
    """Every column of every stored record, as PostgreSQL holds it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT row_to_json(r)::text FROM core_idempotencyrecord r")
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.django_db
def test_a_connect_link_replays_byte_for_byte_and_its_row_holds_no_token(api: Any, workspace: Any) -> None:
    headers = {"Idempotency-Key": "link-1"}
    first = api.post("/api/v1/connect-links", {}, format="json", headers=headers)
    again = api.post("/api/v1/connect-links", {}, format="json", headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.content == first.content and again["Idempotent-Replayed"] == "true"
    token, url = first.json()["token"], first.json()["url"]
    stored = _stored_row_text()
    assert IdempotencyRecord.objects.get().workspace_id == str(workspace.id)
    assert token not in stored and url not in stored and '"token"' not in stored
    with connection.cursor() as cursor:
        cursor.execute("SELECT response_json FROM core_idempotencyrecord")
        (sealed,) = cursor.fetchone()
    assert decrypt(sealed) == first.content.decode()  # the ring of FERNET_KEYS, the bytes the client got


@pytest.mark.django_db
def test_a_webhook_create_replays_its_secret_byte_for_byte_from_a_sealed_row(api: Any, dns: Any) -> None:
    headers = {"Idempotency-Key": "hook-1"}
    first = api.post("/api/v1/webhooks", {"url": "https://hooks.example.com/in"}, format="json", headers=headers)
    again = api.post("/api/v1/webhooks", {"url": "https://hooks.example.com/in"}, format="json", headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.content == first.content and again["Idempotent-Replayed"] == "true"
    secret = first.json()["secret"]
    assert secret == Webhook.objects.get().secret and secret not in _stored_row_text()


@pytest.mark.django_db
def test_a_rotation_replays_the_secret_it_answered_not_a_later_one(api: Any, workspace: Any) -> None:
    webhook: Any = WebhookFactory(workspace=workspace)
    path = f"/api/v1/webhooks/{webhook.id}/rotate-secret"
    first = api.post(path, {}, format="json", headers={"Idempotency-Key": "rotate-1"})
    later = api.post(path, {}, format="json", headers={"Idempotency-Key": "rotate-2"})
    again = api.post(path, {}, format="json", headers={"Idempotency-Key": "rotate-1"})
    assert first.status_code == later.status_code == again.status_code == 201
    assert first.json()["secret"] != later.json()["secret"]
    assert again.content == first.content
    stored = _stored_row_text()
    assert first.json()["secret"] not in stored and later.json()["secret"] not in stored


@pytest.mark.django_db(transaction=True)
def test_rows_stored_in_the_clear_before_the_migration_are_sealed_and_still_replay(workspace: Any) -> None:
    body = {"url": "https://app.example.com/connect/old-token-in-the-clear", "token": "old-token-in-the-clear"}
    executor = MigrationExecutor(connection)
    executor.migrate([("core", "0001_initial")])
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO core_idempotencyrecord (workspace_id, key, fingerprint, in_progress, response_status,"
                " response_body, created_at, expires_at) VALUES (%s, 'old-1', 'f', false, 201, %s, %s, %s)",
                [str(workspace.id), json.dumps(body), timezone.now(), timezone.now() + dt.timedelta(hours=1)],
            )
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())  # every app: going back took dependents along
    assert "old-token-in-the-clear" not in _stored_row_text()

    def must_not_run() -> tuple[int, Any]:
        raise AssertionError("a stored response is replayed, not run again")

    outcome = run_once(workspace_id=str(workspace.id), key="old-1", fingerprint="f", execute=must_not_run)
    assert (outcome.status, outcome.body, outcome.replayed) == (201, body, True)
