"""GET /me and GET /workspaces: whole bodies (CONTRACT.md §2), for an API key and an OAuth member."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone
from oauth2_provider.models import get_access_token_model
from rest_framework.test import APIClient

from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory
from tests.workspaces.test_auth import _oauth_client
from workspaces.services import api_key_create

pytestmark = pytest.mark.django_db

EDITOR_PERMISSIONS = [
    "posts.read",
    "posts.draft",
    "posts.schedule",
    "posts.publish",
    "accounts.read",
    "media.upload",
    "webhooks.read",
    "webhooks.manage",
    "analytics.read",
    "ai.generate",
    "comments.read",
    "comments.reply",
    "comments.moderate",
]
VIEWER_PERMISSIONS = ["posts.read", "accounts.read", "webhooks.read", "analytics.read", "comments.read"]


def _sorted(body: dict) -> dict:
    """Permissions compared as sets: their order is not part of the contract."""
    return {**body, "permissions": sorted(body["permissions"])}


def test_me_describes_the_key_whole(workspace):
    expires = timezone.now().replace(microsecond=0) + dt.timedelta(days=3)
    issued = api_key_create(workspace=workspace, name="ci editor", role="editor", expires_at=expires)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}")
    response = client.get("/api/v1/me")
    assert response.status_code == 200
    assert _sorted(response.json()) == {
        "tokenType": "api_token",
        "tokenId": issued.api_key.id,
        "tokenName": "ci editor",
        "workspace": {"id": workspace.id, "name": workspace.name},
        "organizationId": workspace.organization_id,
        "organizationPermissions": [],
        "role": {"key": "editor", "name": "Editor"},
        "issuerRole": None,  # made without a member
        "permissions": sorted(EDITOR_PERMISSIONS),
        "can": {"draft": True, "schedule": True, "publish": True},
        "summary": f"In the workspace {workspace.name}, this Editor API key may read, draft, schedule and "
        "publish posts; read social accounts; upload media; read and manage webhooks; read analytics; "
        "generate AI images; read, reply to and moderate comments.",
        "expiresAt": expires.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
    }
    assert response["RateLimit-Limit"] == "600"


def test_me_names_the_role_of_the_member_who_made_the_key(workspace):
    member = MembershipFactory(workspace=workspace, role="admin").user
    issued = api_key_create(workspace=workspace, name="made by an admin", role="viewer", created_by_id=member.id)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}")
    body = client.get("/api/v1/me").json()
    assert (body["role"]["key"], body["issuerRole"]) == ("viewer", "admin")
    assert body["summary"] == (
        f"In the workspace {workspace.name}, this Viewer API key may read posts; read social accounts; "
        "read webhooks; read analytics; read comments."
    )
    member.memberships.all().delete()  # the member left: nobody's role to name
    assert client.get("/api/v1/me").json()["issuerRole"] is None


def _issue_31_fields(workspace):
    """The fields issue 31 added to each item (the older ones unchanged)."""
    from core.fields import format_instant

    workspace.refresh_from_db()
    return {"externalId": None, "metadata": {}, "createdAt": format_instant(workspace.created_at), "deletedAt": None}


def test_workspaces_of_a_key_is_its_own_workspace_whole(client_for, workspace, other_workspace):
    response = client_for("viewer").get("/api/v1/workspaces")
    assert response.status_code == 200
    assert [_sorted(item) for item in response.json()["workspaces"]] == [
        {
            "id": workspace.id,
            "name": workspace.name,
            "organization": {"id": workspace.organization_id, "name": workspace.organization.name},
            "role": {"key": "viewer", "name": "Viewer"},
            "permissions": sorted(VIEWER_PERMISSIONS),
            "isDefault": True,
            "current": True,
            "can": {"draft": False, "schedule": False, "publish": False},
            **_issue_31_fields(workspace),
        }
    ]


def test_me_and_workspaces_of_an_oauth_member_whole():
    user = UserFactory(username="dana")
    home = MembershipFactory(user=user, role="viewer", is_default=True, workspace=WorkspaceFactory(name="A home"))
    second = MembershipFactory(user=user, role="editor", workspace=WorkspaceFactory(name="B second"))
    WorkspaceFactory(name="C stranger")
    client = _oauth_client(user)
    expires = timezone.now().replace(microsecond=250_000) + dt.timedelta(minutes=30)
    get_access_token_model().objects.filter(user=user).update(expires=expires)
    token = get_access_token_model().objects.get(user=user)

    me = client.get("/api/v1/me", headers={"X-Workspace-Id": second.workspace_id}).json()
    assert _sorted(me) == {
        "tokenType": "oauth",
        "tokenId": str(token.id),
        "tokenName": "OAuth sign-in of dana",
        "workspace": {"id": second.workspace_id, "name": "B second"},
        "organizationId": second.workspace.organization_id,
        "organizationPermissions": [],
        "role": {"key": "editor", "name": "Editor"},
        "issuerRole": "editor",  # the member's own token: their role here
        "permissions": sorted(EDITOR_PERMISSIONS),
        "can": {"draft": True, "schedule": True, "publish": True},
        "summary": "In the workspace B second, this Editor OAuth token may read, draft, schedule and "
        "publish posts; read social accounts; upload media; read and manage webhooks; read analytics; "
        "generate AI images; read, reply to and moderate comments.",
        "expiresAt": expires.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.250Z"),
    }

    listing = client.get("/api/v1/workspaces").json()["workspaces"]
    assert [_sorted(item) for item in listing] == [
        {
            "id": home.workspace_id,
            "name": "A home",
            "organization": {"id": home.workspace.organization_id, "name": home.workspace.organization.name},
            "role": {"key": "viewer", "name": "Viewer"},
            "permissions": sorted(VIEWER_PERMISSIONS),
            "isDefault": True,
            "current": True,
            "can": {"draft": False, "schedule": False, "publish": False},
            **_issue_31_fields(home.workspace),
        },
        {
            "id": second.workspace_id,
            "name": "B second",
            "organization": {"id": second.workspace.organization_id, "name": second.workspace.organization.name},
            "role": {"key": "editor", "name": "Editor"},
            "permissions": sorted(EDITOR_PERMISSIONS),
            "isDefault": False,
            "current": False,
            "can": {"draft": True, "schedule": True, "publish": True},
            **_issue_31_fields(second.workspace),
        },
    ]
