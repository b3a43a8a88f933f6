"""The SDK and the CLI drive the organization operations over real HTTP (issue 31 item 9)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from crosspost import Client
from crosspost.cli import app
from crosspost.errors import PermissionDenied
from typer.testing import CliRunner

from tests.factories import OrganizationFactory
from workspaces.models import Plan
from workspaces.roles import ORGANIZATION_PERMISSIONS
from workspaces.services import organization_key_create

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    """The deletion's step one is not this test's concern: no task reaches a broker."""
    from config.celery import app as celery_app

    monkeypatch.setattr(celery_app, "send_task", lambda *args, **kwargs: None)


def test_a_builder_onboards_a_customer_with_the_sdk_and_the_cli(
    live_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    organization = OrganizationFactory(plan=Plan.objects.create(name="Starter", max_workspaces=1))
    key = organization_key_create(
        organization=organization, name="builder", role="admin", permissions=list(ORGANIZATION_PERMISSIONS)
    ).plaintext
    base_url = f"{live_server.url}/api/v1"
    with Client(key, base_url=base_url) as sdk:
        workspace = sdk.create_workspace(name="Acme", external_id="acme-42", metadata={"tier": "gold"})
        assert sdk.get_workspace(workspace["id"])["externalId"] == "acme-42"
        assert sdk.update_workspace(workspace["id"], name="Acme Inc")["name"] == "Acme Inc"
        with pytest.raises(PermissionDenied) as over:
            sdk.create_workspace(name="Second")
        assert over.value.code == "subscription_required" and over.value.body["limit"] == "workspaces"
        minted = sdk.create_workspace_key(workspace["id"], name="acme", role="editor")
        with Client(minted["key"], base_url=base_url) as customer:
            assert customer.get_me()["workspace"]["id"] == workspace["id"]
        assert [k["id"] for k in sdk.list_workspace_keys(workspace["id"])["apiKeys"]] == [minted["id"]]
        assert sdk.get_usage()["usage"]["workspaces"] == 1

    monkeypatch.setenv("CROSSPOST_API_KEY", key)
    monkeypatch.setenv("CROSSPOST_BASE_URL", base_url)
    runner = CliRunner()
    revoked = runner.invoke(app, ["keys", "revoke", workspace["id"], minted["id"], "--json"])
    assert revoked.exit_code == 0, revoked.output
    assert json.loads(revoked.stdout)["status"] == "revoked"
    deleted = runner.invoke(app, ["workspaces", "delete", workspace["id"], "--yes", "--json"])
    assert deleted.exit_code == 0 and json.loads(deleted.stdout)["status"] == "pending", deleted.output
    restored = runner.invoke(app, ["workspaces", "restore", workspace["id"], "--json"])
    assert restored.exit_code == 0 and json.loads(restored.stdout)["deletedAt"] is None
    audit = runner.invoke(app, ["audit", "--json", "--workspace-id", workspace["id"]])
    actions = [e["action"] for e in json.loads(audit.stdout)["events"]]
    assert actions == [
        "workspace.restore",
        "workspace.delete",
        "api_key.revoke",
        "api_key.create",
        "workspace.update",
        "workspace.create",
    ]
    usage = runner.invoke(app, ["usage"])
    assert usage.exit_code == 0 and "Plan Starter" in usage.stdout


def test_organization_keys_with_the_sdk_and_the_cli(live_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    organization = OrganizationFactory()
    key = organization_key_create(
        organization=organization, name="builder", role="admin", permissions=list(ORGANIZATION_PERMISSIONS)
    ).plaintext
    base_url = f"{live_server.url}/api/v1"
    with Client(key, base_url=base_url) as sdk:
        minted = sdk.create_organization_key(name="reports", role="viewer", permissions=["usage.read"])
        assert (minted["permissions"], minted["key"].startswith(f"{minted['publicPart']}_")) == (["usage.read"], True)
        with Client(minted["key"], base_url=base_url) as reporter:
            assert reporter.get_usage()["organizationId"] == organization.id
            with pytest.raises(PermissionDenied) as refused:
                reporter.create_organization_key(name="more", role="viewer", permissions=[])
            assert refused.value.required_permission == "keys.manage"
        first = sdk.list_organization_keys(limit=1)
        assert [k["id"] for k in first["organizationKeys"]] == [minted["id"]] and first["hasMore"]
        rest = sdk.list_organization_keys(after=first["nextCursor"])
        assert [k["name"] for k in rest["organizationKeys"]] == ["builder"] and not rest["hasMore"]
        assert sdk.get_organization_key(minted["id"])["status"] == "active"

    monkeypatch.setenv("CROSSPOST_API_KEY", key)
    monkeypatch.setenv("CROSSPOST_BASE_URL", base_url)
    runner = CliRunner()
    created = runner.invoke(
        app, ["org-keys", "create", "--name", "ops", "--role", "editor", "--permission", "audit.read"]
    )
    assert created.exit_code == 0, created.output
    assert created.stdout.strip().splitlines()[-1].startswith("cpo_")  # the key, last, printed once
    listed = runner.invoke(app, ["org-keys", "list", "--json"])
    assert [k["name"] for k in json.loads(listed.stdout)["organizationKeys"]] == ["ops", "reports", "builder"]
    revoked = runner.invoke(app, ["org-keys", "revoke", minted["id"], "--yes", "--json"])
    assert revoked.exit_code == 0 and json.loads(revoked.stdout)["status"] == "revoked", revoked.output
    own_id = next(k["id"] for k in json.loads(listed.stdout)["organizationKeys"] if k["name"] == "builder")
    last = runner.invoke(app, ["org-keys", "revoke", own_id, "--yes"])
    assert last.exit_code == 1 and "last" in last.output, last.output  # its last key able to manage keys
    audit = runner.invoke(app, ["audit", "--json", "--action", "api_key.create", "--action", "api_key.revoke"])
    assert [e["action"] for e in json.loads(audit.stdout)["events"]][:3] == [
        "api_key.revoke",
        "api_key.create",
        "api_key.create",
    ]
