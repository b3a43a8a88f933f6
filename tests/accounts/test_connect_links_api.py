"""POST /connect-links and DELETE /connect-links/{token}."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ConnectLink
from accounts.selectors import token_hash
from tests.factories.accounts import make_connect_link
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db
LINKS = "/api/v1/connect-links"


def test_create_returns_a_24_hour_link_served_by_this_service(
    api: APIClient, workspace: Workspace, settings: Any
) -> None:
    settings.PUBLIC_BASE_URL = "https://connect.example.com"
    before = timezone.now()

    response = api.post(LINKS, {}, format="json")

    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"url", "token", "expiresAt", "redirectUrl", "platforms"}  # issue 31 added the last two
    assert (body["redirectUrl"], len(body["platforms"])) == (None, 12)
    assert body["url"] == f"https://connect.example.com/connect/{body['token']}"
    assert len(body["token"]) >= 32
    expires = dt.datetime.fromisoformat(body["expiresAt"].replace("Z", "+00:00"))
    assert (
        before + dt.timedelta(hours=24) - dt.timedelta(seconds=1) <= expires <= timezone.now() + dt.timedelta(hours=24)
    )
    link = ConnectLink.objects.get()
    assert (link.workspace_id, link.token_hash) == (workspace.id, token_hash(body["token"]))
    assert body["token"] not in str(ConnectLink.objects.values().get())  # only the hash is stored


def test_create_accepts_an_empty_body_and_makes_distinct_links(api: APIClient) -> None:
    first = api.post(LINKS).json()
    second = api.post(LINKS, content_type="application/json").json()
    assert first["token"] != second["token"]


def test_delete(api: APIClient, workspace: Workspace) -> None:
    link, token = make_connect_link(workspace)
    response = api.delete(f"{LINKS}/{token}")
    assert (response.status_code, response.json()) == (200, {"success": True})
    assert not ConnectLink.objects.filter(id=link.id).exists()
    again = api.delete(f"{LINKS}/{token}")
    assert (again.status_code, again.json()["message"]) == (404, "Connect link not found")


def test_delete_not_found_elsewhere(api: APIClient, other_workspace: Workspace) -> None:
    link, token = make_connect_link(other_workspace)
    assert api.delete(f"{LINKS}/{token}").status_code == 404
    assert api.delete(f"{LINKS}/unknown-token").status_code == 404
    assert ConnectLink.objects.filter(id=link.id).exists()


@pytest.mark.parametrize("role", ["editor", "contributor", "viewer"])
def test_only_admins_manage_links(client_for: Callable[..., APIClient], workspace: Workspace, role: str) -> None:
    _, token = make_connect_link(workspace)
    for response in (client_for(role).post(LINKS), client_for(role).delete(f"{LINKS}/{token}")):
        assert response.status_code == 403
        body = response.json()
        assert (body["code"], body["requiredPermission"], body["role"]) == (
            "permission_denied",
            "accounts.manage",
            role,
        )
    assert ConnectLink.objects.count() == 1


def test_anonymous(anon: APIClient, workspace: Workspace) -> None:
    _, token = make_connect_link(workspace)
    assert anon.post(LINKS).status_code == 401
    assert anon.delete(f"{LINKS}/{token}").status_code == 401


def test_another_workspace_is_unreachable_through_every_accounts_endpoint(
    api: APIClient, workspace: Workspace, other_workspace: Workspace
) -> None:
    """An API key naming another workspace in X-Workspace-Id is refused (403), and nothing of
    that workspace is touched; objects of another workspace are 404 (see the endpoint tests)."""
    from tests.factories.accounts import SocialAccountFactory

    _, token = make_connect_link(other_workspace)
    foreign = SocialAccountFactory(workspace=other_workspace, platform="FACEBOOK", page_id="55", external_id="55")
    header = {"X-Workspace-Id": other_workspace.id}
    for response in (
        api.post(LINKS, headers=header),
        api.delete(f"{LINKS}/{token}", headers=header),
        api.get("/api/v1/social-accounts", headers=header),
        api.post(f"/api/v1/social-accounts/{foreign.id}/check", headers=header),
        api.get(f"/api/v1/social-accounts/{foreign.id}/instagram-audio?audioType=music", headers=header),
        api.get(f"/api/v1/social-accounts/{foreign.id}/pinterest-boards", headers=header),
    ):
        assert response.status_code == 403, response.request["PATH_INFO"]
        assert response.json()["code"] == "workspace_access_denied"
    assert ConnectLink.objects.filter(workspace=other_workspace).count() == 1
    assert not ConnectLink.objects.filter(workspace=workspace).exists()
    own = api.post(LINKS, headers={"X-Workspace-Id": workspace.id})
    assert own.status_code == 201
    assert ConnectLink.objects.get(token_hash=token_hash(own.json()["token"])).workspace_id == workspace.id
