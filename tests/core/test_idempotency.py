from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from core.models import IdempotencyRecord

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
    replay = send(0)
    assert replay.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"
    assert IdempotencyRecord.objects.count() == 1
