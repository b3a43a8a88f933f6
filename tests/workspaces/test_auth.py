"""Authentication: the 401 matrix, roles × permissions, and workspace selection."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model
from rest_framework.test import APIClient

from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory
from workspaces.models import ApiKey
from workspaces.roles import ALL_PERMISSIONS, ROLE_PERMISSIONS, Role
from workspaces.services import api_key_create, api_key_revoke

pytestmark = pytest.mark.django_db

UNAUTHORIZED = {
    "statusCode": 401,
    "error": "Unauthorized",
    "message": "API key is invalid or missing",
    "code": "unauthorized",
}


def _get(headers: dict[str, str], path: str = "/api/v1/me"):
    return APIClient().get(path, headers=headers)


def test_401_matrix_has_one_body(workspace):
    issued = api_key_create(workspace=workspace, name="k", role="admin")
    expired = api_key_create(
        workspace=workspace, name="old", role="admin", expires_at=timezone.now() - dt.timedelta(seconds=1)
    )
    revoked = api_key_create(workspace=workspace, name="gone", role="admin")
    api_key_revoke(key_or_public_part=revoked.plaintext)
    lookup = issued.plaintext.split("_")[1]
    cases = {
        "missing": {},
        "wrong scheme": {"Authorization": f"Basic {issued.plaintext}"},
        "empty bearer": {"Authorization": "Bearer "},
        "malformed": {"Authorization": "Bearer not-a-key"},
        "unknown": {"Authorization": "Bearer cpk_0000000000000000_" + "x" * 43},
        "wrong secret": {"Authorization": f"Bearer cpk_{lookup}_" + "y" * 43},
        "public part only": {"Authorization": f"Bearer cpk_{lookup}"},
        "revoked": {"Authorization": f"Bearer {revoked.plaintext}"},
        "expired": {"Authorization": f"Bearer {expired.plaintext}"},
        "oversized": {"Authorization": "Bearer " + "a" * 5000},
    }
    for name, headers in cases.items():
        response = _get(headers)
        assert response.status_code == 401, name
        assert response.json() == UNAUTHORIZED, name
        assert response["WWW-Authenticate"].startswith("Bearer"), name
        assert response["RateLimit-Limit"] == "600", name
    assert _get({"Authorization": f"Bearer {issued.plaintext}"}).status_code == 200


def test_key_is_stored_only_hashed(workspace):
    issued = api_key_create(workspace=workspace, name="k", role="admin")
    secret = issued.plaintext.split("_", 2)[2]
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM workspaces_apikey")
        rows = cursor.fetchall()
    flat = " ".join(str(value) for row in rows for value in row)
    assert secret not in flat
    assert issued.plaintext not in flat


def test_last_used_is_recorded(client_for, workspace):
    client_for("viewer").get("/api/v1/me")
    assert ApiKey.objects.get(workspace=workspace).last_used_at is not None


@pytest.mark.parametrize("role", Role.values)
def test_me_lists_exactly_the_roles_permissions(role, client_for):
    body = client_for(role).get("/api/v1/me").json()
    assert body["role"]["key"] == role
    assert set(body["permissions"]) == ROLE_PERMISSIONS[role]
    assert body["can"] == {
        "draft": "posts.draft" in ROLE_PERMISSIONS[role],
        "schedule": "posts.schedule" in ROLE_PERMISSIONS[role],
        "publish": "posts.publish" in ROLE_PERMISSIONS[role],
    }


def test_role_table_matches_the_contract():
    assert ROLE_PERMISSIONS[Role.ADMIN] == set(ALL_PERMISSIONS)
    assert "webhooks.manage" in ROLE_PERMISSIONS[Role.EDITOR]
    assert "webhooks.read" not in ROLE_PERMISSIONS[Role.CONTRIBUTOR]
    assert all("accounts.manage" not in ROLE_PERMISSIONS[r] for r in Role.values if r != Role.ADMIN)
    assert ROLE_PERMISSIONS[Role.VIEWER] == {
        "posts.read",
        "accounts.read",
        "analytics.read",
        "webhooks.read",
        "comments.read",
    }


def test_api_key_with_its_own_workspace_header(client_for, workspace, other_workspace):
    client = client_for("admin")
    assert client.get("/api/v1/me", headers={"X-Workspace-Id": workspace.id}).status_code == 200
    denied = client.get("/api/v1/me", headers={"X-Workspace-Id": other_workspace.id})
    assert denied.status_code == 403
    assert denied.json() == {
        "statusCode": 403,
        "error": "Forbidden",
        "message": "You do not have access to this workspace",
        "code": "workspace_access_denied",
    }
    workspaces = client.get("/api/v1/workspaces").json()["workspaces"]
    assert [(w["id"], w["current"], w["role"]["key"]) for w in workspaces] == [(workspace.id, True, "admin")]


def _oauth_client(user) -> APIClient:
    application = get_application_model().objects.create(
        name="cli", client_type="public", authorization_grant_type="authorization-code", user=user
    )
    token = get_access_token_model()(
        user=user, application=application, expires=timezone.now() + dt.timedelta(hours=1), scope="api"
    )
    from oauth2_provider.models import set_token_value

    raw = "oauth-token-" + user.username
    set_token_value(token, raw)
    token.save()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def test_oauth_member_reaches_every_workspace_with_its_role():
    user = UserFactory()
    home = MembershipFactory(user=user, role="viewer", is_default=True, workspace=WorkspaceFactory(name="A home"))
    second = MembershipFactory(user=user, role="editor", workspace=WorkspaceFactory(name="B second"))
    stranger = WorkspaceFactory(name="C stranger")
    client = _oauth_client(user)

    me = client.get("/api/v1/me").json()
    assert me["tokenType"] == "oauth"
    assert me["workspace"]["id"] == home.workspace_id
    assert me["role"]["key"] == "viewer"

    picked = client.get("/api/v1/me", headers={"X-Workspace-Id": second.workspace_id}).json()
    assert picked["workspace"]["id"] == second.workspace_id
    assert picked["role"]["key"] == "editor"

    denied = client.get("/api/v1/me", headers={"X-Workspace-Id": stranger.id})
    assert denied.status_code == 403
    assert denied.json()["code"] == "workspace_access_denied"

    listing = client.get("/api/v1/workspaces", headers={"X-Workspace-Id": second.workspace_id}).json()
    assert [(w["id"], w["current"], w["isDefault"], w["role"]["key"]) for w in listing["workspaces"]] == [
        (home.workspace_id, False, True, "viewer"),
        (second.workspace_id, True, False, "editor"),
    ]


def test_oauth_token_stored_only_as_checksum():
    user = UserFactory()
    MembershipFactory(user=user, is_default=True)
    _oauth_client(user)
    with connection.cursor() as cursor:
        cursor.execute("SELECT token FROM oauth2_provider_accesstoken")
        assert [row[0] for row in cursor.fetchall()] == [""]


def test_expired_oauth_token_is_401():
    user = UserFactory()
    MembershipFactory(user=user, is_default=True)
    client = _oauth_client(user)
    get_access_token_model().objects.update(expires=timezone.now() - dt.timedelta(seconds=1))
    assert client.get("/api/v1/me").status_code == 401


def test_member_without_workspace_is_refused():
    user = UserFactory()
    response = _oauth_client(user).get("/api/v1/me")
    assert response.status_code == 403
    assert response.json()["code"] == "workspace_access_denied"


def test_options_describes_the_route_instead_of_failing(client_for):
    """OPTIONS answers the route's methods for any valid key (found by the fuzz tests: it was a
    500 on every route with a POST, DRF probing a permission no view declares)."""
    for role, path in [("admin", "/api/v1/social-posts"), ("viewer", "/api/v1/social-posts/post_missing/publish")]:
        response = client_for(role).options(path)
        assert response.status_code == 200, response.content
        assert "POST" in response["Allow"]
        assert response.json()["parses"] == ["application/json"]
        assert "actions" not in response.json()


# CONTRACT.md §2, written out here on its own so that a change to workspaces/roles.py cannot
# silently change what the tests expect.
CONTRACT_ROLES = {
    "admin": {
        "posts.read",
        "posts.draft",
        "posts.schedule",
        "posts.publish",
        "accounts.read",
        "accounts.manage",
        "media.upload",
        "webhooks.read",
        "webhooks.manage",
        "analytics.read",
        "ai.generate",
        "comments.read",  # issue 33: the inbox
        "comments.reply",
        "comments.moderate",
        "usage.read",  # issue 31: GET /usage for "a workspace key with usage.read" (its own workspace)
    },
    "editor": {
        "posts.read",
        "posts.draft",
        "posts.schedule",
        "posts.publish",
        "media.upload",
        "accounts.read",
        "analytics.read",
        "webhooks.read",
        "webhooks.manage",
        "ai.generate",
        "comments.read",
        "comments.reply",
        "comments.moderate",
    },
    "contributor": {
        "posts.read",
        "posts.draft",
        "media.upload",
        "accounts.read",
        "analytics.read",
        "ai.generate",
        "comments.read",
    },
    "viewer": {"posts.read", "accounts.read", "analytics.read", "webhooks.read", "comments.read"},
}
EVERY_PERMISSION = sorted(CONTRACT_ROLES["admin"])


def test_role_table_is_the_contracts():
    assert {role: set(granted) for role, granted in ROLE_PERMISSIONS.items()} == CONTRACT_ROLES
    assert set(ALL_PERMISSIONS) == set(EVERY_PERMISSION)


@pytest.mark.urls("tests.core.urls")
@pytest.mark.parametrize("role", sorted(CONTRACT_ROLES))
def test_every_role_against_every_permission(role, client_for):
    """Each role × each permission through a view that declares it: allowed, or 403 naming it."""
    client = client_for(role)
    for permission in EVERY_PERMISSION:
        response = client.get(f"/api/v1/_test/needs/{permission}")
        if permission in CONTRACT_ROLES[role]:
            assert (response.status_code, response.json()) == (200, {"permission": permission}), permission
        else:
            assert response.status_code == 403, permission
            assert response.json() == {
                "statusCode": 403,
                "error": "Forbidden",
                "message": f"This operation requires the {permission} permission",
                "code": "permission_denied",
                "requiredPermission": permission,
                "role": role,
                "tokenType": "api_token",
            }
    me = client.get("/api/v1/me").json()
    assert set(me["permissions"]) == CONTRACT_ROLES[role]
    assert me["can"] == {
        "draft": "posts.draft" in CONTRACT_ROLES[role],
        "schedule": "posts.schedule" in CONTRACT_ROLES[role],
        "publish": "posts.publish" in CONTRACT_ROLES[role],
    }


@pytest.mark.urls("tests.core.urls")
def test_oauth_member_acts_with_the_role_of_the_chosen_workspace():
    user = UserFactory()
    home = MembershipFactory(user=user, role="viewer", is_default=True)
    admin_of = MembershipFactory(user=user, role="admin")
    client = _oauth_client(user)
    denied = client.get("/api/v1/_test/needs/accounts.manage")
    assert denied.status_code == 403
    assert denied.json()["role"] == "viewer" and denied.json()["tokenType"] == "oauth"
    allowed = client.get("/api/v1/_test/needs/accounts.manage", headers={"X-Workspace-Id": admin_of.workspace_id})
    assert allowed.status_code == 200
    assert client.get("/api/v1/me", headers={"X-Workspace-Id": home.workspace_id}).json()["role"]["key"] == "viewer"


def test_api_key_workspace_header_cases(client_for, workspace, other_workspace):
    client = client_for("editor")
    assert client.get("/api/v1/me", headers={"X-Workspace-Id": f" {workspace.id} "}).status_code == 200
    assert client.get("/api/v1/me", headers={"X-Workspace-Id": ""}).status_code == 200
    for foreign in (other_workspace.id, "ws_does_not_exist", workspace.id.upper(), "ws\x00x"):
        response = client.get("/api/v1/me", headers={"X-Workspace-Id": foreign})
        assert response.status_code == 403, foreign
        assert response.json()["code"] == "workspace_access_denied", foreign
    # The refusal comes before the permission check, on every endpoint.
    response = client.get("/api/v1/webhooks", headers={"X-Workspace-Id": other_workspace.id})
    assert (response.status_code, response.json()["code"]) == (403, "workspace_access_denied")


def test_oauth_workspace_header_cases():
    user = UserFactory()
    first = MembershipFactory(user=user, role="contributor", workspace=WorkspaceFactory(name="first"))
    MembershipFactory(user=user, role="editor", workspace=WorkspaceFactory(name="second"))
    client = _oauth_client(user)
    # No membership is marked default: the oldest one is where a call without the header lands.
    assert client.get("/api/v1/me").json()["workspace"]["id"] == first.workspace_id
    for unreachable in ("ws_does_not_exist", WorkspaceFactory().id):
        response = client.get("/api/v1/me", headers={"X-Workspace-Id": unreachable})
        assert (response.status_code, response.json()["code"]) == (403, "workspace_access_denied")


def test_oauth_token_of_an_inactive_user_or_deleted_token_is_401():
    user = UserFactory()
    MembershipFactory(user=user, is_default=True)
    client = _oauth_client(user)
    assert client.get("/api/v1/me").status_code == 200
    user.is_active = False
    user.save()
    assert client.get("/api/v1/me").json() == UNAUTHORIZED
    user.is_active = True
    user.save()
    get_access_token_model().objects.all().delete()
    assert client.get("/api/v1/me").json() == UNAUTHORIZED


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer cpk_ab\x00cdef0123456789_secret",
        "Bearer cpk_0123456789abcdef_sec\x00ret",
        "Bearer cpk_\u00e9\u00e9_secret",
        "Bearer cpk_" + "a" * 100 + "_secret",
        "Bearer oauth\x00token",
        "Bearer  ",
        "bearer",
    ],
)
def test_odd_authorization_headers_are_401_never_500(authorization, workspace):
    assert _get({"Authorization": authorization}).json() == UNAUTHORIZED


def test_401_is_the_same_on_every_endpoint_and_method(workspace):
    client = APIClient()
    for method, path in [
        ("get", "/api/v1/workspaces"),
        ("get", "/api/v1/social-posts"),
        ("post", "/api/v1/social-posts"),
        ("delete", "/api/v1/webhooks/wh_x"),
        ("patch", "/api/v1/social-posts/post_x"),
        ("get", "/api/v1/analytics/overview"),
    ]:
        response = getattr(client, method)(path, {}, format="json", headers={"Authorization": "Bearer cpk_nope"})
        assert (response.status_code, response.json()) == (401, UNAUTHORIZED), (method, path)
        assert "RateLimit-Remaining" in response


def test_a_member_signs_in_through_the_oauth_endpoints_and_calls_the_api(client):
    """The whole sign-in a CLI does: authorization code with PKCE at /oauth/authorize, the code
    exchanged at /oauth/token, the access token used as a bearer on the API."""
    import base64
    import hashlib
    from urllib.parse import parse_qs, urlsplit

    user = UserFactory(username="erin")
    membership = MembershipFactory(user=user, role="contributor", is_default=True)
    application = get_application_model().objects.create(
        name="crosspost-cli",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1:8765/callback",
        skip_authorization=True,
        user=user,
    )
    verifier = "v" * 64
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    client.force_login(user)
    authorized = client.get(
        "/oauth/authorize/",
        {
            "response_type": "code",
            "client_id": application.client_id,
            "redirect_uri": "http://127.0.0.1:8765/callback",
            "scope": "api",
            "state": "s1",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        },
    )
    assert authorized.status_code == 302, authorized.content[:300]
    redirect = parse_qs(urlsplit(authorized["Location"]).query)
    assert redirect["state"] == ["s1"]
    issued = APIClient().post(
        "/oauth/token/",
        {
            "grant_type": "authorization_code",
            "code": redirect["code"][0],
            "redirect_uri": "http://127.0.0.1:8765/callback",
            "client_id": application.client_id,
            "code_verifier": verifier,
        },
    )
    assert issued.status_code == 200, issued.content[:300]
    token = issued.json()["access_token"]

    me = APIClient().get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200
    assert (me.json()["tokenType"], me.json()["workspace"]["id"], me.json()["role"]["key"]) == (
        "oauth",
        membership.workspace_id,
        "contributor",
    )
    # Only the checksum of the token is at rest.
    with connection.cursor() as cursor:
        cursor.execute("SELECT token, token_checksum FROM oauth2_provider_accesstoken")
        stored = cursor.fetchall()
    assert len(stored) == 1 and token not in str(stored)
