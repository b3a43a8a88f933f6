"""Organizations above workspaces and their keys (issue 31, items 1 and 2): every workspace has
an organization (older ones by the migration); an organization key (``cpo_``) acts in any
workspace of its organization named by X-Workspace-Id, with its role, and nowhere else."""

from __future__ import annotations

import re
from collections.abc import Callable
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from rest_framework.test import APIClient

from core.errors import NotFound, PermissionDenied
from core.fields import format_instant
from tests.factories import OrganizationFactory, WorkspaceFactory
from webhooks.models import Webhook
from workspaces.models import ApiKey, Organization, Workspace
from workspaces.services import api_key_create, api_key_revoke, organization_key_create, workspace_get_or_create

VIEWER_PERMISSIONS = [  # canonical order
    "posts.read",
    "accounts.read",
    "webhooks.read",
    "analytics.read",
    "comments.read",
]
EVERY_ORGANIZATION_PERMISSION = ["workspaces.manage", "keys.manage", "usage.read", "audit.read"]


def _client(key: str, workspace_id: str | None = None) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    if workspace_id is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}", HTTP_X_WORKSPACE_ID=workspace_id)
    return client


@pytest.fixture
def organization(db: object) -> Organization:
    return OrganizationFactory(name="Builder")


@pytest.fixture
def org_key(organization: Organization) -> Callable[..., str]:
    def make(role: str = "editor", permissions: list[str] | None = None, of: Organization | None = None) -> str:
        return organization_key_create(
            organization=of or organization, name=f"org {role}", role=role, permissions=permissions or []
        ).plaintext

    return make


# --- item 1: the organization of every workspace ------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_every_existing_workspace_an_organization_of_its_own() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([("workspaces", "0002_dashboard_permission")])
    try:
        with connection.cursor() as cursor:
            for pk, name in (("ws_old_a", "Acme"), ("ws_old_b", "Beta")):
                cursor.execute(
                    "INSERT INTO workspaces_workspace (id, name, created_at) VALUES (%s, %s, %s)",
                    [pk, name, timezone.now()],
                )
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())  # every app: going back took dependents along
    found = {w.id: w.organization for w in Workspace.objects.select_related("organization")}
    assert {pk: o.name for pk, o in found.items()} == {"ws_old_a": "Acme", "ws_old_b": "Beta"}
    assert found["ws_old_a"].id != found["ws_old_b"].id
    assert all(re.fullmatch(r"org_[0-9a-f]{24}", o.id) for o in found.values())


@pytest.mark.django_db
def test_a_workspace_made_alone_gets_an_organization_of_its_own_or_joins_the_one_given(organization) -> None:
    alone = workspace_get_or_create(name="Solo")
    assert (alone.organization.name, alone.organization.id.startswith("org_")) == ("Solo", True)
    joined = workspace_get_or_create(name="Customer 1", organization=organization)
    assert joined.organization_id == organization.id
    assert workspace_get_or_create(name="Customer 1").pk == joined.pk  # found again, not moved


@pytest.mark.django_db
def test_workspace_key_me_and_workspaces_name_the_organization(client_for, workspace) -> None:
    client = client_for("viewer")
    assert client.get("/api/v1/me").json()["organizationId"] == workspace.organization_id
    [item] = client.get("/api/v1/workspaces").json()["workspaces"]
    assert item["organization"] == {"id": workspace.organization_id, "name": workspace.organization.name}


# --- item 2: organization keys ----------------------------------------------------------------


@pytest.mark.django_db
def test_an_organization_key_lists_every_workspace_of_its_organization_with_its_role(organization, org_key) -> None:
    second = WorkspaceFactory(name="B customer", organization=organization)
    first = WorkspaceFactory(name="A customer", organization=organization)
    WorkspaceFactory(name="C stranger")  # another organization's
    key = org_key("viewer", ["usage.read"])
    ref = {"id": organization.id, "name": "Builder"}

    def item(workspace: Workspace, current: bool) -> dict[str, object]:
        return {
            "id": workspace.id,
            "name": workspace.name,
            "organization": ref,
            "role": {"key": "viewer", "name": "Viewer"},
            "permissions": VIEWER_PERMISSIONS,
            "isDefault": False,
            "current": current,
            "can": {"draft": False, "schedule": False, "publish": False},
            "externalId": None,
            "metadata": {},
            "createdAt": format_instant(workspace.created_at),
            "deletedAt": None,
        }

    assert _client(key).get("/api/v1/workspaces").json() == {"workspaces": [item(first, False), item(second, False)]}
    in_second = _client(key, second.id).get("/api/v1/workspaces").json()
    assert in_second == {"workspaces": [item(first, False), item(second, True)]}


