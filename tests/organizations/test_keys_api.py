"""Workspace keys through the API (issue 31 item 4): an organization key holding keys.manage
mints (secret shown once, hashed at rest), lists and revokes a workspace's keys; a revocation is
refused by every process from the next request; no key grants more than its issuer's role."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from audit.models import AuditEvent
from core.fields import format_instant
from tests.factories import OrganizationFactory, WorkspaceFactory
from tests.organizations.conftest import API, bearer
from workspaces.models import ApiKey, Organization
from workspaces.services import api_key_create, hash_secret

pytestmark = pytest.mark.django_db


def test_a_key_is_shown_once_hashed_at_rest_works_and_is_recorded(
    builder: APIClient, organization: Organization
) -> None:
    workspace = WorkspaceFactory(organization=organization)
    expires = format_instant(timezone.now() + dt.timedelta(days=10))
    response = builder.post(
        f"{API}/workspaces/{workspace.id}/api-keys",
        {"name": "acme", "role": "editor", "expiresAt": expires},
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    api_key = ApiKey.objects.get(pk=body["id"])
    assert body == {
        "id": api_key.id,
        "name": "acme",
        "publicPart": api_key.public_part,
        "workspaceId": workspace.id,
        "role": "editor",
        "status": "active",
        "createdAt": format_instant(api_key.created_at),
        "expiresAt": expires,
        "lastUsedAt": None,
        "revokedAt": None,
        "key": body["key"],
    }
    assert body["key"].startswith(f"{api_key.public_part}_") and api_key.secret_hash == hash_secret(
        body["key"].rsplit("_", 1)[1]
    )
    me = bearer(body["key"]).get(f"{API}/me").json()
    assert (me["workspace"]["id"], me["role"]["key"]) == (workspace.id, "editor")
    listed = builder.get(f"{API}/workspaces/{workspace.id}/api-keys").json()["apiKeys"]
    assert [k["id"] for k in listed] == [api_key.id] and "key" not in listed[0]
    event = AuditEvent.objects.get(action="api_key.create", target_id=api_key.id)
    assert event.workspace_ref == workspace.id and body["key"] not in str(event.changes)


def test_revocation_is_refused_at_once_and_idempotent(builder: APIClient, organization: Organization) -> None:
    workspace = WorkspaceFactory(organization=organization)
    issued = api_key_create(workspace=workspace, name="old", role="viewer")
    client = bearer(issued.plaintext)
    assert client.get(f"{API}/me").status_code == 200  # now kept by this process
    first = builder.delete(f"{API}/workspaces/{workspace.id}/api-keys/{issued.api_key.id}")
    assert first.status_code == 200 and first.json()["status"] == "revoked"
    assert client.get(f"{API}/me").status_code == 401
    again = builder.delete(f"{API}/workspaces/{workspace.id}/api-keys/{issued.api_key.id}")
    assert again.json()["revokedAt"] == first.json()["revokedAt"]
    assert AuditEvent.objects.filter(action="api_key.revoke", target_id=issued.api_key.id).count() == 1


def test_errors(builder: APIClient, organization: Organization, org_key: Callable[..., str], anon: APIClient) -> None:
    workspace = WorkspaceFactory(organization=organization)
    path = f"{API}/workspaces/{workspace.id}/api-keys"
    assert anon.post(path, {"name": "k", "role": "viewer"}, format="json").status_code == 401
    for body in (
        {"name": "k", "role": "owner"},
        {"name": "k"},
        {"name": "k", "role": "viewer", "expiresAt": "2001-01-01"},
    ):
        assert builder.post(path, body, format="json").status_code == 400, body
    lacking = bearer(org_key(permissions=["workspaces.manage"])).post(
        path, {"name": "k", "role": "viewer"}, format="json"
    )
    assert (lacking.status_code, lacking.json()["requiredPermission"]) == (403, "keys.manage")
    viewer_org_key = bearer(org_key(role="viewer"))
    escalation = viewer_org_key.post(path, {"name": "k", "role": "admin"}, format="json")
    assert (escalation.status_code, escalation.json()["code"]) == (403, "permission_denied")
    assert escalation.json()["requiredPermission"] == "posts.draft"
    assert viewer_org_key.post(path, {"name": "k", "role": "viewer"}, format="json").status_code == 201
    # Another organization's workspace and key: 404, and nothing revoked.
    theirs = WorkspaceFactory(organization=OrganizationFactory())
    their_key = api_key_create(workspace=theirs, name="t", role="admin").api_key
    assert builder.get(f"{API}/workspaces/{theirs.id}/api-keys").status_code == 404
    assert (
        builder.post(
            f"{API}/workspaces/{theirs.id}/api-keys", {"name": "k", "role": "viewer"}, format="json"
        ).status_code
        == 404
    )
    assert builder.delete(f"{API}/workspaces/{theirs.id}/api-keys/{their_key.id}").status_code == 404
    # A key of a sibling workspace named under this one: 404.
    sibling_key = api_key_create(workspace=WorkspaceFactory(organization=organization), name="s", role="admin").api_key
    assert builder.delete(f"{path}/{sibling_key.id}").status_code == 404
    assert not ApiKey.objects.filter(revoked_at__isnull=False).exists()
    # A workspace key reaches none of it.
    own = bearer(api_key_create(workspace=workspace, name="w", role="admin").plaintext)
    assert own.get(path).json()["code"] == "permission_denied"
    # A deleted workspace gets no new key.
    builder.delete(f"{API}/workspaces/{workspace.id}")
    inactive = builder.post(path, {"name": "k", "role": "viewer"}, format="json")
    assert (inactive.status_code, inactive.json()["code"]) == (409, "workspace_inactive")
