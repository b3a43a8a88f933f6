"""Operations end to end, on real gunicorn, Celery worker and beat processes: /metrics adds up
what web and worker processes counted after real traffic; /readyz sees beat; every log line the
run writes (access logs of both gunicorns, worker, beat) is JSON where the service writes it and
holds none of the secrets this traffic carried through URLs, headers and task arguments."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.harness import PYTHON, ROOT, E2EStack, WebhookReceiver, start_stack, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

METRICS_TOKEN = "e2e-metrics-token-5f1c2d"
FINAL = ("COMPLETED", "PARTIAL_FAILURE", "FAILED")


@pytest.fixture(scope="module")
def ops_stack() -> Iterator[E2EStack]:
    outside = Path(tempfile.mkdtemp(prefix="crosspost-ops-"))
    static_root, metrics_dir = outside / "static", outside / "metrics"
    metrics_dir.mkdir()
    # As a deployment's release step does: the web processes serve what collectstatic wrote.
    subprocess.run(
        [PYTHON, "manage.py", "collectstatic", "--no-input", "-v", "0"],
        cwd=ROOT,
        env={**_environ(), "STATIC_ROOT": str(static_root), "DEBUG": "0", "TESTING": "0"},
        check=True,
    )
    try:
        with start_stack(
            METRICS_TOKEN=METRICS_TOKEN, PROMETHEUS_MULTIPROC_DIR=str(metrics_dir), STATIC_ROOT=str(static_root)
        ) as stack:
            yield stack
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def _environ() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "TEST_"))}


def scrape(stack: E2EStack) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = requests.get(
        f"{stack.web_url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}, timeout=30
    )
    assert response.status_code == 200, response.text[:300]
    samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def total(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return sum(
        value
        for (sample, sample_labels), value in samples.items()
        if sample == name and all(dict(sample_labels).get(k) == v for k, v in labels.items())
    )


def wait_final(stack: E2EStack, post_id: str) -> dict[str, Any]:
    def final() -> dict[str, Any] | None:
        post = stack.api("GET", f"/social-posts/{post_id}").json()
        return post if post["status"] in FINAL else None

    return dict(wait_for(final, timeout=90, what=f"post {post_id} to finish"))


@pytest.fixture(scope="module")
def traffic(ops_stack: E2EStack) -> dict[str, Any]:
    """Real requests carrying every kind of secret, and real work for the worker."""
    stack = ops_stack
    receiver = WebhookReceiver()
    hook = stack.api("POST", "/webhooks", json={"url": receiver.url})
    assert hook.status_code == 201, hook.text
    mastodon = stack.connect_account("MASTODON")  # /connect/<token>/..., OAuth ?code=&state=
    telegram = stack.connect_account("TELEGRAM")  # the bot token then travels in Telegram's paths
    upload = stack.api("POST", "/upload-urls", json={"files": [{"fileName": "a.jpg", "mimeType": "image/jpeg"}]})
    assert upload.status_code in (200, 201), upload.text
    upload_url = upload.json()["urls"][0]["uploadUrl"]
    image = (Path(__file__).resolve().parents[1] / "fixtures" / "sample.jpg").read_bytes()
    assert requests.put(upload_url, data=image, headers={"Content-Type": "image/jpeg"}, timeout=30).ok
    # A key pasted into a query string, as careless clients do: the access log must not keep it.
    requests.get(f"{stack.web_url}/api/v1/social-posts?api_key={stack.api_key}", timeout=30)
    created = stack.api(
        "POST",
        "/social-posts",
        json={
            "platforms": ["MASTODON", "TELEGRAM"],
            "mastodonConnectionIds": [mastodon["id"]],
            "telegramConnectionIds": [telegram["id"]],
            "contentType": "TEXT",
            "text": "Operations e2e",
            "timezone": "UTC",
        },
        headers={"X-Request-Id": "ops-e2e-request-1"},
    )
    assert created.status_code == 201, created.text
    failing = stack.api(
        "POST",
        "/social-posts",
        json={
            "platforms": ["MASTODON"],
            "mastodonConnectionIds": [mastodon["id"]],
            "contentType": "TEXT",
            "text": "This one fails #sandbox-fail",
            "timezone": "UTC",
        },
    )
    assert failing.status_code == 201, failing.text
    posts = [wait_final(stack, body.json()["postId"]) for body in (created, failing)]
    wait_for(lambda: len(receiver.events()) >= 2, timeout=60, what="the post events at the webhook")
    receiver.close()
    return {"posts": posts, "upload_url": upload_url, "hook_secret": hook.json()["secret"]}


def test_metrics_add_up_web_and_worker_processes(ops_stack, traffic):
    assert [post["status"] for post in traffic["posts"]] == ["COMPLETED", "FAILED"]
    samples = wait_for(
        lambda: (lambda s: s if total(s, "crosspost_webhook_deliveries_total", outcome="succeeded") >= 2 else None)(
            scrape(ops_stack)
        ),
        timeout=30,
        what="the webhook deliveries to be counted",
    )
    assert (
        total(samples, "crosspost_http_requests_total", route="/api/v1/social-posts", method="POST", status="201") == 2
    )
    assert total(samples, "crosspost_http_request_duration_seconds_count", route="/api/v1/social-posts") >= 2
    assert total(samples, "crosspost_publishes_total", platform="MASTODON", outcome="published") == 1
    assert total(samples, "crosspost_publishes_total", platform="TELEGRAM", outcome="published") == 1
    failed = [
        dict(labels)
        for (name, labels), value in samples.items()
        if name == "crosspost_publishes_total" and dict(labels)["outcome"] == "failed" and value
    ]
    assert [(row["platform"], bool(row["error_code"])) for row in failed] == [("MASTODON", True)]
    assert total(samples, "crosspost_tasks_total", outcome="success") >= 3
    publish_tasks = [dict(labels)["task"] for (name, labels), _ in samples.items() if name == "crosspost_tasks_total"]
    assert any(task.startswith("posts.") for task in publish_tasks), publish_tasks
    assert any(task.startswith("webhooks.") for task in publish_tasks), publish_tasks
    assert total(samples, "crosspost_task_duration_seconds_count") >= 3
    assert {dict(labels)["queue"] for (name, labels), _ in samples.items() if name == "crosspost_queue_depth"} == {
        "publish",
        "webhooks",
        "analytics",
        "default",
    }
    assert total(samples, "crosspost_scheduler_lag_seconds") == 0
    assert 0 <= total(samples, "crosspost_beat_heartbeat_age_seconds") < 60


def test_readyz_sees_beat_and_the_dashboard_pages_are_styled(ops_stack, traffic):
    ready = wait_for(
        lambda: (lambda r: r if r.json()["checks"]["beat"] == "ok" else None)(
            requests.get(f"{ops_stack.web_url}/readyz", timeout=10)
        ),
        timeout=30,
        what="beat's heartbeat",
    )
    assert (ready.status_code, ready.json()["status"]) == (200, "ok")
    login = requests.get(f"{ops_stack.web_url}/admin/login/", timeout=10)
    assert login.status_code == 200
    stylesheets = re.findall(r'<link rel="stylesheet" href="([^"]+)"', login.text)
    assert stylesheets and all(".css" in href for href in stylesheets)
    for href in stylesheets:  # hashed names from the manifest, served by WhiteNoise
        css = requests.get(f"{ops_stack.web_url}{href}", timeout=10)
        assert (css.status_code, css.headers["Content-Type"].split(";")[0]) == (200, "text/css"), href
    for page in ("/api/v1/docs/", "/api/v1/redoc/"):
        html = requests.get(f"{ops_stack.web_url}{page}", timeout=10)
        assert html.status_code == 200, page
        scripts = re.findall(r'src="([^"]+\.js)"', html.text)
        # No CDN: static files, or ReDoc's bundle as the service serves it (core/redoc_page.py).
        assert scripts and all(src.startswith(("/static/", "/api/v1/redoc/")) for src in scripts), scripts
        for src in scripts:
            assert requests.get(f"{ops_stack.web_url}{src}", timeout=10).status_code == 200, src


SECRET_SHAPES = [
    re.compile(r"/connect/(?!callback/|\[redacted\])[^/\s\"?]+"),
    re.compile(r"[?&](?:code|state|signature|api_key)=(?!\[redacted\])"),
    re.compile(r"/bot\d+:"),
    re.compile(r"cpk_[0-9a-f]{16}_(?!\[redacted\])"),
    re.compile(r"(?i)bearer\s+(?!\[redacted\])\S{8,}"),
]


def test_no_log_line_of_the_run_holds_a_secret(ops_stack, traffic):
    logs = {path.name: path.read_text(errors="replace") for path in ops_stack.workdir.glob("*.log")}
    assert {"web.log", "sandbox.log", "worker.log", "beat.log"} <= set(logs)
    everything = "\n".join(logs.values())
    key_secret = ops_stack.api_key.split("_", 2)[2]
    upload_signature = traffic["upload_url"].split("signature=")[1].split("&")[0]
    for secret in (key_secret, upload_signature, traffic["hook_secret"], METRICS_TOKEN):
        assert secret not in everything
    for shape in SECRET_SHAPES:
        leaks = [line for line in everything.splitlines() if shape.search(line)]
        assert not leaks, (shape.pattern, leaks[:3])
    # The traffic did reach the access logs, redacted.
    assert "/connect/[redacted]/MASTODON" in logs["web.log"]
    assert "/sandbox/telegram/bot[redacted]/sendMessage" in logs["sandbox.log"]
    assert "signature=[redacted]" in logs["web.log"]


def test_the_worker_logs_in_json_with_the_request_id_of_the_request_that_caused_the_task(ops_stack, traffic):
    records = []
    for line in (ops_stack.workdir / "worker.log").read_text().splitlines():
        if line.startswith("{"):
            records.append(json.loads(line))
    assert records, "the worker wrote no JSON line"
    caused = [r for r in records if r.get("request_id") == "ops-e2e-request-1"]
    assert caused, [r.get("message") for r in records][:20]
    assert all(r["workspace_id"].startswith("ws_") for r in caused)
    assert all(r["key_prefix"].startswith("cpk_") for r in caused)
    assert any("posts." in r["message"] for r in caused)
    access = [
        json.loads(line)
        for line in (ops_stack.workdir / "web.log").read_text().splitlines()
        if '"gunicorn.access"' in line
    ]
    created = [a for a in access if a["request_id"] == "ops-e2e-request-1"]
    assert [(a["method"], a["path"], a["status"]) for a in created] == [("POST", "/api/v1/social-posts", "201")]


def test_a_key_revoked_with_manage_py_is_refused_at_once_by_every_web_process(ops_stack: E2EStack) -> None:
    """The web processes keep the keys they have read (``workspaces.key_cache``); a revocation
    made in another process (here the command line) reaches them through Redis, so the very next
    request is refused, whichever worker takes it."""
    output = ops_stack.manage("create_api_key", "--workspace", "E2E", "--role", "viewer")
    key = output.strip().splitlines()[-1].strip()

    def statuses() -> list[int]:
        # A new connection each time, so the requests spread over both gunicorn workers.
        return [
            requests.get(
                f"{ops_stack.web_url}/api/v1/me", headers={"Authorization": f"Bearer {key}"}, timeout=30
            ).status_code
            for _ in range(20)
        ]

    assert statuses() == [200] * 20
    ops_stack.manage("revoke_api_key", key)
    assert statuses() == [401] * 20
    assert ops_stack.api("GET", "/me").status_code == 200