@pytest.mark.django_db
def test_me_of_an_organization_key_with_and_without_a_workspace(organization, org_key) -> None:
    workspace = WorkspaceFactory(name="Acme 42", organization=organization)
    key = org_key("viewer", ["usage.read", "keys.manage"])
    api_key = ApiKey.objects.get(organization=organization)
    common = {
        "tokenType": "api_token",
        "tokenId": api_key.id,
        "tokenName": "org viewer",
        "organizationId": organization.id,
        "organizationPermissions": ["keys.manage", "usage.read"],
        "role": {"key": "viewer", "name": "Viewer"},
        "issuerRole": None,
        "permissions": VIEWER_PERMISSIONS,
        "can": {"draft": False, "schedule": False, "publish": False},
        "expiresAt": None,
    }
    abilities = "may read posts; read social accounts; read webhooks; read analytics; read comments."
    assert _client(key).get("/api/v1/me").json() == {
        **common,
        "workspace": None,
        "summary": f"In each workspace of the organization Builder, this Viewer API key {abilities}",
    }
    assert _client(key, workspace.id).get("/api/v1/me").json() == {
        **common,
        "workspace": {"id": workspace.id, "name": "Acme 42"},
        "summary": f"In the workspace Acme 42, this Viewer API key {abilities}",
    }
    assert key.startswith(f"cpo_{api_key.lookup}_") and api_key.public_part == f"cpo_{api_key.lookup}"


@pytest.mark.django_db
def test_an_organization_key_acts_in_a_named_workspace_with_its_role(organization, org_key, settings) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    workspace = WorkspaceFactory(organization=organization)
    viewer = _client(org_key("viewer"), workspace.id)
    assert viewer.get("/api/v1/social-posts").status_code == 200
    refused = viewer.post("/api/v1/social-posts", {"contentType": "TEXT", "text": "hi"}, format="json")
    assert refused.status_code == 403
    assert {k: refused.json()[k] for k in ("code", "requiredPermission", "role", "tokenType")} == {
        "code": "permission_denied",
        "requiredPermission": "posts.draft",
        "role": "viewer",
        "tokenType": "api_token",
    }
    editor = _client(org_key("editor"), workspace.id)
    made = editor.post("/api/v1/webhooks", {"url": "http://127.0.0.1:9/in"}, format="json")
    assert made.status_code == 201, made.json()
    assert Webhook.objects.get(pk=made.json()["id"]).workspace_id == workspace.id


@pytest.mark.django_db
def test_without_x_workspace_id_an_organization_key_reaches_no_workspace_operation(organization, org_key) -> None:
    WorkspaceFactory(organization=organization)
    response = _client(org_key("admin", EVERY_ORGANIZATION_PERMISSION)).get("/api/v1/social-posts")
    assert response.status_code == 400
    body = response.json()
    assert (body["statusCode"], body["error"], body["code"]) == (400, "Bad Request", "workspace_required")
    assert "X-Workspace-Id" in body["message"]


@pytest.mark.django_db
def test_an_organization_key_never_reaches_another_organizations_workspace(org_key) -> None:
    stranger = WorkspaceFactory()
    client = _client(org_key("admin"), stranger.id)
    for path in ("/api/v1/social-posts", "/api/v1/me", "/api/v1/workspaces"):
        response = client.get(path)
        assert (response.status_code, response.json()["code"]) == (403, "workspace_access_denied"), path
    unknown = _client(org_key("admin"), "ws_nothing").get("/api/v1/social-posts")
    assert unknown.json() == {**response.json(), "message": unknown.json()["message"]}  # looks the same


@pytest.mark.django_db
def test_a_key_under_the_other_kinds_prefix_is_refused(organization, org_key, make_key) -> None:
    org_plain = org_key("admin")
    workspace_plain = make_key("admin")
    swapped = ["cpk_" + org_plain.removeprefix("cpo_"), "cpo_" + workspace_plain.removeprefix("cpk_")]
    for key in [*swapped, org_plain.rsplit("_", 1)[0] + "_wrongsecret"]:
        response = _client(key).get("/api/v1/me")
        assert (response.status_code, response.json()["code"]) == (401, "unauthorized")
    assert _client(org_plain).get("/api/v1/me").status_code == 200


@pytest.mark.django_db
@pytest.mark.urls("tests.workspaces.urls")
def test_organization_endpoints_take_organization_keys_holding_the_permission_only(
    organization, org_key, client_for, workspace
) -> None:
    path = "/api/v1/_test/organization"
    holder = org_key("viewer", ["usage.read"])
    assert _client(holder).get(path).json() == {"organizationId": organization.id, "permissions": ["usage.read"]}
    named = WorkspaceFactory(organization=organization)
    assert _client(holder, named.id).get(path).status_code == 200  # the header changes nothing here
    lacking = _client(org_key("admin", ["keys.manage"])).get(path)
    assert (lacking.status_code, lacking.json()["requiredPermission"]) == (403, "usage.read")
    for client in (client_for("admin"), client_for("admin", WorkspaceFactory(organization=organization))):
        refused = client.get(path)
        assert refused.status_code == 403
        assert (refused.json()["code"], refused.json()["message"]) == (
            "permission_denied",
            "This operation needs an organization key",
        )
    assert APIClient().get(path).status_code == 401


