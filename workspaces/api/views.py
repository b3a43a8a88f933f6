from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.actors import actor_of_request
from core.fields import format_instant
from core.idempotency import idempotent
from workspaces.access import Access, Scope
from workspaces.api.organization_views import SUBSCRIPTION, workspace_body
from workspaces.api.serializers import MeOutput, WorkspaceCreateInput, WorkspaceListOutput, WorkspaceOutput
from workspaces.authentication import any_access_of, organization_access_of
from workspaces.lifecycle import workspace_create
from workspaces.models import Organization, Workspace
from workspaces.permissions import ANY_VALID_KEY
from workspaces.roles import (
    ORGANIZATION_PERMISSIONS,
    OrganizationPermission,
    Role,
    capability_flags,
    permissions_of,
    permissions_summary,
)
from workspaces.selectors import issuer_role, organization_workspaces, reachable_memberships


def _role(role: str) -> dict[str, str]:
    return {"key": role, "name": Role(role).label}


def _organization(organization: Organization) -> dict[str, str]:
    return {"id": organization.id, "name": organization.name}


class MeView(APIView):
    required_permissions = {"get": ANY_VALID_KEY}
    access_scope = Scope.EITHER
    schema_tags = ["Account"]

    @extend_schema(operation_id="getMe", summary="Describe the calling key", responses={200: MeOutput})
    def get(self, request: Request) -> Response:
        access = any_access_of(request)
        principal = access.principal
        workspace: Workspace | None
        if isinstance(access, Access):
            workspace, organization = access.workspace, access.workspace.organization
        else:
            workspace, organization = None, access.organization
        api_key = principal.api_key
        held = set(api_key.organization_permissions) if api_key is not None else set()
        body: dict[str, Any] = {
            "tokenType": principal.token_type,
            "tokenId": principal.token_id,
            "tokenName": principal.token_name,
            "workspace": {"id": workspace.id, "name": workspace.name} if workspace is not None else None,
            "organizationId": organization.id,
            "organizationPermissions": [p for p in ORGANIZATION_PERMISSIONS if p in held],
            "role": _role(access.role),
            "issuerRole": issuer_role(access=access) if isinstance(access, Access) else None,
            "permissions": permissions_of(access.role),
            "can": capability_flags(access.role),
            "summary": permissions_summary(
                access.role,
                token_type=principal.token_type,
                workspace_name=workspace.name if workspace is not None else None,
                organization_name=organization.name,
            ),
            "expiresAt": format_instant(principal.expires_at),
        }
        return Response(body)


class WorkspaceListView(APIView):
    required_permissions = {"get": ANY_VALID_KEY, "post": OrganizationPermission.WORKSPACES_MANAGE}
    access_scope = {"get": Scope.EITHER, "post": Scope.ORGANIZATION}
    schema_tags = ["Account"]

    @extend_schema(
        operation_id="createWorkspace",
        summary="Create a workspace in the organization",
        description="For an organization key holding `workspaces.manage`: a workspace for one of the "
        "organization's customers. Act in it with X-Workspace-Id and this key, or mint it keys of its own "
        "(POST /workspaces/{id}/api-keys). 409 `conflict` when the name or `externalId` is taken in the "
        "organization; 403 `subscription_required` past the plan's workspace limit. Recorded in the audit log.",
        request=WorkspaceCreateInput,
        responses={
            201: WorkspaceOutput,
            403: SUBSCRIPTION,
            409: OpenApiResponse(
                description="The name or the externalId is taken in the organization (`code: conflict`)."
            ),
        },
        tags=["Organization"],
    )
    @idempotent
    def post(self, request: Request) -> Response:
        data = WorkspaceCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = workspace_create(
            organization=organization_access_of(request).organization,
            name=data.validated_data["name"],
            external_id=data.validated_data["externalId"],
            metadata=data.validated_data["metadata"],
            actor=actor_of_request(request),
        )
        return Response(workspace_body(workspace, None), status=201)

    @extend_schema(
        operation_id="listWorkspaces",
        summary="List the workspaces this caller can reach",
        description="Use an `id` from this list in `X-Workspace-Id`; `current` marks where this call landed. "
        "A workspace key reaches its own workspace; an organization key every workspace of its organization "
        "(with its role in each); an OAuth sign-in every workspace its member belongs to.",
        responses={200: WorkspaceListOutput},
    )
    def get(self, request: Request) -> Response:
        access = any_access_of(request)
        current = access.workspace.id if isinstance(access, Access) else None
        api_key = access.principal.api_key
        entries: list[tuple[Workspace, str, bool]]
        if api_key is not None and api_key.organization is not None:
            entries = [(w, access.role, False) for w in organization_workspaces(organization=api_key.organization)]
        elif isinstance(access, Access) and api_key is not None:
            entries = [(access.workspace, access.role, True)]
        else:
            entries = [(m.workspace, m.role, m.is_default) for m in reachable_memberships(access=access)]
        items = [
            {
                "id": workspace.id,
                "name": workspace.name,
                "organization": _organization(workspace.organization),
                "role": _role(role),
                "permissions": permissions_of(role),
                "isDefault": is_default,
                "current": workspace.id == current,
                "can": capability_flags(role),
                "externalId": workspace.external_id,
                "metadata": workspace.metadata,
                "createdAt": format_instant(workspace.created_at),
                "deletedAt": format_instant(workspace.deleted_at),
            }
            for workspace, role, is_default in entries
        ]
        return Response({"workspaces": items})
