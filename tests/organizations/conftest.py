from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import OrganizationFactory
from workspaces.models import Organization
from workspaces.roles import ORGANIZATION_PERMISSIONS
from workspaces.services import organization_key_create

API = "/api/v1"


def bearer(key: str, workspace_id: str | None = None) -> APIClient:
    client = APIClient()
    headers: dict[str, str] = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    if workspace_id is not None:
        headers["HTTP_X_WORKSPACE_ID"] = workspace_id
    client.credentials(**headers)
    return client


@pytest.fixture
def organization(db: Any) -> Organization:
    return OrganizationFactory(name="Builder")


@pytest.fixture
def org_key(organization: Organization) -> Callable[..., str]:
    def make(role: str = "admin", permissions: list[str] | None = None, org: Organization | None = None) -> str:
        return organization_key_create(
            organization=org or organization,
            name=f"org {role}",
            role=role,
            permissions=list(ORGANIZATION_PERMISSIONS) if permissions is None else permissions,
        ).plaintext

    return make


@pytest.fixture
def builder(org_key: Callable[..., str]) -> APIClient:
    """An organization key of ``organization`` with every organization permission, role admin."""
    return bearer(org_key())
