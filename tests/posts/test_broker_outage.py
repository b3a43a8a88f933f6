"""A broker outage between the commit and the enqueue never turns a created post into a 500
(which would make clients retry and create it twice); the sweeper queues it once Redis is back."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone
from kombu.exceptions import OperationalError

from posts.models import Post, PostStatus, TargetStatus
from posts.pipeline import enqueue
from posts.pipeline.sweeper import sweep
from tests.factories.posts import account
from tests.pipeline.helpers import empty_publish_queue

pytestmark = pytest.mark.django_db(transaction=True)


def test_post_is_created_and_later_queued_when_the_broker_is_down(api: Any, workspace: Any, monkeypatch) -> None:
    masto = account(workspace, "MASTODON")

    def broker_down(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("Error 111 connecting to the broker. Connection refused.")

    monkeypatch.setattr(enqueue.app, "send_task", broker_down)
    response = api.post(
        "/api/v1/social-posts",
        {
            "platforms": ["MASTODON"],
            "contentType": "TEXT",
            "timezone": "UTC",
            "text": "hi",
            "mastodonConnectionIds": [masto.id],
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    post = Post.objects.get(id=response.json()["postId"])
    assert post.status == PostStatus.PENDING
    [target] = post.targets.all()
    assert target.status == TargetStatus.PENDING

    empty_publish_queue()
    sent: list[Any] = []
    monkeypatch.setattr(enqueue.app, "send_task", lambda name, args=None, **kw: sent.append((name, args)))
    sweep(now=timezone.now() + dt.timedelta(minutes=5))
    assert any(target.id in (args[0] if isinstance(args[0], list) else args) for _, args in sent), sent
