from __future__ import annotations

import datetime as dt

import factory

from accounts.models import SocialAccount
from analytics.models import FollowerSnapshot, TrackedPost
from tests.factories import WorkspaceFactory


class SocialAccountFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SocialAccount

    workspace = factory.SubFactory(WorkspaceFactory)
    platform = "FACEBOOK"
    external_id = factory.Sequence(lambda n: f"ext-{n}")
    display_name = factory.Sequence(lambda n: f"Account {n}")
    access_token = "token-value"


class TrackedPostFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TrackedPost

    account = factory.SubFactory(SocialAccountFactory)
    workspace = factory.LazyAttribute(lambda o: o.account.workspace)
    platform = factory.LazyAttribute(lambda o: o.account.platform)
    platform_post_id = factory.Sequence(lambda n: f"remote-{n}")
    published_at = dt.datetime(2026, 8, 10, tzinfo=dt.UTC)
    refresh_until = factory.LazyAttribute(lambda o: o.published_at + dt.timedelta(days=180))


class FollowerSnapshotFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = FollowerSnapshot

    account = factory.SubFactory(SocialAccountFactory)
    workspace = factory.LazyAttribute(lambda o: o.account.workspace)
    platform = factory.LazyAttribute(lambda o: o.account.platform)
