"""One log line per webhook delivery attempt's outcome: succeeded, failed and retrying in N s, or
failed for good; naming the delivery, webhook, workspace, event and attempt, never the URL."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.factories.webhooks import WebhookFactory
from tests.webhooks.conftest import Receiver, attempt_one
from webhooks.events import emit_event
from webhooks.models import Delivery

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("allow_private")]


def _lines(caplog: Any) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "webhooks.deliveries"]


def test_each_delivery_attempt_leaves_one_line_with_its_outcome(receiver: Receiver, settings: Any, caplog: Any) -> None:
    settings.WEBHOOK_RETRY_DELAYS = [0.0]  # one retry, due at once
    settings.WEBHOOK_TIMEOUT_SECONDS = 1.0
    caplog.set_level(logging.INFO, logger="webhooks.deliveries")
    receiver.behave("/hook", status=500)
    secret_path = "/hook?token=receivers-own-secret"
    webhook = WebhookFactory(url=receiver.url(secret_path))
    emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={"post": {"id": "p"}})
    delivery = Delivery.objects.get(webhook=webhook)

    attempt_one(delivery.pk)
    attempt_one(delivery.pk)

    retrying, failed = _lines(caplog)
    assert (retrying.levelno, retrying.outcome, retrying.attempt, retrying.retry_in_s) == (
        logging.WARNING,
        "retrying",
        1,
        0.0,
    )
    assert retrying.getMessage().startswith("webhook delivery failed, retrying in 0 s: ")
    assert (failed.levelno, failed.outcome, failed.attempt, failed.retry_in_s) == (logging.WARNING, "failed", 2, None)
    for line in (retrying, failed):
        assert (line.delivery_id, line.webhook_id, line.event) == (delivery.pk, webhook.id, "post.failed")
        assert (line.workspace_id, line.status_code, line.error) == (webhook.workspace_id, 500, "HTTP 500")
        assert "receivers-own-secret" not in line.getMessage() and receiver.url("") not in line.getMessage()


def test_a_delivered_event_leaves_one_info_line(receiver: Receiver, caplog: Any) -> None:
    caplog.set_level(logging.INFO, logger="webhooks.deliveries")
    webhook = WebhookFactory(url=receiver.url("/hook"))
    emit_event(workspace_id=webhook.workspace_id, name="post.published", data={"post": {"id": "p"}})
    delivery = Delivery.objects.get(webhook=webhook)

    attempt_one(delivery.pk)

    (line,) = _lines(caplog)
    assert (line.levelno, line.outcome, line.attempt, line.status_code) == (logging.INFO, "succeeded", 1, 200)
    assert (line.delivery_id, line.event, line.workspace_id) == (delivery.pk, "post.published", webhook.workspace_id)
    assert line.getMessage().startswith("webhook delivery succeeded (200): ")
