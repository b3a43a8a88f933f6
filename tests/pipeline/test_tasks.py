"""The Celery tasks are registered under their names, routed to the publish queue, scheduled by
beat, and each run twice changes the world once."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from config.celery import app, collect_beat_schedule, route_task
from platforms.base import Platform
from posts import tasks
from posts.models import Post, PostStatus, TargetStatus
from tests.pipeline.helpers import connect_account, events_of, make_post, sandbox_publishes, targets_of

pytestmark = pytest.mark.django_db(transaction=True)


def test_tasks_are_registered_routed_and_scheduled():
    app.loader.import_default_modules()
    for name in ("posts.publish_target", "posts.publish_targets", "posts.dispatch_due", "posts.sweep"):
        assert name in app.tasks
        assert route_task(name, (), {}, {}) == {"queue": "publish"}
    schedule = collect_beat_schedule()
    assert schedule["posts.dispatch_due"]["task"] == "posts.dispatch_due"
    assert schedule["posts.dispatch_due"]["schedule"] <= 2
    assert schedule["posts.sweep"]["task"] == "posts.sweep"


def test_each_task_run_twice_changes_the_world_once(sandbox, workspace):
    account = connect_account(workspace, Platform.MASTODON)
    post = make_post(
        workspace, [account], status=PostStatus.SCHEDULED, scheduled_at=timezone.now() - dt.timedelta(seconds=1)
    )
    [target] = targets_of(post)

    assert tasks.dispatch_due_task.apply().get() == 1
    assert tasks.dispatch_due_task.apply().get() == 0
    assert tasks.publish_target_task.apply(args=[target.id]).get() == 1
    assert tasks.publish_target_task.apply(args=[target.id]).get() == 0
    assert tasks.publish_targets_task.apply(args=[[target.id]]).get() == 0
    tasks.sweep_task.apply()
    tasks.sweep_task.apply()

    target.refresh_from_db()
    assert target.status == TargetStatus.PUBLISHED
    assert Post.objects.get(id=post.id).status == PostStatus.COMPLETED
    assert len(sandbox_publishes(Platform.MASTODON)) == 1
    assert [e["event"] for e in events_of(post.id)] == ["post.published"]
