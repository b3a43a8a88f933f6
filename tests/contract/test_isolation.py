"""Isolation, generated from the OpenAPI description: for every operation, nobody outside a
workspace reaches anything in it (issue 31's "Done when").

Every operation's requests of ``test_response_shapes.CASES`` (the success first, then its error
cases: a new operation of the description must bring its case there, which that module checks)
are made in the victim's world: workspace A of organization A, its resources made by its own
admin key. Before each of the victim's own requests, the same request is sent by:

* a workspace key of another workspace of the same organization A,
* a workspace key of a workspace of organization B,
* an organization key of B (admin role, every organization permission) naming B's workspace,
* each of these three naming workspace A in X-Workspace-Id (403 ``workspace_access_denied``,
  whatever the operation),
* that organization key naming no workspace (400 ``workspace_required``, but on ``/me`` and
  ``/workspaces``, which describe the caller).

A request whose path names one of A's records answers 404 where its owner succeeds; a request
naming A's records in its body makes nothing (an answer that succeeds leaves the intruder's
workspace as it was: a validation report, a bulk call whose every item was refused); and no
answer mentions any of A's records (every row of A's, found through the models' workspace keys)
that the request did not name itself. Each request is sent by the intruders *before* the
victim's own one, which must still answer as it does alone: its first request succeeds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.apps import apps
from rest_framework.test import APIClient

from tests.contract.test_response_shapes import (
    API,
    CASES,
    ORGANIZATION_OPERATIONS,
    Ctx,
    _seed,
    operations,
    shapes_settings,
)
from tests.factories import OrganizationFactory, WorkspaceFactory
from workspaces.models import Workspace
from workspaces.roles import ORGANIZATION_PERMISSIONS
from workspaces.services import api_key_create, organization_key_create

__all__ = ["shapes_settings"]  # a fixture of test_response_shapes, used here too

DESCRIBE_THE_CALLER = {"getMe", "listWorkspaces", "getUsage"}
_ID = re.compile(r"\b[a-z]+_[0-9a-f]{12,}\b")


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def _send(client: APIClient, call: tuple[Any, ...], workspace_id: str | None = None) -> Any:
    method, path, body = call[:3]
    headers = dict(call[3]) if len(call) > 3 else {}
    if workspace_id is not None:
        headers["X-Workspace-Id"] = workspace_id
    kwargs: dict[str, Any] = {"format": "json"} if body is not None else {}
    return getattr(client, method)(f"{API}{path}", body, headers=headers, **kwargs)


def _records_of(workspace: Workspace) -> set[str]:
    """The ids of every row of the workspace (each model with a ``workspace`` key), and its own."""
    found = {workspace.id}
    for model in apps.get_models():
        field = next((f for f in model._meta.concrete_fields if f.name == "workspace"), None)
        if field is None or getattr(field, "related_model", None) is not Workspace:
            continue
        for pk in model._default_manager.filter(workspace=workspace).values_list("pk", flat=True):
            if isinstance(pk, str) and _ID.fullmatch(pk):
                found.add(pk)
    return found


def test_every_operation_of_the_description_is_covered(db: Any) -> None:
    assert set(operations()) == set(CASES)


@pytest.mark.parametrize("operation_id", sorted(set(CASES) - ORGANIZATION_OPERATIONS))
def test_nobody_outside_a_workspace_reaches_it(
    operation_id: str, client_for: Callable[..., APIClient], shapes_settings: None
) -> None:
    victim = WorkspaceFactory(organization=OrganizationFactory())
    owner = client_for("admin", victim)
    ctx = Ctx(workspace=victim, api=owner, accounts=_seed(victim, operation_id))
    calls = CASES[operation_id](ctx)
    records = _records_of(victim)

    sibling = WorkspaceFactory(organization=victim.organization)
    stranger_org = OrganizationFactory()
    stranger = WorkspaceFactory(organization=stranger_org)
    org_key = organization_key_create(
        organization=stranger_org, name="intruder", role="admin", permissions=list(ORGANIZATION_PERMISSIONS)
    ).plaintext
    sibling_key = api_key_create(workspace=sibling, name="s", role="admin").plaintext
    stranger_key = api_key_create(workspace=stranger, name="o", role="admin").plaintext
    inside: list[tuple[str, APIClient, str | None, Workspace]] = [
        ("key of a sibling workspace", _client(sibling_key), None, sibling),
        ("key of another organization", _client(stranger_key), None, stranger),
        ("organization key in its own workspace", _client(org_key), stranger.id, stranger),
    ]
    naming_the_victim = [_client(sibling_key), _client(stranger_key), _client(org_key)]
    no_workspace = _client(org_key)

    template = operations()[operation_id][1]
    owner_statuses = []
    for call in calls:
        path, body = call[1], call[2]
        named = {r for r in records if r in path or r in json.dumps(body)}
        intruder_statuses = {}
        for who, client, workspace_id, home in inside:
            before = _records_of(home)
            response = _send(client, call, workspace_id)
            where = (operation_id, who, call[0], path, response.status_code)
            text = response.content.decode()
            assert response.status_code < 500, (*where, text)
            assert not set(_ID.findall(text)) & (records - named), (*where, text)
            if named and 200 <= response.status_code < 300:
                # Only an answer that makes nothing (a validation report, a bulk call whose every
                # item was refused) may succeed with another workspace's records in its body.
                assert _records_of(home) == before, (*where, text)
            intruder_statuses[who] = response.status_code
        for client in naming_the_victim:
            refused = _send(client, call, victim.id)
            assert (refused.status_code, refused.json().get("code")) == (403, "workspace_access_denied"), (
                operation_id,
                path,
                refused.content,
            )
        bare = _send(no_workspace, call)
        if operation_id in DESCRIBE_THE_CALLER:
            # Its own answer (a 400 for a request that is wrong whoever sends it), nothing of the victim's.
            assert bare.status_code in (200, 400) and bare.json().get("code") != "workspace_required", bare.content
            assert not set(_ID.findall(bare.content.decode())) & records
        else:
            assert (bare.status_code, bare.json().get("code")) == (400, "workspace_required"), (operation_id, path)
        mine = _send(owner, call)
        owner_statuses.append(mine.status_code)
        if "{" in template and any(r in path for r in named) and 200 <= mine.status_code < 300:
            # What its owner reaches, an intruder is told does not exist.
            assert set(intruder_statuses.values()) == {404}, (operation_id, path, intruder_statuses)
    assert 200 <= owner_statuses[0] < 300, (operation_id, owner_statuses)


@pytest.mark.parametrize("operation_id", sorted(ORGANIZATION_OPERATIONS))
def test_nobody_outside_an_organization_reaches_it(
    operation_id: str, client_for: Callable[..., APIClient], shapes_settings: None
) -> None:
    """An organization operation, made by organization A's own organization key: a workspace key
    (of A's or of another organization) is refused (403 ``permission_denied``), and organization
    B's key, naming a workspace of its own or A's, reaches nothing of A's: a path naming A's
    records answers 404 where A's key succeeds, and no answer mentions A's records."""
    organization = OrganizationFactory()
    victim = WorkspaceFactory(organization=organization)
    ctx = Ctx(workspace=victim, api=client_for("admin", victim), accounts=_seed(victim, operation_id))
    owner = ctx.org
    calls = CASES[operation_id](ctx)
    # The organization's own keys (of no workspace) are its records too.
    records = _records_of(victim) | {organization.id} | set(organization.api_keys.values_list("pk", flat=True))
    stranger_org = OrganizationFactory()
    stranger = WorkspaceFactory(organization=stranger_org)
    org_key = organization_key_create(
        organization=stranger_org, name="intruder", role="admin", permissions=list(ORGANIZATION_PERMISSIONS)
    ).plaintext
    refused = [
        _client(
            api_key_create(workspace=WorkspaceFactory(organization=organization), name="s", role="admin").plaintext
        ),
        _client(api_key_create(workspace=stranger, name="o", role="admin").plaintext),
    ]
    owner_statuses = []
    for call in calls:
        path, body = call[1], call[2]
        named = {r for r in records if r in path or r in json.dumps(body)}
        for client in refused:
            response = _send(client, call)
            assert (response.status_code, response.json().get("code")) == (403, "permission_denied"), (
                operation_id,
                path,
                response.content,
            )
        intruder_statuses = set()
        for workspace_id in (None, stranger.id, victim.id):
            response = _send(_client(org_key), call, workspace_id)
            text = response.content.decode()
            assert response.status_code < 500, (operation_id, path, text)
            assert not set(_ID.findall(text)) & (records - named), (operation_id, path, text)
            intruder_statuses.add(response.status_code)
        mine = _send(owner, call)
        owner_statuses.append(mine.status_code)
        if named and 200 <= mine.status_code < 300:
            assert intruder_statuses == {404}, (operation_id, path, intruder_statuses)
    assert 200 <= owner_statuses[0] < 300, (operation_id, owner_statuses)
