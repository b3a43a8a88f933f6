"""One event's deliveries sent together (``webhooks.deliver_many``): one message per event, the
POSTs side by side, successes recorded in one transaction, failures exactly as alone, and a second
run of the task sending nothing."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from unittest import mock

import pytest
from django.utils import timezone

from tests.factories.webhooks import WebhookFactory
from tests.webhooks.conftest import Receiver
from webhooks import enqueue
from webhooks.events import emit_event
from webhooks.models import Attempt, Delivery, Webhook
from webhooks.tasks import deliver_many

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("allow_private", "fast_retries")]


def _hooks(receiver: Receiver, n: int) -> list[Webhook]:
    first = WebhookFactory(url=receiver.url("/h0"))
    return [first] + [WebhookFactory(workspace=first.workspace, url=receiver.url(f"/h{i}")) for i in range(1, n)]


def test_an_events_deliveries_are_enqueued_as_one_task(
    receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    hooks = _hooks(receiver, 3)
    with (
        mock.patch.object(enqueue.app, "send_task") as send_task,
        django_capture_on_commit_callbacks(execute=True),
    ):
        emit_event(workspace_id=hooks[0].workspace_id, name="post.published", data={})
    [call] = send_task.call_args_list
    assert call.args == ("webhooks.deliver_many",)
    assert sorted(call.kwargs["args"][0]) == sorted(Delivery.objects.values_list("id", flat=True))


def test_deliver_many_sends_each_once_and_records_success(receiver: Receiver) -> None:
    hooks = _hooks(receiver, 3)
    Webhook.objects.filter(pk=hooks[0].pk).update(consecutive_failures=3)
    emit_event(workspace_id=hooks[0].workspace_id, name="post.published", data={"n": 1})
    ids = list(Delivery.objects.values_list("id", flat=True))

    deliver_many.run(ids)
    deliver_many.run(ids)  # a second delivery of the task sends nothing

    assert sorted(r.path for r in receiver.requests) == ["/h0", "/h1", "/h2"]
    assert Attempt.objects.count() == 3
    for delivery in Delivery.objects.all():
        assert (delivery.status, delivery.attempt_count, delivery.lease_until) == ("succeeded", 1, None)
        assert delivery.last_attempt_at is not None and delivery.next_attempt_at is None
    for webhook in Webhook.objects.all():
        assert webhook.consecutive_failures == 0 and webhook.last_success_at is not None


def test_deliver_many_records_a_failure_as_alone_and_skips_held_ones(receiver: Receiver) -> None:
    hooks = _hooks(receiver, 3)
    receiver.behave("/h1", status=500)
    emit_event(workspace_id=hooks[0].workspace_id, name="post.published", data={})
    held = Delivery.objects.get(webhook=hooks[2])
    Delivery.objects.filter(pk=held.pk).update(lease_until=timezone.now() + dt.timedelta(seconds=30))

    deliver_many.run(list(Delivery.objects.values_list("id", flat=True)))

    assert sorted(r.path for r in receiver.requests) == ["/h0", "/h1"]  # the held one is not sent
    ok, failed, still_held = (Delivery.objects.get(webhook=h) for h in hooks)
    assert ok.status == "succeeded"
    assert failed.status == "pending" and failed.attempt_count == 1 and failed.last_error == "HTTP 500"
    assert failed.next_attempt_at is not None and failed.lease_until is None
    assert still_held.status == "pending" and still_held.attempt_count == 0
    assert Webhook.objects.get(pk=hooks[1].pk).consecutive_failures == 1


def test_deliver_many_closes_deliveries_of_an_inactive_webhook_without_a_post(receiver: Receiver) -> None:
    hooks = _hooks(receiver, 2)
    emit_event(workspace_id=hooks[0].workspace_id, name="post.published", data={})
    Webhook.objects.filter(pk=hooks[1].pk).update(active=False)
    deliver_many.run(list(Delivery.objects.values_list("id", flat=True)))
    assert [r.path for r in receiver.requests] == ["/h0"]
    assert Delivery.objects.get(webhook=hooks[1]).status == "failed"


def test_events_emitted_together_are_each_recorded_and_enqueued_as_alone(
    receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    from webhooks.events import emit_events
    from webhooks.models import Event

    hooks = _hooks(receiver, 2)
    WebhookFactory(workspace=hooks[0].workspace, url=receiver.url("/paused"), active=False)
    other = WebhookFactory(url=receiver.url("/other"))
    silent = WebhookFactory(url=receiver.url("/silent"), active=False).workspace_id
    with (
        mock.patch.object(enqueue.app, "send_task") as send_task,
        django_capture_on_commit_callbacks(execute=True),
    ):
        emit_events(
            [
                (hooks[0].workspace_id, "post.published", {"post": {"id": "p1"}}),
                (other.workspace_id, "post.failed", {"post": {"id": "p2"}}),
                (hooks[0].workspace_id, "post.partially_failed", {"post": {"id": "p3"}}),
                (silent, "post.published", {"post": {"id": "p4"}}),
            ]
        )
    events = list(Event.objects.order_by("created_at"))
    assert [(e.name, e.workspace_id) for e in events] == [
        ("post.published", hooks[0].workspace_id),
        ("post.failed", other.workspace_id),
        ("post.partially_failed", hooks[0].workspace_id),
        ("post.published", silent),
    ]
    assert len({e.created_at for e in events}) == 4  # each its own instant, in order
    by_event = {e.id: sorted(Delivery.objects.filter(event=e).values_list("webhook_id", flat=True)) for e in events}
    assert list(by_event.values()) == [sorted(h.id for h in hooks), [other.id], sorted(h.id for h in hooks), []]
    # One task per event, with that event's deliveries only; an event without webhooks none.
    assert {call.args for call in send_task.call_args_list} == {("webhooks.deliver_many",)}
    sent = sorted(sorted(call.kwargs["args"][0]) for call in send_task.call_args_list)
    expected = [sorted(Delivery.objects.filter(event=e).values_list("id", flat=True)) for e in events[:3]]
    assert sorted(sent) == sorted(expected)


def test_events_emitted_together_refuse_an_unknown_name_before_writing() -> None:
    from webhooks.events import emit_events
    from webhooks.models import Event

    with pytest.raises(ValueError):
        emit_events([("ws_x", "post.published", {}), ("ws_x", "post.exploded", {})])
    assert not Event.objects.exists()


def _emit(workspace_id: str, count: int) -> list[str]:
    """``count`` events, each its own instant; returns their ids, oldest first."""
    from webhooks.models import Event

    for index in range(count):
        emit_event(workspace_id=workspace_id, name="post.published", data={"n": index})
    return list(Event.objects.order_by("created_at").values_list("id", flat=True))


def test_a_task_takes_the_oldest_due_deliveries_up_to_the_batch(receiver: Receiver, settings: Any) -> None:
    # When events arrive faster than they are sent, one task sends several events' deliveries: its
    # own ids are a wake-up call, the oldest due come first, and no more than the batch.
    settings.WEBHOOK_DELIVERY_BATCH = 4
    hooks = _hooks(receiver, 2)
    events = _emit(hooks[0].workspace_id, 3)
    newest = list(Delivery.objects.filter(event_id=events[2]).values_list("id", flat=True))

    deliver_many.run(newest)

    sent = {json.loads(r.body)["id"] for r in receiver.requests}
    assert sent == set(events[:2])  # the two oldest events' four deliveries, not the task's own
    assert set(Delivery.objects.filter(status="succeeded").values_list("event_id", flat=True)) == set(events[:2])
    assert Delivery.objects.filter(event_id=events[2], status="pending", lease_until=None).count() == 2
    deliver_many.run(newest)
    assert Delivery.objects.filter(status="succeeded").count() == 6 and len(receiver.requests) == 6


def test_a_webhooks_deliveries_go_one_after_the_other_in_emission_order(receiver: Receiver) -> None:
    hooks = _hooks(receiver, 2)
    events = _emit(hooks[0].workspace_id, 3)

    deliver_many.run(list(Delivery.objects.filter(event_id=events[0]).values_list("id", flat=True)))

    for hook in ("/h0", "/h1"):
        got = receiver.to(hook)
        assert [json.loads(r.body)["id"] for r in got] == events
        assert got == sorted(got, key=lambda r: r.at)
    assert Attempt.objects.count() == 6 and not Delivery.objects.exclude(status="succeeded").exists()


def test_a_failure_stops_its_webhooks_lane_and_gives_the_rest_back_unsent(
    receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    # A failing receiver gets one POST per task, so its failure count moves exactly as one by one.
    hooks = _hooks(receiver, 2)
    receiver.behave("/h1", status=500)
    events = _emit(hooks[0].workspace_id, 3)
    with (
        mock.patch.object(enqueue.app, "send_task") as send_task,
        django_capture_on_commit_callbacks(execute=True),
    ):
        deliver_many.run(list(Delivery.objects.filter(event_id=events[0]).values_list("id", flat=True)))

    assert len(receiver.to("/h0")) == 3 and len(receiver.to("/h1")) == 1
    assert Webhook.objects.get(pk=hooks[1].pk).consecutive_failures == 1
    failed = Delivery.objects.get(webhook=hooks[1], event_id=events[0])
    assert (failed.status, failed.attempt_count, failed.last_error) == ("pending", 1, "HTTP 500")
    unsent = Delivery.objects.filter(webhook=hooks[1], event_id__in=events[1:])
    assert [(d.status, d.attempt_count, d.lease_until) for d in unsent] == [("pending", 0, None)] * 2
    assert not Attempt.objects.filter(delivery__in=unsent).exists()
    queued = [sorted(call.kwargs["args"][0]) for call in send_task.call_args_list]
    assert sorted(d.pk for d in unsent) in queued  # given back and queued again


def test_successes_of_a_delivery_taken_over_keep_the_attempt_but_not_the_write(receiver: Receiver) -> None:
    from webhooks.delivery import engine
    from webhooks.delivery.transport import SendResult

    hooks = _hooks(receiver, 2)
    emit_event(workspace_id=hooks[0].workspace_id, name="post.published", data={})
    mine, taken = (Delivery.objects.get(webhook=h) for h in hooks)
    lease = timezone.now() + dt.timedelta(seconds=30)
    Delivery.objects.filter(pk=mine.pk).update(lease_until=lease)
    Delivery.objects.filter(pk=taken.pk).update(lease_until=lease + dt.timedelta(seconds=1))
    Webhook.objects.filter(pk__in=[h.pk for h in hooks]).update(consecutive_failures=4)
    ok = SendResult(status_code=200, error="", response_body="ok", duration_ms=3)

    engine._record_succeeded([(mine, ok), (taken, ok)], lease_until=lease)

    mine.refresh_from_db()
    taken.refresh_from_db()
    assert (mine.status, mine.attempt_count, mine.lease_until) == ("succeeded", 1, None)
    assert (taken.status, taken.attempt_count) == ("pending", 0)  # its new holder's to write
    assert sorted(Attempt.objects.values_list("delivery_id", "status_code")) == sorted(
        [(mine.pk, 200), (taken.pk, 200)]
    )
    assert list(Webhook.objects.values_list("consecutive_failures", flat=True)) == [0, 0]
