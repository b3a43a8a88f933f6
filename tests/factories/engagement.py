"""Factories of the inbox: a comment under a published entry, as a sync stores it."""

from __future__ import annotations

import datetime as dt

import factory
from django.utils import timezone

from engagement.models import Comment
from tests.factories.posts import PostFactory, PostTargetFactory


class CommentFactory(factory.django.DjangoModelFactory):
    """A comment of someone else under ``target`` (a PUBLISHED entry made for it unless given)."""

    class Meta:
        model = Comment

    target = factory.SubFactory(
        PostTargetFactory,
        post=factory.SubFactory(PostFactory, status="COMPLETED"),
        status="PUBLISHED",
        platform_post_id=factory.Sequence(lambda n: f"remote-post-{n}"),
    )
    workspace = factory.LazyAttribute(lambda c: c.target.post.workspace)
    account = factory.LazyAttribute(lambda c: c.target.account)
    platform = factory.LazyAttribute(lambda c: c.target.platform)
    post = factory.LazyAttribute(lambda c: c.target.post)
    platform_post_id = factory.LazyAttribute(lambda c: c.target.platform_post_id)
    platform_comment_id = factory.Sequence(lambda n: f"remote-comment-{n}")
    author_id = factory.Sequence(lambda n: f"fan-{n}")
    author_name = "Ana Alvarez"
    author_handle = "anaa42"
    text = "Where can I buy it?"
    created_at = factory.LazyFunction(lambda: timezone.now() - dt.timedelta(minutes=5))
    like_count = 3
    reply_count = 0
