"""Delivery to loopback receivers: signed raw bodies, retries, auto-disable, the total deadline,
redirects, fan-out, idempotent tasks and the sweeper."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

import pytest
from django.utils import timezone

from tests.factories import WorkspaceFactory
from tests.factories.webhooks import WebhookFactory
from tests.webhooks.conftest import Receiver, attempt_one
from webhooks import enqueue
from webhooks.delivery.engine import deliveries_sweep
from webhooks.events import emit_event
from webhooks.models import Attempt, Delivery, Event, Webhook
from webhooks.tasks import deliver

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("allow_private", "fast_retries")]


def _hook(receiver: Receiver, path: str = "/hook", **kwargs: Any) -> Webhook:
    return WebhookFactory(url=receiver.url(path), **kwargs)


def _delivery_of(webhook: Webhook) -> Delivery:
    return Delivery.objects.get(webhook=webhook)


def _drain(delivery: Delivery, limit: int = 50) -> None:
    """Run attempts until the delivery is final (retry delays are 0 in these tests)."""
    for _ in range(limit):
        delivery.refresh_from_db()
        if delivery.status != "pending":
            return
        attempt_one(delivery.pk)
    raise AssertionError("delivery never finished")


def test_the_raw_body_received_is_the_signed_body(receiver: Receiver) -> None:
    webhook = _hook(receiver)
    data = {"post": {"id": "post_1", "text": 'Launch 🚀 line\u2028separator\u2029 and "quotes" é'}}
    emit_event(workspace_id=webhook.workspace_id, name="post.published", data=data)
    delivery = _delivery_of(webhook)
    result = attempt_one(delivery.pk)
    assert result is not None and result.ok
    [request] = receiver.to("/hook")
    event = Event.objects.get()
    assert request.body == event.payload.encode("utf-8")
    assert "🚀".encode() in request.body and "\u2028".encode() in request.body
    envelope = json.loads(request.body)
    assert envelope == {
        "id": event.id,
        "event": "post.published",
        "createdAt": envelope["createdAt"],
        "data": data,
    }
    assert event.id.startswith("evt_") and envelope["createdAt"].endswith("Z")
    headers = request.headers
    assert headers["content-type"] == "application/json"
    assert headers["x-service-event"] == "post.published"
    assert headers["x-service-webhook-id"] == webhook.id
    timestamp = headers["x-service-timestamp"]
    assert abs(int(timestamp) - time.time()) < 10
    expected = hmac.new(webhook.secret.encode(), timestamp.encode() + b"." + request.body, hashlib.sha256)
    assert headers["x-service-signature"] == "sha256=" + expected.hexdigest()
    delivery.refresh_from_db()
    webhook.refresh_from_db()
    assert (delivery.status, delivery.attempt_count, delivery.next_attempt_at) == ("succeeded", 1, None)
    assert webhook.last_success_at is not None and webhook.consecutive_failures == 0
    attempt = Attempt.objects.get()
    assert (attempt.status_code, attempt.error, attempt.response_body) == (200, "", "ok")


def test_failing_receiver_gets_one_plus_five_attempts_then_failed(receiver: Receiver) -> None:
    receiver.behave("/hook", status=500, body=b"boom" * 2000)
    webhook = _hook(receiver)
    emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={"post": {"id": "p"}})
    delivery = _delivery_of(webhook)
    _drain(delivery)
    assert len(receiver.to("/hook")) == 6
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempt_count, delivery.last_error) == ("failed", 6, "HTTP 500")
    attempts = list(delivery.attempts.all())
    assert [a.status_code for a in attempts] == [500] * 6
    assert all(len(a.response_body) == 4096 and a.duration_ms >= 0 for a in attempts)
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 6 and webhook.active
    # Every attempt re-signs, the body and id never change.
    bodies = {r.body for r in receiver.to("/hook")}
    assert len(bodies) == 1
    assert attempt_one(delivery.pk) is None
    assert len(receiver.to("/hook")) == 6


def test_retry_waits_for_the_jittered_delay(receiver: Receiver, settings: Any) -> None:
    settings.WEBHOOK_RETRY_DELAYS = [30.0, 120.0, 480.0, 1920.0, 7200.0]
    receiver.behave("/hook", status=503)
    webhook = _hook(receiver)
    emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={})
    delivery = _delivery_of(webhook)
    before = timezone.now()
    attempt_one(delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status == "pending" and delivery.next_attempt_at is not None
    wait = (delivery.next_attempt_at - before).total_seconds()
    assert 24 <= wait <= 36.5
    assert attempt_one(delivery.pk) is None  # not due yet: nothing sent
    assert len(receiver.to("/hook")) == 1


def test_recovery_resets_the_failure_counter(receiver: Receiver) -> None:
    receiver.behave("/hook", status=500)
    webhook = _hook(receiver)
    emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={})
    delivery = _delivery_of(webhook)
    for _ in range(3):
        attempt_one(delivery.pk)
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 3 and webhook.last_failure_at is not None
    receiver.behave("/hook", status=204, body=b"")
    attempt_one(delivery.pk)
    webhook.refresh_from_db()
    delivery.refresh_from_db()
    assert webhook.consecutive_failures == 0 and webhook.last_success_at is not None
    assert (delivery.status, delivery.attempt_count) == ("succeeded", 4)


def _attempt_one(workspace_id: str) -> bool:
    """Run the oldest due pending delivery of the workspace once; False when none is left."""
    delivery = (
        Delivery.objects.filter(webhook__workspace_id=workspace_id, status="pending").order_by("created_at").first()
    )
    if delivery is None:
        return False
    attempt_one(delivery.pk)
    return True


def test_auto_disable_after_exactly_twenty_consecutive_failed_posts(receiver: Receiver) -> None:
    receiver.behave("/hook", status=500)
    webhook = _hook(receiver)
    for index in range(5):
        emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={"n": index})
    for _ in range(19):
        assert _attempt_one(webhook.workspace_id)
    webhook.refresh_from_db()
    assert (webhook.active, webhook.consecutive_failures, webhook.disabled_at) == (True, 19, None)
    assert _attempt_one(webhook.workspace_id)
    webhook.refresh_from_db()
    assert len(receiver.to("/hook")) == 20
    assert (webhook.active, webhook.consecutive_failures) == (False, 20)
    assert webhook.disabled_at is not None
    # Pending retries were dropped: nothing more is ever sent.
    assert not Delivery.objects.filter(webhook=webhook, status="pending").exists()
    assert not _attempt_one(webhook.workspace_id)
    for delivery in Delivery.objects.filter(webhook=webhook):
        assert attempt_one(delivery.pk) is None
    # Events emitted while inactive are never delivered to it.
    emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={"late": True})
    assert Delivery.objects.filter(webhook=webhook).count() == 5
    assert len(receiver.to("/hook")) == 20


def test_no_disable_after_nineteen_failures_a_success_and_nineteen_more(receiver: Receiver) -> None:
    receiver.behave("/hook", status=500)
    webhook = _hook(receiver)
    for index in range(8):
        emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={"n": index})
    for _ in range(19):
        assert _attempt_one(webhook.workspace_id)
    receiver.behave("/hook", status=200)
    assert _attempt_one(webhook.workspace_id)
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 0
    receiver.behave("/hook", status=500)
    for _ in range(19):
        assert _attempt_one(webhook.workspace_id)
    webhook.refresh_from_db()
    assert len(receiver.to("/hook")) == 39
    assert (webhook.active, webhook.consecutive_failures, webhook.disabled_at) == (True, 19, None)
    assert _attempt_one(webhook.workspace_id)
    webhook.refresh_from_db()
    assert not webhook.active


def test_reenable_resets_and_later_events_are_delivered(receiver: Receiver) -> None:
    from webhooks.services import webhook_update

    webhook = _hook(receiver, active=False, disabled_at=timezone.now(), consecutive_failures=20)
    emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={"while": "off"})
    assert not Delivery.objects.filter(webhook=webhook).exists()
    webhook_update(workspace=webhook.workspace, webhook_id=webhook.pk, active=True)
    webhook.refresh_from_db()
    assert (webhook.active, webhook.consecutive_failures, webhook.disabled_at) == (True, 0, None)
    emit_event(workspace_id=webhook.workspace_id, name="post.published", data={"while": "on"})
    attempt_one(_delivery_of(webhook).pk)
    [request] = receiver.to("/hook")
    assert json.loads(request.body)["data"] == {"while": "on"}


@pytest.mark.parametrize(
    "behaviour",
    [
        {"mode": "slow", "delay": 5.0},
        {"mode": "silent"},
        {"mode": "drip_body", "delay": 0.2},  # a byte every 0.2 s: no single read ever times out
        {"mode": "drip_headers", "delay": 0.2},
    ],
    ids=["slow", "silent", "drip-body", "drip-headers"],
)
def test_total_deadline_for_slow_silent_and_dripping_receivers(receiver: Receiver, behaviour: dict[str, Any]) -> None:
    receiver.behave("/hook", **behaviour)
    webhook = _hook(receiver)
    emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={})
    started = time.monotonic()
    result = attempt_one(_delivery_of(webhook).pk)
    elapsed = time.monotonic() - started
    assert result is not None and not result.ok
    assert result.error == "timed out: no complete response within 1 s"
    # Cut off at the 1 s deadline; left alone each receiver would take 5 s to forever. The upper
    # bound leaves room for a loaded machine.
    assert 0.9 <= elapsed < 4.0
    attempt = Attempt.objects.get()
    assert attempt.error == result.error and 900 <= attempt.duration_ms < 4000
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 1


def test_redirect_is_not_followed_and_counts_as_failure(receiver: Receiver) -> None:
    receiver.behave("/hook", status=302, headers={"Location": receiver.url("/target")})
    webhook = _hook(receiver)
    emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={})
    result = attempt_one(_delivery_of(webhook).pk)
    assert result is not None
    assert (result.ok, result.status_code, result.error) == (False, 302, "redirect not followed (HTTP 302)")
    assert receiver.to("/target") == []
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 1


def test_connection_refused_is_a_recorded_failure(receiver: Receiver) -> None:
    webhook = WebhookFactory(url="http://127.0.0.1:9/closed")
    emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={})
    result = attempt_one(_delivery_of(webhook).pk)
    assert result is not None and (result.status_code, result.error) == (None, "connection refused")
    attempt = Attempt.objects.get()
    assert (attempt.status_code, attempt.error) == (None, "connection refused")


def test_each_event_reaches_every_active_webhook_of_its_workspace_and_none_other(receiver: Receiver) -> None:
    workspace, other = WorkspaceFactory(), WorkspaceFactory()
    mine = [_hook(receiver, f"/a{i}", workspace=workspace) for i in range(3)]
    _hook(receiver, "/paused", workspace=workspace, active=False)
    _hook(receiver, "/other", workspace=other)
    names = ["post.published", "post.partially_failed", "post.failed", "post.scheduled", "account.unauthorized"]
    names += ["image.completed", "image.failed"]
    for name in names:
        emit_event(workspace_id=workspace.id, name=name, data={"name": name})
    for delivery in Delivery.objects.all():
        attempt_one(delivery.pk)
    for webhook in mine:
        got = [json.loads(r.body)["event"] for r in receiver.to(webhook.url.removeprefix(receiver.base))]
        assert sorted(got) == sorted(names)
    assert receiver.to("/paused") == [] and receiver.to("/other") == []


def test_emit_rolls_back_with_the_callers_transaction(receiver: Receiver) -> None:
    from django.db import transaction

    webhook = _hook(receiver)
    with pytest.raises(RuntimeError), transaction.atomic():
        emit_event(workspace_id=webhook.workspace_id, name="post.published", data={})
        raise RuntimeError("caller failed")
    assert not Event.objects.exists() and not Delivery.objects.exists()


def test_emit_enqueues_only_after_commit(receiver: Receiver, django_capture_on_commit_callbacks: Any) -> None:
    from unittest import mock

    webhook = _hook(receiver)
    with mock.patch.object(enqueue.app, "send_task") as send_task:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            emit_event(workspace_id=webhook.workspace_id, name="post.published", data={})
        assert send_task.call_count == 0
        for callback in callbacks:
            callback()
    send_task.assert_called_once_with("webhooks.deliver_many", args=[[_delivery_of(webhook).pk]])


def test_unknown_event_name_is_refused() -> None:
    with pytest.raises(ValueError):
        emit_event(workspace_id=WorkspaceFactory().id, name="post.exploded", data={})


def test_deliver_task_twice_sends_once(receiver: Receiver) -> None:
    webhook = _hook(receiver)
    emit_event(workspace_id=webhook.workspace_id, name="post.published", data={})
    delivery = _delivery_of(webhook)
    deliver.run(delivery.pk)
    deliver.run(delivery.pk)
    assert len(receiver.to("/hook")) == 1
    assert Attempt.objects.count() == 1


def test_a_claimed_delivery_is_not_sent_by_a_second_worker(receiver: Receiver) -> None:
    webhook = _hook(receiver)
    emit_event(workspace_id=webhook.workspace_id, name="post.published", data={})
    delivery = _delivery_of(webhook)
    Delivery.objects.filter(pk=delivery.pk).update(lease_until=timezone.now() + timezone.timedelta(seconds=30))
    assert attempt_one(delivery.pk) is None
    assert receiver.to("/hook") == []


def test_delivery_to_a_disabled_webhook_is_dropped_without_a_post(receiver: Receiver) -> None:
    webhook = _hook(receiver)
    emit_event(workspace_id=webhook.workspace_id, name="post.published", data={})
    Webhook.objects.filter(pk=webhook.pk).update(active=False)
    delivery = _delivery_of(webhook)
    assert attempt_one(delivery.pk) is None
    delivery.refresh_from_db()
    assert delivery.status == "failed" and receiver.to("/hook") == []


def test_sweeper_reenqueues_lost_deliveries_once(receiver: Receiver, django_capture_on_commit_callbacks: Any) -> None:
    from unittest import mock

    webhook = _hook(receiver)
    emit_event(workspace_id=webhook.workspace_id, name="post.published", data={})
    emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={})
    lost, held = list(Delivery.objects.order_by("created_at"))
    long_ago = timezone.now() - timezone.timedelta(minutes=10)
    Delivery.objects.filter(pk=lost.pk).update(next_attempt_at=long_ago, lease_until=long_ago)
    Delivery.objects.filter(pk=held.pk).update(
        next_attempt_at=long_ago, lease_until=timezone.now() + timezone.timedelta(seconds=30)
    )
    with mock.patch.object(enqueue.app, "send_task") as send_task:
        with django_capture_on_commit_callbacks(execute=True):
            assert deliveries_sweep() == [lost.pk]
        with django_capture_on_commit_callbacks(execute=True):
            assert deliveries_sweep() == []
    send_task.assert_called_once_with("webhooks.deliver_many", args=[[lost.pk]])
    # The re-enqueued task then sends it (and only it).
    deliver.run(lost.pk)
    assert len(receiver.to("/hook")) == 1


def test_environment_proxies_are_ignored(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.webhooks.conftest import Receiver as ProxyReceiver

    proxy = ProxyReceiver()
    try:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.setenv(name, proxy.base)
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        webhook = _hook(receiver)
        emit_event(workspace_id=webhook.workspace_id, name="post.published", data={})
        result = attempt_one(_delivery_of(webhook).pk)
        assert result is not None and result.ok
        assert len(receiver.to("/hook")) == 1
        assert proxy.requests == []
    finally:
        proxy.close()


def test_secrets_never_reach_the_logs(
    receiver: Receiver, api: Any, workspace: Any, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    caplog.set_level(logging.DEBUG)
    response = api.post("/api/v1/webhooks", {"url": receiver.url("/hook")}, format="json")
    assert response.status_code == 201
    secret = response.json()["secret"]
    webhook = Webhook.objects.get(pk=response.json()["id"])
    receiver.behave("/hook", status=500)
    assert api.post(f"/api/v1/webhooks/{webhook.id}/test").json()["statusCode"] == 500
    emit_event(workspace_id=workspace.id, name="post.failed", data={})
    Webhook.objects.filter(pk=webhook.pk).update(consecutive_failures=19)
    assert attempt_one(_delivery_of(webhook).pk) is not None
    webhook.refresh_from_db()
    assert not webhook.active  # the auto-disable warning was logged
    assert "disabled after 20 consecutive failures" in caplog.text
    assert api.patch(f"/api/v1/webhooks/{webhook.id}", {"active": True}, format="json").status_code == 200
    assert caplog.records
    for record in caplog.records:
        assert secret not in record.getMessage()
        assert secret[len("whsec_") :] not in record.getMessage()
    assert secret not in caplog.text


def test_a_name_turning_private_after_registration_gets_no_post(
    receiver: Receiver, public_dns: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Registered while its name resolved publicly; at delivery the name answers loopback: the
    attempt is refused before any socket opens and recorded as a failure."""
    import socket

    from webhooks.services import webhook_create

    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    workspace = WorkspaceFactory()
    public_dns({"rebind.example.com": ["93.184.216.34"]})
    webhook = webhook_create(workspace=workspace, url="http://rebind.example.com/hook")
    public_dns({"rebind.example.com": ["127.0.0.1"]})
    opened: list[Any] = []
    monkeypatch.setattr(socket, "create_connection", lambda address, *a, **k: opened.append(address))
    emit_event(workspace_id=workspace.id, name="post.published", data={})
    result = attempt_one(_delivery_of(webhook).pk)
    assert result is not None and result.status_code is None
    assert (
        result.error
        == "refused: url must be a public endpoint: url host rebind.example.com resolves to a private address"
    )
    assert opened == [] and receiver.requests == []
    attempt = Attempt.objects.get()
    assert (attempt.status_code, attempt.error) == (None, result.error)
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 1
