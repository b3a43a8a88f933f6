"""factory-boy factories shared by every test module."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from workspaces.models import Membership, Organization, Workspace


class OrganizationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Organization

    name = factory.Sequence(lambda n: f"Organization {n}")


class WorkspaceFactory(factory.django.DjangoModelFactory):
    """A workspace in an organization of its own unless one is given."""

    class Meta:
        model = Workspace

    name = factory.Sequence(lambda n: f"Workspace {n}")
    organization = factory.SubFactory(OrganizationFactory)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    workspace = factory.SubFactory(WorkspaceFactory)
    role = "admin"
    is_default = False
