"""KNOWN DEFECTS IN THE DELIVERY HOT PATH (webhooks/delivery/engine.py, transport.py), found by
the issue 6 audit and left to the engineer who owns that code. Each test states the contract and
is marked ``xfail(strict=True)``: it fails today without breaking the suite, and fails loudly
(XPASS) once the defect is fixed, so the mark is removed then. The fix each needs is in the
comment above it."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.db import IntegrityError, connection

from tests.factories.webhooks import WebhookFactory
from tests.webhooks.conftest import Receiver
from webhooks.delivery import engine
from webhooks.delivery.engine import deliveries_attempt, delivery_attempt
from webhooks.events import emit_event
from webhooks.models import Delivery, Webhook

pytestmark = pytest.mark.usefixtures("allow_private", "fast_retries")


# DEFECT IN THE DELIVERY HOT PATH (webhooks/delivery/transport.py), left to its owner: the 10 s
# is a total deadline per attempt, but transport.post starts its deadline only after
# url_safety.resolve_target has resolved the name. The lookup is itself bounded (by the same
# number of seconds), so a slow DNS answer plus a slow receiver can take up to twice the deadline.
# Fix: create the _Deadline before resolve_target and pass the time left to the lookup (e.g. a
# ``timeout`` argument to resolve_target/resolve_addresses, which url_safety can take). Remove the
# xfail mark once fixed (strict: the test fails loudly when it starts passing).
@pytest.mark.xfail(strict=True, raises=AssertionError, reason="transport starts the deadline after the DNS lookup")
def test_the_deadline_counts_the_dns_lookup_too(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from webhooks.delivery.transport import post

    real = socket.getaddrinfo

    def slow_then_loopback(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "slow.example.com":
            time.sleep(2.5)
            return real("127.0.0.1", port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_then_loopback)
    receiver.behave("/hook", mode="silent")
    port = receiver.server.server_address[1]
    started = time.monotonic()
    result = post(url=f"http://slow.example.com:{port}/hook", body=b"{}", headers={}, timeout=3)
    elapsed = time.monotonic() - started
    assert result.error == "timed out: no complete response within 3 s"
    # 3 s in all, DNS included; today it is 2.5 s of lookup and then 3 s more (5.5 s).
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


# DEFECT: deleting a webhook while one of its deliveries is in flight makes recording the attempt
# fail with an IntegrityError (the Attempt row's delivery was deleted with the webhook; the FK is
# checked at commit). Alone, the task crashes. In a batch (deliver_many), the successes that
# arrived together are recorded in one transaction, so another webhook's success is lost with it
# (as is every result not yet recorded when it raises) and that webhook is POSTed the same event
# again once the lease runs out.
# Fix (engine._record and engine._record_arrived): write the Attempt only for deliveries that
# still exist, e.g. run the fenced Delivery UPDATE first and insert Attempts only for the ids it
# returned (UPDATE ... RETURNING id), treating a vanished delivery as nothing left to record.
@pytest.mark.xfail(
    strict=True, raises=IntegrityError, reason="recording an attempt of a deleted webhook raises IntegrityError"
)
@pytest.mark.django_db(transaction=True)
def test_a_webhook_deleted_mid_send_is_not_an_error(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    hook = WebhookFactory(url=receiver.url("/gone"))
    emit_event(workspace_id=hook.workspace_id, name="post.published", data={})
    _deleted_while_in_flight(monkeypatch, hook.url)
    result = delivery_attempt(delivery_id=Delivery.objects.get().pk)
    assert result is not None and result.ok
    assert not Delivery.objects.exists()


@pytest.mark.xfail(
    strict=True, raises=IntegrityError, reason="recording an attempt of a deleted webhook raises IntegrityError"
)
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
