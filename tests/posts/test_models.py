"""The database refuses what must never happen, whatever code path writes the rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import IntegrityError, transaction

from posts.models import Post, PostTarget, RecurringPost
from tests.factories.posts import PostFactory, PostTargetFactory, account
from tests.posts.conftest import future

pytestmark = pytest.mark.django_db


def refused(write: Callable[[], Any], constraint: str) -> None:
    with pytest.raises(IntegrityError) as caught, transaction.atomic():
        write()
    assert constraint in str(caught.value)


def test_post_constraints(workspace: Any) -> None:
    post = PostFactory(workspace=workspace)
    refused(lambda: Post.objects.filter(id=post.id).update(status="LOST"), "post_status_valid")
    refused(lambda: Post.objects.filter(id=post.id).update(content_type="GIF"), "post_content_type_valid")
    refused(lambda: Post.objects.filter(id=post.id).update(status="SCHEDULED"), "post_scheduled_has_time")
    Post.objects.filter(id=post.id).update(status="SCHEDULED", scheduled_at=future())  # with a time: fine


def test_one_entry_per_account_per_post(workspace: Any) -> None:
    masto = account(workspace, "MASTODON")
    post = PostFactory(workspace=workspace)
    PostTargetFactory(post=post, account=masto)
    refused(lambda: PostTargetFactory(post=post, account=masto), "target_one_per_account")
    PostTargetFactory(post=PostFactory(workspace=workspace), account=masto)  # another post: fine


def test_entry_status_and_published_remote_id(workspace: Any) -> None:
    target = PostTargetFactory(post=PostFactory(workspace=workspace))
    rows = PostTarget.objects.filter(id=target.id)
    refused(lambda: rows.update(status="DONE"), "target_status_valid")
    refused(lambda: rows.update(status="PUBLISHED"), "target_published_has_remote_id")
    rows.update(status="PUBLISHED", platform_post_id="remote-1")  # with its remote id: fine


def test_one_post_per_series_occurrence(workspace: Any) -> None:
    when = future()
    series = RecurringPost.objects.create(
        workspace=workspace, frequency="DAILY", starts_at=when, timezone="UTC", next_occurrence_at=when
    )
    PostFactory(workspace=workspace, recurring_post=series, occurrence_at=when)
    refused(
        lambda: PostFactory(workspace=workspace, recurring_post=series, occurrence_at=when), "post_unique_occurrence"
    )
    refused(lambda: RecurringPost.objects.filter(id=series.id).update(interval=31), "recurring_interval_range")
