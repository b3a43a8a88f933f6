"""Factories of the webhooks app."""

from __future__ import annotations

import factory

from tests.factories import WorkspaceFactory
from webhooks.models import Webhook
from webhooks.services import new_secret
from webhooks.url_safety import normalize_url


class WebhookFactory(factory.django.DjangoModelFactory):
    """A webhook row written directly (no URL resolution); point ``url`` at a test receiver."""

    class Meta:
        model = Webhook

    workspace = factory.SubFactory(WorkspaceFactory)
    url = factory.Sequence(lambda n: f"https://hooks{n}.example.com/receive")
    normalized_url = factory.LazyAttribute(lambda w: normalize_url(w.url))
    secret = factory.LazyFunction(new_secret)
