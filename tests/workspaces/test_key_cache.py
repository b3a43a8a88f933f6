"""The kept API keys (``workspaces.key_cache``): a known key costs no database read, and every
write to a key or a workspace is seen by the very next request, whichever process wrote it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from core.redis import get_redis
from tests.concurrency import run_concurrently
from workspaces import key_cache
from workspaces.models import ApiKey, Workspace
from workspaces.services import api_key_revoke, api_keys_revoke

pytestmark = pytest.mark.django_db

KEY_READ = "FROM workspaces_apikey k LEFT JOIN"


def _me(client: APIClient) -> tuple[int, dict[str, Any], int]:
    """Status, body, and how many times the request read the key from the database."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/api/v1/me")
    reads = sum(KEY_READ in q["sql"] for q in queries.captured_queries)
    return response.status_code, response.json(), reads


@pytest.fixture
def issued(client_for: Callable[..., APIClient], workspace: Workspace) -> tuple[APIClient, ApiKey]:
    """An admin key, kept by the first request that reads it."""
    client = client_for("admin")
    assert [_me(client)[2] for _ in range(3)] == [1, 0, 0]
    return client, ApiKey.objects.get(workspace=workspace)


def test_a_kept_key_is_answered_without_reading_the_database(issued):
    client, _ = issued
    for _ in range(3):
        status, body, reads = _me(client)
        assert (status, body["role"]["key"], reads) == (200, "admin", 0)


def test_revocation_is_seen_by_the_next_request(issued):
    client, api_key = issued
    api_key_revoke(key_or_public_part=api_key.public_part)
    assert _me(client)[0] == 401


def test_the_staff_bulk_revocation_is_seen_by_the_next_request(issued):
    client, api_key = issued
    assert api_keys_revoke(ids=[api_key.pk]) == 1
    assert _me(client)[0] == 401


def test_a_changed_key_and_a_renamed_workspace_are_seen_by_the_next_request(issued, workspace):
    client, api_key = issued
    api_key.role = "viewer"
    api_key.save()  # as the admin's change form does
    assert _me(client)[1]["role"]["key"] == "viewer"
    workspace.name = "Renamed"
    workspace.save()
    assert _me(client)[1]["workspace"]["name"] == "Renamed"


def test_deleting_the_key_or_its_workspace_is_seen_by_the_next_request(issued, client_for, workspace):
    client, api_key = issued
    other_client = client_for("admin")
    _me(other_client)
    api_key.delete()
    assert _me(client)[0] == 401
    assert _me(other_client)[0] == 200
    workspace.delete()  # the remaining key goes with it (a cascade)
    assert _me(other_client)[0] == 401


def test_a_write_in_another_process_is_seen_through_the_generation(issued):
    """Another process's write reaches this one only through Redis: an UPDATE that does not go
    through the services is not seen until the generation moves, and is seen once it does."""
    client, api_key = issued
    ApiKey.objects.filter(pk=api_key.pk).update(role="viewer")  # no signal: nothing tells the cache
    assert _me(client)[1]["role"]["key"] == "admin"
    get_redis().set(key_cache.GENERATION_KEY, "another-process-wrote")
    status, body, reads = _me(client)
    assert (status, body["role"]["key"], reads) == (200, "viewer", 1)


def test_a_wiped_redis_makes_every_process_read_again(issued):
    client, api_key = issued
    ApiKey.objects.filter(pk=api_key.pk).update(role="editor")
    get_redis().flushdb()
    status, body, reads = _me(client)
    assert (status, body["role"]["key"], reads) == (200, "editor", 1)
    assert _me(client)[2] == 0  # kept again, under the new generation


def test_nothing_kept_is_trusted_while_redis_is_unreachable(issued, settings, refused_port):
    client, api_key = issued
    settings.REDIS_URL = f"redis://127.0.0.1:{refused_port}/0"
    for _ in range(2):
        status, _body, reads = _me(client)
        assert (status, reads) == (200, 1)
    ApiKey.objects.filter(pk=api_key.pk).update(revoked_at="2026-01-01T00:00:00Z")
    assert _me(client)[0] == 401


def test_a_kept_key_is_read_again_after_api_key_cache_seconds(issued, settings, monkeypatch):
    client, _ = issued
    settings.API_KEY_CACHE_SECONDS = 5
    later = key_cache.monotonic() + 5
    monkeypatch.setattr(key_cache, "monotonic", lambda: later)  # this module's clock only
    assert _me(client)[2] == 1
    assert _me(client)[2] == 0


def test_zero_seconds_keeps_nothing(issued, settings):
    client, _ = issued
    settings.API_KEY_CACHE_SECONDS = 0
    assert [_me(client)[2] for _ in range(2)] == [1, 1]


def test_the_number_of_kept_keys_is_bounded(client_for, monkeypatch):
    monkeypatch.setattr(key_cache, "MAX_ENTRIES", 2)
    clients = [client_for("admin") for _ in range(3)]
    for client in clients:
        _me(client)
    assert len(key_cache._entries) == 2
    assert _me(clients[0])[2] == 1  # the oldest was let go


@pytest.mark.django_db(transaction=True)
def test_a_row_read_while_a_revocation_commits_is_not_kept_past_the_commit(client_for, workspace):
    """A request in another thread reads the key after the revocation's first new generation but
    before its commit (the old, valid row) and keeps it; the generation set at the commit makes
    the next request read the row again."""
    client = client_for("admin")
    api_key = ApiKey.objects.get(workspace=workspace)
    _me(client)
    with transaction.atomic():
        api_key_revoke(key_or_public_part=api_key.public_part)
        [in_between] = run_concurrently([lambda: _me(client)])
    assert (in_between[0], in_between[2]) == (200, 1)  # the old row, read under the first new generation
    status, _body, reads = _me(client)
    assert (status, reads) == (401, 1)


def test_a_kept_key_records_its_use_once_a_minute_not_once_a_request(client_for, workspace):
    client = client_for("admin")
    updates = []
    for _ in range(3):
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/api/v1/me").status_code == 200
        updates.append(sum(q["sql"].startswith("UPDATE") for q in queries.captured_queries))
    assert updates == [1, 0, 0]
    assert ApiKey.objects.get(workspace=workspace).last_used_at is not None
