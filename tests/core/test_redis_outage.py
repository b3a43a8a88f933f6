"""With Redis really unreachable (a port where nothing listens), every path that touches it
behaves as documented: the rate limiter fails open, what needs Redis is a 503 with the error
body and Retry-After, never a 500."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

SERVICE_UNAVAILABLE = {
    "statusCode": 503,
    "error": "Service Unavailable",
    "message": "A service this request needs is unavailable; retry shortly",
    "code": "service_unavailable",
}


@pytest.fixture
def redis_down(settings: Any, refused_port: int) -> Iterator[None]:
    """REDIS_URL pointed at a port that is bound but never listens: every connection is refused."""
    settings.REDIS_URL = f"redis://127.0.0.1:{refused_port}/0"
    yield


def test_analytics_sync_is_503_while_its_cooldown_store_is_down(api: Any, redis_down: None) -> None:
    response = api.post("/api/v1/analytics/sync", {}, format="json")
    assert response.status_code == 503
    assert response.json() == SERVICE_UNAVAILABLE
    assert response["Retry-After"] == "5"


def test_the_rate_limiter_fails_open(api: Any, redis_down: None) -> None:
    response = api.get("/api/v1/social-posts")
    assert response.status_code == 200
    assert response["RateLimit-Remaining"] == response["RateLimit-Limit"]


def test_the_simulators_answer_503_not_500(redis_down: None, sandbox: str) -> None:
    response = requests.get(f"{sandbox}/_control/mastodon/requests", timeout=30)
    assert response.status_code == 503
    assert response.json() == SERVICE_UNAVAILABLE
