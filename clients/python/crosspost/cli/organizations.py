"""``crosspost workspaces|keys|org-keys|usage|audit``: an organization key (``cpo_…``) managing
the organization's workspaces, their keys, its own keys, its plan usage and its audit log."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from crosspost.cli.common import App, JsonOption, api, console, show, usage_error

workspaces = App(help="The organization's workspaces (an organization key with workspaces.manage).")
keys = App(help="API keys of a workspace (an organization key with keys.manage).")
org_keys = App(help="The organization's own keys, cpo_… (an organization key with keys.manage).")

WORKSPACE_COLUMNS = ("id", "name", "externalId", "deletedAt", "current")
KEY_COLUMNS = ("id", "name", "publicPart", "role", "status", "expiresAt", "lastUsedAt")
ORG_KEY_COLUMNS = ("id", "name", "publicPart", "role", "permissions", "status", "expiresAt", "lastUsedAt")
AUDIT_COLUMNS = ("createdAt", "action", "workspaceId", "target", "actor")


def _metadata(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise usage_error(f"--metadata must be a JSON object: {exc}")
    if not isinstance(value, dict):
        raise usage_error("--metadata must be a JSON object")
    return value


@workspaces.command("create")
def workspaces_create(
    name: str,
    external_id: Annotated[str | None, typer.Option("--external-id", help="Your own id of the customer.")] = None,
    metadata: Annotated[str | None, typer.Option("--metadata", help="A JSON object kept with it.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Create a workspace for one of your customers."""
    with api(as_json) as client:
        show(client.create_workspace(name=name, external_id=external_id, metadata=_metadata(metadata)), as_json)


@workspaces.command("list")
def workspaces_list(as_json: JsonOption = False) -> None:
    """Every workspace the key reaches (deleted ones show deletedAt until purged)."""
    with api(as_json) as client:
        show(client.list_workspaces(), as_json, rows="workspaces", columns=WORKSPACE_COLUMNS)


@workspaces.command("get")
def workspaces_get(workspace_id: str, as_json: JsonOption = False) -> None:
    with api(as_json) as client:
        show(client.get_workspace(workspace_id), as_json, title="workspace")


