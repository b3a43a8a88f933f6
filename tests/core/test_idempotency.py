from __future__ import annotations

import datetime as dt
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from django.utils import timezone

from core.idempotency import ABANDONED_AFTER
from core.models import IdempotencyRecord
from core.redis import get_redis
from core.tasks import purge_idempotency_records

pytestmark = [pytest.mark.urls("tests.core.urls")]


@pytest.mark.django_db
def test_same_key_same_body_replays_the_first_response(api):
    headers = {"Idempotency-Key": "abc-1"}
    first = api.post("/api/v1/_test/body", {"name": "a", "count": 1}, format="json", headers=headers)
    again = api.post("/api/v1/_test/body", {"count": 1, "name": "a"}, format="json", headers=headers)
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json() == {"executions": 1, "name": "a", "count": 1}
    assert again["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first


@pytest.mark.django_db
def test_same_key_different_body_is_422(api):
    headers = {"Idempotency-Key": "abc-2"}
    api.post("/api/v1/_test/body", {"name": "a", "count": 1}, format="json", headers=headers)
    response = api.post("/api/v1/_test/body", {"name": "b", "count": 1}, format="json", headers=headers)
    assert response.status_code == 422
    assert response.json()["code"] == "idempotency_key_reused"


@pytest.mark.django_db
def test_without_a_key_every_call_runs(api):
    for expected in (1, 2):
        assert api.post("/api/v1/_test/body", {"name": "a", "count": 1}, format="json").json()["executions"] == expected


@pytest.mark.django_db
def test_validation_errors_are_replayed_too(api):
    headers = {"Idempotency-Key": "bad-1"}
    first = api.post("/api/v1/_test/body", {"name": "toolong"}, format="json", headers=headers)
    again = api.post("/api/v1/_test/body", {"name": "toolong"}, format="json", headers=headers)
    assert first.status_code == again.status_code == 400
    assert first.json() == again.json()


@pytest.mark.django_db
def test_keys_are_scoped_to_the_workspace(client_for, other_workspace):
    headers = {"Idempotency-Key": "shared"}
    mine = client_for("admin").post("/api/v1/_test/body", {"name": "a", "count": 1}, format="json", headers=headers)
    theirs = client_for("admin", ws=other_workspace).post(
        "/api/v1/_test/body", {"name": "a", "count": 1}, format="json", headers=headers
    )
    assert mine.json()["executions"] == 1
    assert theirs.json()["executions"] == 2


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["", "has space", "x" * 256])
def test_malformed_keys_are_400(api, key):
    response = api.post(
        "/api/v1/_test/body", {"name": "a", "count": 1}, format="json", headers={"Idempotency-Key": key}
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_idempotency_key"


@pytest.mark.django_db(transaction=True)
def test_concurrent_duplicates_execute_once(live_server, make_key, workspace):
    key = make_key("admin", workspace)
    url = f"{live_server.url}/api/v1/_test/body"

    def send(_: int) -> requests.Response:
        return requests.post(
            url,
            json={"name": "slow", "count": 1},
            headers={"Authorization": f"Bearer {key}", "Idempotency-Key": "race-1"},
            timeout=30,
        )

    with ThreadPoolExecutor(max_workers=6) as pool:
        responses = list(pool.map(send, range(6)))
    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(201) >= 1
    assert set(statuses) <= {201, 409}
    executions = {r.json()["executions"] for r in responses if r.status_code == 201}
    assert executions == {1}
    assert get_redis().get("test:executions") == b"1"  # the 409s never ran the operation
    replay = send(0)
    assert replay.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"
    assert IdempotencyRecord.objects.count() == 1


@pytest.mark.django_db
def test_after_24_hours_the_key_runs_again(api):
    headers = {"Idempotency-Key": "day-old"}
    body = {"name": "a", "count": 1}
    assert api.post("/api/v1/_test/body", body, format="json", headers=headers).json()["executions"] == 1
    record = IdempotencyRecord.objects.get()
    assert dt.timedelta(hours=23, minutes=59) < record.expires_at - record.created_at <= dt.timedelta(hours=24)
    IdempotencyRecord.objects.update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    again = api.post("/api/v1/_test/body", body, format="json", headers=headers)
    assert again.json()["executions"] == 2
    assert "Idempotent-Replayed" not in again


@pytest.mark.django_db
def test_a_duplicate_while_the_first_runs_is_409_and_an_abandoned_claim_is_taken_over(api, workspace):
    body = {"name": "a", "count": 1}
    from core.idempotency import fingerprint_of

    IdempotencyRecord.objects.create(
        workspace_id=workspace.id,
        key="running",
        fingerprint=fingerprint_of("POST", "/api/v1/_test/body", body),
        expires_at=timezone.now() + dt.timedelta(hours=24),
    )
    busy = api.post("/api/v1/_test/body", body, format="json", headers={"Idempotency-Key": "running"})
    assert busy.status_code == 409
    assert busy.json()["code"] == "idempotency_in_progress"
    assert get_redis().get("test:executions") is None
    IdempotencyRecord.objects.update(created_at=timezone.now() - ABANDONED_AFTER - dt.timedelta(seconds=1))
    taken = api.post("/api/v1/_test/body", body, format="json", headers={"Idempotency-Key": "running"})
    assert (taken.status_code, taken.json()["executions"]) == (201, 1)


@pytest.mark.django_db
def test_server_errors_are_not_stored(api):
    for _ in range(2):  # the retry runs again (and fails again): nothing was stored
        response = api.post("/api/v1/_test/boom-post", {}, format="json", headers={"Idempotency-Key": "boom"})
        assert response.status_code == 500
        assert "Idempotent-Replayed" not in response
    assert IdempotencyRecord.objects.count() == 0


@pytest.mark.django_db
def test_purge_removes_expired_records_and_is_idempotent(api):
    api.post("/api/v1/_test/body", {"name": "a", "count": 1}, format="json", headers={"Idempotency-Key": "old"})
    api.post("/api/v1/_test/body", {"name": "b", "count": 1}, format="json", headers={"Idempotency-Key": "new"})
    IdempotencyRecord.objects.filter(key="old").update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    assert purge_idempotency_records() == 1
    assert purge_idempotency_records() == 0
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["new"]


@pytest.mark.django_db(transaction=True)
def test_the_operation_and_its_stored_response_commit_together(workspace, monkeypatch):
    """A crash after the operation's writes but before its response is stored must not leave the
    writes behind: the abandoned claim is later taken over and would run the operation again."""
    from core import idempotency
    from workspaces.models import Workspace

    def crash(*args, **kwargs):
        raise RuntimeError("process died before the response was stored")

    def create_workspace():
        Workspace.objects.create(name="made once", organization=workspace.organization)
        return 201, {"made": True}

    monkeypatch.setattr(idempotency, "_store_response", crash)
    with pytest.raises(RuntimeError):
        idempotency.run_once(workspace_id=workspace.id, key="k-crash", fingerprint="f", execute=create_workspace)
    assert not Workspace.objects.filter(name="made once").exists()
    assert not IdempotencyRecord.objects.filter(key="k-crash").exists()

    monkeypatch.undo()
    outcome = idempotency.run_once(workspace_id=workspace.id, key="k-crash", fingerprint="f", execute=create_workspace)
    again = idempotency.run_once(workspace_id=workspace.id, key="k-crash", fingerprint="f", execute=create_workspace)
    assert (outcome.replayed, again.replayed) == (False, True)
    assert Workspace.objects.filter(name="made once").count() == 1
