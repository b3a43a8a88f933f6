"""Factories for the accounts app: accounts with made-up tokens (for tests that never call a
platform) and connect links."""

from __future__ import annotations

import datetime as dt
import secrets

import factory
from django.utils import timezone

from accounts.models import ConnectLink, SocialAccount
from accounts.selectors import token_hash
from tests.factories import WorkspaceFactory
from workspaces.models import Workspace


class SocialAccountFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SocialAccount

    workspace = factory.SubFactory(WorkspaceFactory)
    platform = "MASTODON"
    external_id = factory.Sequence(lambda n: f"ext{n}")
    display_name = factory.Sequence(lambda n: f"Account {n}")
    username = factory.Sequence(lambda n: f"user{n}")
    access_token = factory.LazyFunction(lambda: f"access-{secrets.token_hex(8)}")
    refresh_token = ""


def make_connect_link(
    workspace: Workspace, *, expires_in: dt.timedelta = dt.timedelta(hours=24)
) -> tuple[ConnectLink, str]:
    """A link row and its token (the API only shows the token at creation)."""
    token = secrets.token_urlsafe(32)
    link = ConnectLink.objects.create(
        workspace=workspace, token_hash=token_hash(token), expires_at=timezone.now() + expires_in
    )
    return link, token
