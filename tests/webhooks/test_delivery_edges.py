"""Delivery edge cases found by the issue 6 audit: the 10 s deadline counts the receiver's DNS
lookup too, and a webhook deleted while its POST is on the wire costs neither the task nor the
other webhooks of the same batch anything."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.db import connection

from tests.factories.webhooks import WebhookFactory
from tests.webhooks.conftest import Receiver, attempt_one
from webhooks.delivery import engine
from webhooks.delivery.engine import deliveries_attempt
from webhooks.events import emit_event
from webhooks.models import Delivery, Webhook

pytestmark = pytest.mark.usefixtures("allow_private", "fast_retries")


# The deadline is one for the whole attempt, DNS lookup included (a slow name server plus a slow
# receiver must not take twice the deadline).
def test_the_deadline_counts_the_dns_lookup_too(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from webhooks.delivery.transport import post

    real = socket.getaddrinfo

    def slow_then_loopback(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "slow.example.com":
            time.sleep(2.0)
            return real("127.0.0.1", port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_then_loopback)
    receiver.behave("/hook", mode="silent")
    port = receiver.server.server_address[1]
    started = time.monotonic()
    result = post(url=f"http://slow.example.com:{port}/hook", body=b"{}", headers={}, timeout=3)
    elapsed = time.monotonic() - started
    assert result.error == "timed out: no complete response within 3 s"
    # 3 s in all, DNS included (2 s of lookup then 3 s more would be 5 s).
    assert elapsed < 4.5


def _deleted_while_in_flight(monkeypatch: pytest.MonkeyPatch, doomed_url: str) -> None:
    """The webhook at ``doomed_url`` is deleted (DELETE /webhooks/{id}) while its POST is on the wire."""
    real = engine.post

    def post(*, url: str, **kwargs: Any) -> Any:
        result = real(url=url, **kwargs)
        if url == doomed_url:
            Webhook.objects.filter(url=url).delete()
            connection.close()  # this ran on a sender thread: its connection is its own
        return result

    monkeypatch.setattr(engine, "post", post)


# A webhook deleted while one of its deliveries is in flight: the attempt has nothing left to be
# recorded against, and in a batch the other webhooks' results are recorded all the same.
@pytest.mark.django_db(transaction=True)
def test_a_webhook_deleted_mid_send_is_not_an_error(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    hook = WebhookFactory(url=receiver.url("/gone"))
    emit_event(workspace_id=hook.workspace_id, name="post.published", data={})
    _deleted_while_in_flight(monkeypatch, hook.url)
    result = attempt_one(Delivery.objects.get().pk)
    assert result is not None and result.ok
    assert not Delivery.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_webhook_deleted_mid_batch_costs_the_others_nothing(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    keep = WebhookFactory(url=receiver.url("/keep"))
    gone = WebhookFactory(url=receiver.url("/gone"), workspace=keep.workspace)
    emit_event(workspace_id=keep.workspace_id, name="post.published", data={})
    _deleted_while_in_flight(monkeypatch, gone.url)
    deliveries_attempt(delivery_ids=list(Delivery.objects.values_list("pk", flat=True)))
    kept = Delivery.objects.get(webhook=keep)
    assert (kept.status, kept.attempt_count, kept.lease_until) == ("succeeded", 1, None)
    assert len(receiver.to("/keep")) == 1
