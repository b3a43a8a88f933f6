"""Organization operations on workspaces and their keys (issue 31): an organization key's
``workspaces.manage`` and ``keys.manage``. Thin: parse, one service or selector, render."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.actors import actor_of_request
from core.errors import ValidationFailed
from core.fields import format_instant
from core.idempotency import idempotent
from workspaces import lifecycle, selectors, services
from workspaces.access import Scope
from workspaces.api.serializers import (
    ApiKeyCreatedOutput,
    ApiKeyCreateInput,
    ApiKeyListOutput,
    ApiKeyOutput,
    WorkspaceDeletionOutput,
    WorkspaceOutput,
    WorkspaceUpdateInput,
)
from workspaces.authentication import organization_access_of
from workspaces.models import ApiKey, Workspace, WorkspaceDeletion
from workspaces.roles import OrganizationPermission

NOT_FOUND = OpenApiResponse(description="No such workspace in the caller's organization (`code: not_found`).")
WORKSPACE_CONFLICT = OpenApiResponse(
    description="The name or the externalId is taken in the organization (`code: conflict`), or the workspace is "
    "deleted (`code: workspace_inactive`: restore it first)."
)
SUBSCRIPTION = OpenApiResponse(
    description="The organization's plan allows no more of this (`code: subscription_required`, with `limit`, "
    "`plan`, `max` and `used`), or the key lacks the permission (`code: permission_denied`)."
)


def deletion_body(deletion: WorkspaceDeletion) -> dict[str, Any]:
    return {
        "id": deletion.id,
        "workspaceId": deletion.workspace_ref,
        "status": deletion.status,
        "statusUrl": f"/api/v1/workspace-deletions/{deletion.id}",
        "requestedAt": format_instant(deletion.requested_at),
        "deactivatedAt": format_instant(deletion.deactivated_at),
        "purgeAfter": format_instant(deletion.purge_after),
        "restoredAt": format_instant(deletion.restored_at),
        "purgedAt": format_instant(deletion.purged_at),
        "accountsDisconnected": deletion.accounts_disconnected,
        "postsCancelled": deletion.posts_cancelled,
        "seriesStopped": deletion.series_stopped,
    }


def workspace_body(workspace: Workspace, deletion: WorkspaceDeletion | None) -> dict[str, Any]:
    return {
        "id": workspace.id,
        "name": workspace.name,
        "externalId": workspace.external_id,
        "metadata": workspace.metadata,
        "organization": {"id": workspace.organization.id, "name": workspace.organization.name},
        "createdAt": format_instant(workspace.created_at),
        "updatedAt": format_instant(workspace.updated_at),
        "deletedAt": format_instant(workspace.deleted_at),
        "deletion": deletion_body(deletion) if deletion is not None else None,
    }


def key_status(api_key: ApiKey) -> str:
    """active, expired or revoked: whether the key works now."""
    if api_key.revoked_at is not None:
        return "revoked"
    if api_key.expires_at is not None and api_key.expires_at <= timezone.now():
        return "expired"
    return "active"


def key_body(api_key: ApiKey) -> dict[str, Any]:
    return {
        "id": api_key.id,
        "name": api_key.name,
        "publicPart": api_key.public_part,
        "workspaceId": api_key.workspace_id,
        "role": api_key.role,
        "status": key_status(api_key),
        "createdAt": format_instant(api_key.created_at),
        "expiresAt": format_instant(api_key.expires_at),
        "lastUsedAt": format_instant(api_key.last_used_at),
        "revokedAt": format_instant(api_key.revoked_at),
    }


class WorkspaceDetailView(APIView):
    access_scope = Scope.ORGANIZATION
    required_permissions = {"*": OrganizationPermission.WORKSPACES_MANAGE}
    schema_tags = ["Organization"]

    @extend_schema(
        operation_id="getWorkspace",
        summary="Get a workspace of the organization",
        description="Deleted workspaces are found too until they are purged, with their open deletion job.",
        responses={200: WorkspaceOutput, 404: NOT_FOUND},
    )
    def get(self, request: Request, id: str) -> Response:
        organization = organization_access_of(request).organization
        workspace = lifecycle.workspace_of(organization=organization, workspace_id=id)
        return Response(workspace_body(workspace, selectors.open_deletion(workspace_id=workspace.id)))

    @extend_schema(
        operation_id="updateWorkspace",
        summary="Change a workspace's name, externalId or metadata",
        description="Only the fields sent change (`metadata` is replaced whole). Recorded in the audit log.",
        request=WorkspaceUpdateInput,
        responses={200: WorkspaceOutput, 404: NOT_FOUND, 409: WORKSPACE_CONFLICT},
    )
    def patch(self, request: Request, id: str) -> Response:
        data = WorkspaceUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        names = {"name": "name", "externalId": "external_id", "metadata": "metadata"}
        changes = {names[key]: value for key, value in data.validated_data.items()}
        workspace = lifecycle.workspace_update(
            organization=organization_access_of(request).organization,
            workspace_id=id,
            changes=changes,
            actor=actor_of_request(request),
        )
        return Response(workspace_body(workspace, None))

    @extend_schema(
        operation_id="deleteWorkspace",
        summary="Delete a workspace (a job; restorable during a grace period)",
        description="Answers 202 with the deletion job at once; `statusUrl` (also in `Location`) follows it. "
        "From now on the workspace is inactive: every call in it, its own keys' included, answers 403 "
        "`workspace_inactive`. The job then disconnects its accounts (their stored tokens dropped), turns its "
        "scheduled posts back into undated drafts (nothing is sent) and pauses its recurring series. Until "
        "`purgeAfter` (`WORKSPACE_DELETION_GRACE_DAYS`, default 30 days) POST /workspaces/{id}/restore brings it "
        "back; after it, its data is removed. Deleting a deleted workspace answers its open job again.",
        request=None,
        responses={202: WorkspaceDeletionOutput, 404: NOT_FOUND},
    )
    def delete(self, request: Request, id: str) -> Response:
        deletion = lifecycle.workspace_delete(
            organization=organization_access_of(request).organization,
            workspace_id=id,
            actor=actor_of_request(request),
        )
        body = deletion_body(deletion)
        return Response(body, status=202, headers={"Location": body["statusUrl"]})


class WorkspaceRestoreView(APIView):
    access_scope = Scope.ORGANIZATION
    required_permissions = {"post": OrganizationPermission.WORKSPACES_MANAGE}
    schema_tags = ["Organization"]

    @extend_schema(
        operation_id="restoreWorkspace",
        summary="Restore a deleted workspace before its grace period ends",
        description="The workspace is active again and its keys work again; accounts the deletion disconnected "
        "must be connected again and paused series resumed. Restoring an active workspace changes nothing. 409 "
        "`restore_period_over` once `purgeAfter` has passed; 403 `subscription_required` when the plan's "
        "workspace limit is reached.",
        request=None,
        responses={
            200: WorkspaceOutput,
            403: SUBSCRIPTION,
            404: NOT_FOUND,
            409: OpenApiResponse(description="The grace period is over (`code: restore_period_over`)."),
        },
    )
    @idempotent
    def post(self, request: Request, id: str) -> Response:
        workspace = lifecycle.workspace_restore(
            organization=organization_access_of(request).organization,
            workspace_id=id,
            actor=actor_of_request(request),
        )
        return Response(workspace_body(workspace, None))


class WorkspaceDeletionView(APIView):
    access_scope = Scope.ORGANIZATION
    required_permissions = {"get": OrganizationPermission.WORKSPACES_MANAGE}
    schema_tags = ["Organization"]

    @extend_schema(
        operation_id="getWorkspaceDeletion",
        summary="Follow a workspace deletion job",
        responses={200: WorkspaceDeletionOutput, 404: OpenApiResponse(description="No such job in the organization.")},
    )
    def get(self, request: Request, id: str) -> Response:
        organization = organization_access_of(request).organization
        deletion = selectors.deletion_get(organization_id=organization.id, deletion_id=id)
        return Response(deletion_body(deletion))


class WorkspaceKeysView(APIView):
    access_scope = Scope.ORGANIZATION
    required_permissions = {"*": OrganizationPermission.KEYS_MANAGE}
    schema_tags = ["Organization"]

    @extend_schema(
        operation_id="listWorkspaceApiKeys",
        summary="List a workspace's API keys",
        description="Newest first, revoked and expired ones too; never a secret.",
        responses={200: ApiKeyListOutput, 404: NOT_FOUND},
    )
    def get(self, request: Request, id: str) -> Response:
        organization = organization_access_of(request).organization
        workspace = lifecycle.workspace_of(organization=organization, workspace_id=id)
        keys = selectors.workspace_keys(workspace=workspace)
        return Response({"apiKeys": [key_body(k) for k in keys]})

    @extend_schema(
        operation_id="createWorkspaceApiKey",
        summary="Create an API key of a workspace",
        description="Answers the whole key once, in `key` (only its hash is stored). Its role may not exceed the "
        "calling organization key's own (403 `permission_denied` naming the permission it would add). Recorded "
        "in the audit log.",
        request=ApiKeyCreateInput,
        responses={
            201: ApiKeyCreatedOutput,
            404: NOT_FOUND,
            409: OpenApiResponse(description="The workspace is deleted (`code: workspace_inactive`)."),
        },
    )
    @idempotent
    def post(self, request: Request, id: str) -> Response:
        data = ApiKeyCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        expires_at = data.validated_data["expiresAt"]
        if expires_at is not None and expires_at <= timezone.now():
            raise ValidationFailed(["expiresAt must be in the future"])
        access = organization_access_of(request)
        workspace = lifecycle.workspace_of(organization=access.organization, workspace_id=id)
        lifecycle.require_active(workspace)
        assert access.principal.api_key is not None, "an organization access is an organization key's"
        issued = services.workspace_key_issue(
            workspace=workspace,
            issuer=access.principal.api_key,
            name=data.validated_data["name"],
            role=data.validated_data["role"],
            expires_at=expires_at,
            actor=actor_of_request(request),
        )
        return Response({**key_body(issued.api_key), "key": issued.plaintext}, status=201)


class WorkspaceKeyView(APIView):
    access_scope = Scope.ORGANIZATION
    required_permissions = {"delete": OrganizationPermission.KEYS_MANAGE}
    schema_tags = ["Organization"]

    @extend_schema(
        operation_id="revokeWorkspaceApiKey",
        summary="Revoke an API key of a workspace",
        description="Refused by every server process from the next request on. Revoking a revoked key answers it "
        "again (its first revocation time kept).",
        responses={200: ApiKeyOutput, 404: OpenApiResponse(description="No such key or workspace.")},
    )
    def delete(self, request: Request, id: str, keyId: str) -> Response:
        organization = organization_access_of(request).organization
        workspace = lifecycle.workspace_of(organization=organization, workspace_id=id)
        api_key = services.workspace_key_revoke(workspace=workspace, key_id=keyId, actor=actor_of_request(request))
        return Response(key_body(api_key))
