"""Rate limits: per key, shared through Redis, exact under concurrency, failing open."""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor

import pytest
import redis
import requests

from core import ratelimit

pytestmark = pytest.mark.django_db


def test_every_response_carries_the_headers(client_for):
    response = client_for("viewer").get("/api/v1/me")
    assert response["RateLimit-Policy"] == "600;w=60"
    assert response["RateLimit-Limit"] == "600"
    assert response["RateLimit-Remaining"] == "599"
    assert 1 <= int(response["RateLimit-Reset"]) <= 60


def test_exhaustion_gives_429_with_retry_after(client_for):
    client = client_for("viewer", rate_limit=3)
    statuses = [client.get("/api/v1/me").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    last = client.get("/api/v1/me")
    assert last.status_code == 429
    assert last["Retry-After"] == last["RateLimit-Reset"]
    assert last["RateLimit-Remaining"] == "0"
    assert last["RateLimit-Policy"] == "3;w=60"
    body = last.json()
    assert body["statusCode"] == 429 and body["code"] == "rate_limited"


def test_window_rolls_over(client_for, settings):
    settings.RATE_LIMIT_WINDOW_SECONDS = 1
    client = client_for("viewer", rate_limit=2)
    assert [client.get("/api/v1/me").status_code for _ in range(3)] == [200, 200, 429]
    time.sleep(1.1)
    assert client.get("/api/v1/me").status_code == 200


def test_keys_are_counted_separately(client_for):
    first = client_for("viewer", rate_limit=1)
    second = client_for("viewer", rate_limit=1)
    assert first.get("/api/v1/me").status_code == 200
    assert first.get("/api/v1/me").status_code == 429
    assert second.get("/api/v1/me").status_code == 200


def test_requests_without_a_valid_key_are_limited_per_address(anon, settings):
    settings.RATE_LIMIT_DEFAULT = 2
    statuses = [anon.get("/api/v1/me").status_code for _ in range(3)]
    assert statuses == [401, 401, 429]


def test_fails_open_when_redis_is_down(client_for, monkeypatch):
    dead = redis.Redis(unix_socket_path="/nonexistent/redis.sock", socket_connect_timeout=0.1)
    monkeypatch.setattr(ratelimit, "get_redis", lambda: dead)
    response = client_for("viewer").get("/api/v1/me")
    assert response.status_code == 200
    assert response["RateLimit-Remaining"] == "600"


def _burst(url: str, key: str, count: int) -> list[int]:
    session = requests.Session()
    return [session.get(url, headers={"Authorization": f"Bearer {key}"}, timeout=30).status_code for _ in range(count)]


@pytest.mark.django_db(transaction=True)
def test_exact_under_concurrency_from_several_processes(live_server, make_key, workspace):
    limit = 40
    key = make_key("viewer", workspace, rate_limit=limit)
    url = f"{live_server.url}/api/v1/me"
    with ProcessPoolExecutor(max_workers=4) as pool:
        results = [status for chunk in pool.map(_burst, [url] * 4, [key] * 4, [limit] * 4) for status in chunk]
    assert len(results) == 4 * limit
    assert results.count(200) == limit
    assert results.count(429) == 3 * limit