# --- minting, hashing, revocation -------------------------------------------------------------


@pytest.mark.django_db
def test_an_organization_key_with_keys_manage_mints_keys_of_its_own_organization_only(organization) -> None:
    issuer = organization_key_create(
        organization=organization, name="issuer", role="admin", permissions=["keys.manage", "usage.read"]
    ).api_key
    minted = organization_key_create(
        organization=organization, name="minted", role="viewer", permissions=["usage.read"], issued_by=issuer
    )
    assert _client(minted.plaintext).get("/api/v1/me").json()["organizationPermissions"] == ["usage.read"]
    with pytest.raises(PermissionDenied) as beyond:  # nothing it does not hold itself
        organization_key_create(
            organization=organization, name="x", role="viewer", permissions=["audit.read"], issued_by=issuer
        )
    assert beyond.value.extra["requiredPermission"] == "audit.read"
    with pytest.raises(PermissionDenied) as no_keys_manage:
        organization_key_create(
            organization=organization, name="x", role="viewer", permissions=[], issued_by=minted.api_key
        )
    assert no_keys_manage.value.extra["requiredPermission"] == "keys.manage"
    with pytest.raises(NotFound):
        organization_key_create(
            organization=OrganizationFactory(), name="x", role="viewer", permissions=[], issued_by=issuer
        )
    assert ApiKey.objects.filter(name="x").count() == 0


@pytest.mark.django_db
def test_the_secret_is_hashed_at_rest_and_revocation_is_seen_by_the_next_request(organization, org_key) -> None:
    plaintext = org_key("admin")
    client = _client(plaintext)
    assert [client.get("/api/v1/me").status_code for _ in range(2)] == [200, 200]  # the second from the cache
    with connection.cursor() as cursor:
        cursor.execute("SELECT row_to_json(k)::text FROM workspaces_apikey k")
        stored = "\n".join(row[0] for row in cursor.fetchall())
    assert plaintext.rsplit("_", 1)[1] not in stored
    api_key_revoke(key_or_public_part=plaintext.rsplit("_", 1)[0])
    assert client.get("/api/v1/me").status_code == 401


@pytest.mark.django_db
def test_the_command_mints_a_working_organization_key_shown_once() -> None:
    out = StringIO()
    call_command(
        "create_organization_key",
        *("--organization", "Agency", "--create-organization", "--role", "editor"),
        *("--permission", "usage.read", "--permission", "workspaces.manage"),
        stdout=out,
    )
    lines = out.getvalue().strip().splitlines()
    assert lines[0].endswith("role: editor, permissions: workspaces.manage, usage.read")
    me = _client(lines[-1]).get("/api/v1/me").json()
    assert (me["organizationId"], me["organizationPermissions"]) == (
        Organization.objects.get(name="Agency").id,
        ["workspaces.manage", "usage.read"],
    )
    with pytest.raises(CommandError):
        call_command("create_organization_key", "--organization", "Nobody", "--role", "admin", stdout=StringIO())


@pytest.mark.django_db
def test_create_api_key_puts_a_new_workspace_in_the_organization_named(organization) -> None:
    out = StringIO()
    call_command(
        "create_api_key", "--workspace", "Customer 7", "--create-workspace", "--organization", "Builder",
        "--role", "admin", stdout=out,
    )  # fmt: skip
    assert Workspace.objects.get(name="Customer 7").organization_id == organization.id
    with pytest.raises(CommandError):
        call_command(
            "create_api_key", "--workspace", "C8", "--create-workspace", "--organization", "Nope", "--role", "admin"
        )
    assert not Workspace.objects.filter(name="C8").exists()


@pytest.fixture
def staff(client):
    user = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw-for-tests-only")
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_staff_mint_an_organization_key_in_the_admin(staff, organization, workspace) -> None:
    form = {"name": "from admin", "role": "editor", "expires_at_0": "", "expires_at_1": ""}
    response = staff.post(
        "/admin/workspaces/apikey/add/",
        {**form, "organization": organization.pk, "organization_permissions": ["usage.read", "keys.manage"]},
    )
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    found = re.search(r'<code id="new-api-key">(cpo_[^<]+)</code>', response.content.decode())
    assert found is not None
    me = _client(found[1]).get("/api/v1/me").json()
    assert (me["organizationId"], me["organizationPermissions"]) == (organization.id, ["keys.manage", "usage.read"])
    assert ApiKey.objects.get(name="from admin").created_by is not None
    for bad in (
        {**form, "name": "both", "organization": organization.pk, "workspace": workspace.pk},
        {**form, "name": "neither"},
        {**form, "name": "perms", "workspace": workspace.pk, "organization_permissions": ["usage.read"]},
    ):
        refused = staff.post("/admin/workspaces/apikey/add/", bad)
        assert refused.status_code == 200 and b"errornote" in refused.content, bad["name"]
        assert not ApiKey.objects.filter(name=bad["name"]).exists()
    assert api_key_create(workspace=workspace, name="still fine", role="viewer").plaintext.startswith("cpk_")
