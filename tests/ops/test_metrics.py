"""GET /metrics: Prometheus text behind the bearer token, counting what this process did (its
files in the run's multiprocess directory). The whole stack (gunicorn + Celery processes adding
up) is tested in tests/e2e/test_operations.py."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings
from prometheus_client.parser import text_string_to_metric_families

from tests.factories.posts import PostFactory

pytestmark = pytest.mark.django_db

TOKEN = "metrics-test-token-0123456789"


@pytest.fixture
def metrics_token(settings) -> str:
    settings.METRICS_TOKEN = TOKEN
    return TOKEN


def scrape(client, token: str = TOKEN) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_without_the_token_there_is_no_such_page(client, settings):
    client.defaults["REMOTE_ADDR"] = "203.0.113.7"  # not loopback: the sandbox's exception does not apply
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 404
    settings.METRICS_TOKEN = TOKEN
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Basic {TOKEN}").status_code == 404
    not_found = client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong")
    # The same answer as any missing page: nothing says a metrics endpoint exists.
    assert {**not_found.json(), "message": ""} == {**client.get("/no-such-page").json(), "message": ""}


@pytest.mark.parametrize("token", ["", TOKEN])
def test_sandbox_mode_answers_loopback_without_a_token(client, settings, token):
    """`make run` on a laptop: curl http://127.0.0.1:8000/metrics answers, whether or not a token
    is set; a client elsewhere still needs the token."""
    settings.SANDBOX, settings.METRICS_TOKEN = True, token
    for loopback in ("127.0.0.1", "127.3.4.5", "::1", "::ffff:127.0.0.1"):
        response = client.get("/metrics", REMOTE_ADDR=loopback)
        assert response.status_code == 200, loopback
        assert b"crosspost_http_requests_total" in response.content
    for elsewhere in ("203.0.113.7", "10.0.0.2", "::ffff:10.0.0.2", "2001:db8::1"):
        assert client.get("/metrics", REMOTE_ADDR=elsewhere).status_code == 404, elsewhere
    if token:
        assert (
            client.get("/metrics", REMOTE_ADDR="203.0.113.7", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 200
        )


def test_sandbox_mode_behind_a_trusted_proxy_judges_the_address_it_names(client, settings):
    """A proxy on the same machine connects from loopback; the client it names is the one judged."""
    settings.SANDBOX, settings.METRICS_TOKEN, settings.CLIENT_IP_HEADER = True, "", "X-Forwarded-For"
    assert client.get("/metrics", HTTP_X_FORWARDED_FOR="203.0.113.7").status_code == 404
    assert client.get("/metrics", HTTP_X_FORWARDED_FOR="203.0.113.7, 127.0.0.1").status_code == 200


def test_live_mode_answers_only_the_token_even_on_loopback(client, settings):
    settings.SANDBOX, settings.METRICS_TOKEN = False, TOKEN
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 404
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1", HTTP_AUTHORIZATION="Bearer wrong").status_code == 404
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.7", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200


def test_the_make_run_banner_says_how_to_reach_metrics_without_printing_a_token():
    from config.run import metrics_line

    assert metrics_line("http://127.0.0.1:8000", sandbox=True) == (
        "http://127.0.0.1:8000/metrics (open from this machine; elsewhere: Authorization: Bearer $METRICS_TOKEN)"
    )
    assert metrics_line("https://api.example.com", sandbox=False) == (
        "https://api.example.com/metrics (Authorization: Bearer $METRICS_TOKEN)"
    )


def test_requests_are_counted_by_route_pattern_method_and_status(client, api, metrics_token):
    before = scrape(client)
    assert api.get("/api/v1/social-posts").status_code == 200
    assert api.get("/api/v1/social-posts/post_missing").status_code == 404
    assert client.get("/no/such/page").status_code == 404
    after = scrape(client)
    list_route = {"route": "/api/v1/social-posts", "method": "GET"}
    assert value(after, "crosspost_http_requests_total", status="200", **list_route) == (
        value(before, "crosspost_http_requests_total", status="200", **list_route) + 1
    )
    routes = {dict(labels)["route"] for name, labels in after if name == "crosspost_http_requests_total"}
    assert "/api/v1/social-posts/post_missing" not in routes  # patterns, never raw paths (ids, tokens)
    assert any(route.startswith("/api/v1/social-posts/<") for route in routes), routes
    assert value(after, "crosspost_http_request_duration_seconds_count", **list_route) >= 1


def test_rate_limit_refusals_are_counted(client, client_for, metrics_token):
    limited = client_for("admin", rate_limit=1)
    before = value(scrape(client), "crosspost_rate_limit_refusals_total")
    assert limited.get("/api/v1/social-posts").status_code == 200
    assert limited.get("/api/v1/social-posts").status_code == 429
    assert value(scrape(client), "crosspost_rate_limit_refusals_total") == before + 1


def test_queue_depths_and_scheduler_lag_are_read_when_scraped(client, metrics_token):
    import datetime as dt

    from django.utils import timezone

    from core.redis import get_redis

    get_redis().rpush("analytics", "a", "b", "c")
    PostFactory(status="SCHEDULED", scheduled_at=timezone.now() - dt.timedelta(seconds=300))
    samples = scrape(client)
    assert value(samples, "crosspost_queue_depth", queue="analytics") == 3
    assert value(samples, "crosspost_queue_depth", queue="publish") == 0
    assert value(samples, "crosspost_scheduler_lag_seconds") >= 300


def test_publish_and_delivery_counters_take_platform_error_code_and_outcome(client, metrics_token):
    from core import metrics

    before = scrape(client)
    metrics.publish_recorded(platform="TELEGRAM", error_code="rate_limited")
    metrics.publishes_recorded(platforms=["MASTODON", "MASTODON"])
    metrics.webhook_delivery_recorded(outcome="retrying")
    after = scrape(client)
    failed = {"platform": "TELEGRAM", "outcome": "failed", "error_code": "rate_limited"}
    published = {"platform": "MASTODON", "outcome": "published", "error_code": ""}
    assert (
        value(after, "crosspost_publishes_total", **failed) == value(before, "crosspost_publishes_total", **failed) + 1
    )
    assert value(after, "crosspost_publishes_total", **published) == (
        value(before, "crosspost_publishes_total", **published) + 2
    )
    assert value(after, "crosspost_webhook_deliveries_total", outcome="retrying") == (
        value(before, "crosspost_webhook_deliveries_total", outcome="retrying") + 1
    )


def test_every_test_process_counts_in_a_directory_of_its_own(tmp_path):
    """pytest-xdist workers inherit the controller's environment, PROMETHEUS_MULTIPROC_DIR with it:
    a pytest process takes a directory of its own pid, so no worker's /metrics adds up another's
    requests (a counter once read 7 where this process had made 6)."""
    probe = (
        "import os, pytest, django; django.setup(); from django.conf import settings; "
        "print(settings.PROMETHEUS_MULTIPROC_DIR == os.environ['PROMETHEUS_MULTIPROC_DIR'], "
        "settings.PROMETHEUS_MULTIPROC_DIR.endswith(f'test-{os.getpid()}'))"
    )
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "the-controllers")}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]
    assert not (tmp_path / "the-controllers").exists()
