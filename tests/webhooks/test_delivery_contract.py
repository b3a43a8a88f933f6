"""Delivery against the letter of CONTRACT.md §10, with loopback receivers: the envelope's exact
bytes, every step of the retry schedule, the default 10 s deadline, a failure count that never
loses an increment, and URLs whose path is not ASCII."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from tests.factories import WorkspaceFactory
from tests.factories.webhooks import WebhookFactory
from tests.webhooks.conftest import Receiver, attempt_one
from webhooks.events import emit_event
from webhooks.models import Delivery, Event, Webhook

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("allow_private")]


def test_the_envelope_is_compact_json_with_its_fields_in_order(receiver: Receiver) -> None:
    webhook = WebhookFactory(url=receiver.url("/hook"))
    data = {"post": {"id": "p 1", "text": "a, b: c 🚀\u2028", "tags": [1, 2], "none": None}}
    emit_event(workspace_id=webhook.workspace_id, name="post.published", data=data)
    result = attempt_one(Delivery.objects.get().pk)
    assert result is not None and result.ok
    [request] = receiver.to("/hook")
    event = Event.objects.get()
    created_at = json.loads(request.body)["createdAt"]
    expected = (
        f'{{"id":"{event.id}","event":"post.published","createdAt":"{created_at}",'
        '"data":{"post":{"id":"p 1","text":"a, b: c 🚀\u2028","tags":[1,2],"none":null}}}'
    )
    assert request.body == expected.encode("utf-8")
    assert request.headers["content-length"] == str(len(request.body))


def test_every_retry_waits_the_next_delay_of_the_configured_schedule(receiver: Receiver, settings: Any) -> None:
    settings.WEBHOOK_RETRY_DELAYS = [30.0, 120.0, 480.0, 1920.0, 7200.0]
    receiver.behave("/hook", status=500)
    webhook = WebhookFactory(url=receiver.url("/hook"))
    emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={})
    delivery = Delivery.objects.get()
    waits: list[float] = []
    for _ in range(6):
        sent_at = timezone.now()
        assert attempt_one(delivery.pk) is not None
        delivery.refresh_from_db()
        if delivery.status != "pending":
            break
        waits.append((delivery.next_attempt_at - sent_at).total_seconds())
        # Not due yet: a task arriving now sends nothing.
        assert attempt_one(delivery.pk) is None
        Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    assert len(waits) == 5
    for wait, delay in zip(waits, settings.WEBHOOK_RETRY_DELAYS, strict=True):
        assert delay * 0.8 - 1 <= wait <= delay * 1.2 + 1, (wait, delay)
    assert (delivery.status, delivery.attempt_count) == ("failed", 6)
    assert len(receiver.to("/hook")) == 6


def test_the_default_deadline_is_ten_seconds_for_a_dripping_receiver(receiver: Receiver, settings: Any) -> None:
    """The spec's 10 s with nothing shortened: a 200 status line, then a byte every 0.2 s of a
    body announced as 100 kB (no single read ever waits long) is cut off at 10 s."""
    assert settings.WEBHOOK_TIMEOUT_SECONDS == 10.0
    receiver.behave("/hook", mode="drip_body", delay=0.2)
    webhook = WebhookFactory(url=receiver.url("/hook"))
    emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={})
    started = time.monotonic()
    result = attempt_one(Delivery.objects.get().pk)
    elapsed = time.monotonic() - started
    assert result is not None and not result.ok
    assert result.error == "timed out: no complete response within 10 s"
    assert result.status_code == 200  # the status line came; the response never completed
    assert elapsed >= 9.9  # not given up early; how late it returns is the machine's business
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 1 and webhook.last_success_at is None


@pytest.mark.django_db(transaction=True)
def test_concurrent_failed_attempts_are_all_counted(receiver: Receiver, settings: Any) -> None:
    """Twelve failing deliveries of one webhook sent by twelve workers at once: the counter
    moves by exactly twelve (no lost update), and the webhook is not disabled below 20."""
    settings.WEBHOOK_RETRY_DELAYS = [3600.0] * 5
    receiver.behave("/hook", status=503, mode="slow", delay=0.3)  # keep the attempts overlapping
    webhook = WebhookFactory(url=receiver.url("/hook"), workspace=WorkspaceFactory())
    for index in range(12):
        emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={"n": index})
    ids = list(Delivery.objects.values_list("pk", flat=True))
    barrier = threading.Barrier(len(ids))
    errors: list[BaseException] = []

    def attempt(delivery_id: str) -> None:
        try:
            barrier.wait()
            attempt_one(delivery_id)
        except BaseException as exc:  # reported below; a thread's exception is otherwise lost
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=(delivery_id,)) for delivery_id in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(receiver.to("/hook")) == 12
    webhook.refresh_from_db()
    assert (webhook.consecutive_failures, webhook.active) == (12, True)


def test_a_url_whose_path_is_not_ascii_is_delivered_percent_encoded(receiver: Receiver, api: Any) -> None:
    response = api.post("/api/v1/webhooks", {"url": receiver.url("/crochet/é😀?ref=ü")}, format="json")
    assert response.status_code == 201, response.json()
    webhook = Webhook.objects.get(pk=response.json()["id"])
    assert webhook.url == receiver.url("/crochet/é😀?ref=ü")
    emit_event(workspace_id=webhook.workspace_id, name="post.published", data={})
    result = attempt_one(Delivery.objects.get().pk)
    assert result is not None and (result.ok, result.error) == (True, "")
    [request] = receiver.to("/crochet/%C3%A9%F0%9F%98%80")
    assert request.path == "/crochet/%C3%A9%F0%9F%98%80?ref=%C3%BC"
    test = api.post(f"/api/v1/webhooks/{webhook.id}/test")
    assert test.json() == {"success": True, "statusCode": 200, "error": None}
