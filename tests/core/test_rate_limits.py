"""Rate limits: per key, shared through Redis, exact under concurrency, failing open."""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor

import pytest
import requests

from core import ratelimit
from core import redis as core_redis
from core.redis import get_redis
from workspaces.models import ApiKey

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
    assert last.json() == {
        "statusCode": 429,
        "error": "Too Many Requests",
        "message": f"Rate limit of 3 requests per 60 seconds exceeded; retry in {last['Retry-After']} seconds",
        "code": "rate_limited",
    }
    assert 1 <= int(last["Retry-After"]) <= 60


def test_window_rolls_over(client_for, workspace):
    """The window ends when its Redis key expires: the wait is shortened here by shortening the
    key's time to live, not by sleeping through a real window (no timing in tests)."""
    client = client_for("viewer", rate_limit=2)
    window_key = f"rl:key:{ApiKey.objects.get(workspace=workspace).id}"
    assert [client.get("/api/v1/me").status_code for _ in range(3)] == [200, 200, 429]
    get_redis().pexpire(window_key, 4500)
    waiting = client.get("/api/v1/me")
    assert (waiting.status_code, waiting["Retry-After"], waiting["RateLimit-Reset"]) == (429, "5", "5")
    get_redis().pexpire(window_key, 1)
    time.sleep(0.05)
    fresh = client.get("/api/v1/me")
    assert fresh.status_code == 200
    assert (fresh["RateLimit-Remaining"], fresh["RateLimit-Reset"], fresh["RateLimit-Policy"]) == ("1", "60", "2;w=60")
    assert client.get("/api/v1/me").status_code == 200
    assert client.get("/api/v1/me").status_code == 429


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


def test_fails_open_when_redis_is_down(client_for, monkeypatch, caplog):
    # The process's own client (its retry policy included), pointed at a server that is not there.
    dead = core_redis.client_for("unix:///nonexistent/redis.sock")
    monkeypatch.setattr(ratelimit, "get_redis", lambda: dead)
    monkeypatch.setattr(ratelimit, "_last_failure_log", 0.0)
    client = client_for("viewer", rate_limit=1)
    responses = [client.get("/api/v1/me") for _ in range(3)]
    assert [r.status_code for r in responses] == [200, 200, 200]
    assert responses[-1]["RateLimit-Remaining"] == "1"
    assert responses[-1]["RateLimit-Limit"] == "1"
    failures = [r for r in caplog.records if r.name == "core.ratelimit" and r.levelname == "ERROR"]
    assert [r.getMessage() for r in failures] == ["rate limiter: Redis unreachable, failing open"]


def test_headers_on_every_kind_of_api_response(client_for, anon, other_workspace):
    """401, 403, 404, 405 and the public description carry the four headers too."""
    viewer = client_for("viewer")
    responses = {
        "401": anon.get("/api/v1/social-posts"),
        "403 permission": viewer.post("/api/v1/webhooks", {"url": "https://93.184.216.34/"}, format="json"),
        "403 workspace": viewer.get("/api/v1/me", headers={"X-Workspace-Id": other_workspace.id}),
        "404": viewer.get("/api/v1/social-posts/post_missing"),
        "404 route": viewer.get("/api/v1/nowhere"),
        "405": viewer.put("/api/v1/me", {}, format="json"),
        "openapi": anon.get("/api/v1/openapi.json"),
    }
    for name, response in responses.items():
        assert response["RateLimit-Policy"] == "600;w=60", name
        assert response["RateLimit-Limit"] == "600", name
        assert int(response["RateLimit-Remaining"]) < 600, name
        assert 1 <= int(response["RateLimit-Reset"]) <= 60, name


def test_oauth_tokens_are_counted_per_token(settings):
    from tests.factories import MembershipFactory, UserFactory
    from tests.workspaces.test_auth import _oauth_client

    settings.RATE_LIMIT_DEFAULT = 1
    user = UserFactory()
    MembershipFactory(user=user, is_default=True)
    client = _oauth_client(user)
    assert [client.get("/api/v1/me").status_code for _ in range(2)] == [200, 429]


def _hit_many(identity: str, limit: int, count: int) -> list[bool]:
    # Runs in a forked process: redis-py notices the new pid and opens connections of its own,
    # as a separate web process would.
    return [ratelimit.hit(identity, limit, 60).allowed for _ in range(count)]


def test_counter_is_exact_across_processes():
    """Four processes, each with its own Redis connections, spend 4x the limit on one key at
    once: exactly the limit is allowed."""
    limit = 50
    with ProcessPoolExecutor(max_workers=4, mp_context=multiprocessing.get_context("fork")) as pool:
        chunks = list(pool.map(_hit_many, ["key:shared"] * 4, [limit] * 4, [limit] * 4))
    allowed = [flag for chunk in chunks for flag in chunk]
    assert len(allowed) == 4 * limit
    assert allowed.count(True) == limit


def _burst(url: str, key: str, count: int) -> list[int]:
    session = requests.Session()
    return [session.get(url, headers={"Authorization": f"Bearer {key}"}, timeout=30).status_code for _ in range(count)]


@pytest.mark.django_db(transaction=True)
def test_exact_under_concurrency_from_several_processes(live_server, make_key, workspace):
    """Over real HTTP: four client processes send 4x the limit at once; exactly the limit passes."""
    limit = 40
    key = make_key("viewer", workspace, rate_limit=limit)
    url = f"{live_server.url}/api/v1/me"
    with ProcessPoolExecutor(max_workers=4) as pool:
        results = [status for chunk in pool.map(_burst, [url] * 4, [key] * 4, [limit] * 4) for status in chunk]
    assert len(results) == 4 * limit
    assert results.count(200) == limit
    assert results.count(429) == 3 * limit


def test_a_redis_that_is_gone_is_given_up_on_after_two_quick_retries():
    """redis-py's default (10 retries, up to 1 s apart) held each request about 4 s while Redis was
    down; the process's client tries three times in all, with backoffs of at most 0.1 s."""
    retry = core_redis.client_for("unix:///nonexistent/redis.sock").get_retry()
    assert retry.get_retries() == 2
    assert max(core_redis.RETRY_BACKOFF.compute(failures) for failures in range(1, 10)) <= 0.1
    assert get_redis().get_retry().get_retries() == 2
