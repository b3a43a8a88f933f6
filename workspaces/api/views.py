from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.fields import format_instant
from workspaces.api.serializers import MeOutput, WorkspaceListOutput
from workspaces.authentication import access_of
from workspaces.permissions import ANY_VALID_KEY
from workspaces.roles import Role, capability_flags, permissions_of, permissions_summary
from workspaces.selectors import issuer_role, reachable_memberships


def _role(role: str) -> dict[str, str]:
    return {"key": role, "name": Role(role).label}


class MeView(APIView):
    required_permissions = {"get": ANY_VALID_KEY}
    schema_tags = ["Account"]

    @extend_schema(operation_id="getMe", summary="Describe the calling key", responses={200: MeOutput})
    def get(self, request: Request) -> Response:
        access = access_of(request)
        principal = access.principal
        body: dict[str, Any] = {
            "tokenType": principal.token_type,
            "tokenId": principal.token_id,
            "tokenName": principal.token_name,
            "workspace": {"id": access.workspace.id, "name": access.workspace.name},
            "role": _role(access.role),
            "issuerRole": issuer_role(access=access),
            "permissions": permissions_of(access.role),
            "can": capability_flags(access.role),
            "summary": permissions_summary(
                access.role, token_type=principal.token_type, workspace_name=access.workspace.name
            ),
            "expiresAt": format_instant(principal.expires_at),
        }
        return Response(body)


class WorkspaceListView(APIView):
    required_permissions = {"get": ANY_VALID_KEY}
    schema_tags = ["Account"]

    @extend_schema(
        operation_id="listWorkspaces",
        summary="List the workspaces this caller can reach",
        description="Use an `id` from this list in `X-Workspace-Id`; `current` marks where this call landed.",
        responses={200: WorkspaceListOutput},
    )
    def get(self, request: Request) -> Response:
        access = access_of(request)
        if access.principal.api_key is not None:
            entries = [(access.workspace, access.role, True)]
        else:
            entries = [(m.workspace, m.role, m.is_default) for m in reachable_memberships(access=access)]
        items = [
            {
                "id": workspace.id,
                "name": workspace.name,
                "role": _role(role),
                "permissions": permissions_of(role),
                "isDefault": is_default,
                "current": workspace.id == access.workspace.id,
                "can": capability_flags(role),
            }
            for workspace, role, is_default in entries
        ]
        return Response({"workspaces": items})