@workspaces.command("update")
def workspaces_update(
    workspace_id: str,
    name: Annotated[str | None, typer.Option("--name")] = None,
    external_id: Annotated[str | None, typer.Option("--external-id")] = None,
    metadata: Annotated[str | None, typer.Option("--metadata", help="Replaces the whole object.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Change a workspace's name, external id or metadata."""
    given = {"name": name, "externalId": external_id, "metadata": _metadata(metadata)}
    body = {key: value for key, value in given.items() if value is not None}
    if not body:
        raise usage_error("give --name, --external-id or --metadata")
    with api(as_json) as client:
        show(client.update_workspace(workspace_id, body), as_json, title="workspace")


@workspaces.command("delete")
def workspaces_delete(
    workspace_id: str,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Delete a workspace: inactive at once, restorable until its grace period ends, then removed."""
    if not yes and not typer.confirm(f"Delete workspace {workspace_id}?"):
        raise typer.Exit(1)
    with api(as_json) as client:
        job = client.delete_workspace(workspace_id)
        if as_json:
            show(job, True)
        else:
            console.print(f"Deletion {job['id']} started; restorable until {job['purgeAfter']}.")


@workspaces.command("restore")
def workspaces_restore(workspace_id: str, as_json: JsonOption = False) -> None:
    """Restore a deleted workspace before its grace period ends."""
    with api(as_json) as client:
        show(client.restore_workspace(workspace_id), as_json, title="workspace")


@keys.command("create")
def keys_create(
    workspace_id: str,
    name: Annotated[str, typer.Option("--name")],
    role: Annotated[str, typer.Option("--role", help="admin, editor, contributor or viewer")],
    expires_at: Annotated[str | None, typer.Option("--expires-at", help="An ISO 8601 instant.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Create a key of the workspace; the key is printed once, as the last line."""
    with api(as_json) as client:
        created = client.create_workspace_key(workspace_id, name=name, role=role, expires_at=expires_at)
        if as_json:
            show(created, True)
        else:
            console.print(f"{created['publicPart']} ({created['role']}) for {created['workspaceId']}:")
            console.print(created["key"], highlight=False, soft_wrap=True)


@keys.command("list")
def keys_list(workspace_id: str, as_json: JsonOption = False) -> None:
    with api(as_json) as client:
        show(client.list_workspace_keys(workspace_id), as_json, rows="apiKeys", columns=KEY_COLUMNS)


@keys.command("revoke")
def keys_revoke(workspace_id: str, key_id: str, as_json: JsonOption = False) -> None:
    """Revoke a key: refused from the next request on."""
    with api(as_json) as client:
        show(client.revoke_workspace_key(workspace_id, key_id), as_json, title="key")


@org_keys.command("create")
def org_keys_create(
    name: Annotated[str, typer.Option("--name")],
    role: Annotated[str, typer.Option("--role", help="Its role in the workspaces: admin, editor, contributor, viewer")],
    permission: Annotated[
        list[str] | None,
        typer.Option(
            "--permission", help="workspaces.manage, keys.manage, usage.read or audit.read; repeat for several."
        ),
    ] = None,
    expires_at: Annotated[str | None, typer.Option("--expires-at", help="An ISO 8601 instant.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Create an organization key (never more than the key you use holds); printed once, as the last line."""
    with api(as_json) as client:
        created = client.create_organization_key(
            name=name, role=role, permissions=list(permission or []), expires_at=expires_at
        )
        if as_json:
            show(created, True)
        else:
            held = ", ".join(created["permissions"]) or "no organization permission"
            console.print(f"{created['publicPart']} ({created['role']}; {held}):")
            console.print(created["key"], highlight=False, soft_wrap=True)


@org_keys.command("list")
def org_keys_list(
    limit: Annotated[int, typer.Option("--limit")] = 20,
    after: Annotated[str | None, typer.Option("--after", help="A nextCursor of an earlier page.")] = None,
    as_json: JsonOption = False,
) -> None:
    """The organization's own keys, newest first."""
    with api(as_json) as client:
        page = client.list_organization_keys(limit=limit, after=after)
        show(page, as_json, rows="organizationKeys", columns=ORG_KEY_COLUMNS)
        if not as_json and page["hasMore"]:
            console.print(f"more: --after {page['nextCursor']}", highlight=False)


@org_keys.command("get")
def org_keys_get(key_id: str, as_json: JsonOption = False) -> None:
    with api(as_json) as client:
        show(client.get_organization_key(key_id), as_json, title="organization key")


@org_keys.command("revoke")
def org_keys_revoke(
    key_id: str,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Revoke an organization key: refused from the next request on."""
    if not yes and not typer.confirm(f"Revoke organization key {key_id}?"):
        raise typer.Exit(1)
    with api(as_json) as client:
        show(client.revoke_organization_key(key_id), as_json, title="organization key")


def usage(as_json: JsonOption = False) -> None:
    """What the organization uses of its plan this month, per workspace."""
    with api(as_json) as client:
        report = client.get_usage()
        if as_json:
            show(report, True)
            return
        console.print(f"Plan {report['plan']['name']}, {report['period']['start']} to {report['period']['end']}")
        for key, used in report["usage"].items():
            limit = report["limits"].get(key)
            console.print(f"  {key}: {used} / {'unlimited' if limit is None else limit}")
        show(report, False, rows="workspaces")


def audit(
    workspace_id: Annotated[str | None, typer.Option("--workspace-id")] = None,
    action: Annotated[list[str] | None, typer.Option("--action", help="Repeat for several.")] = None,
    limit: Annotated[int, typer.Option("--limit")] = 20,
    after: Annotated[str | None, typer.Option("--after", help="A nextCursor of an earlier page.")] = None,
    as_json: JsonOption = False,
) -> None:
    """The organization's audit log, newest first."""
    with api(as_json) as client:
        page = client.list_audit_events(workspaceId=workspace_id, action=action, limit=limit, after=after)
        if as_json:
            show(page, True)
            return
        rows = [
            {**e, "target": f"{e['target']['type']} {e['target']['id']}", "actor": e["actor"]["name"]}
            for e in page["events"]
        ]
        show({"events": rows}, False, rows="events", columns=AUDIT_COLUMNS)
        if page["hasMore"]:
            console.print(f"more: --after {page['nextCursor']}", highlight=False)
