"""Organization keys through the API (issue 31 item 2): an organization key holding
``keys.manage`` mints, lists, reads and revokes its organization's own keys. Thin: parse, one
service or selector, render (as the workspace keys of ``organization_views``)."""

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
from core.pagination import CURSOR_PAGINATION
from core.query import parse_query
from workspaces import selectors, services
from workspaces.access import Scope
from workspaces.api.organization_views import key_status
from workspaces.api.serializers import (
    OrganizationKeyCreatedOutput,
    OrganizationKeyCreateInput,
    OrganizationKeyListOutput,
    OrganizationKeyListQuery,
    OrganizationKeyOutput,
)
from workspaces.authentication import organization_access_of
from workspaces.models import ApiKey
from workspaces.roles import OrganizationPermission

KEY_NOT_FOUND = OpenApiResponse(
    description="No such key among the organization's own keys (`code: not_found`): another organization's key "
    "and a workspace key alike."
)
BEYOND_THE_CALLER = OpenApiResponse(
    description="The caller is not an organization key or lacks `keys.manage`, or the new key would hold more "
    "than the calling key: a role permission or an organization permission it lacks (`code: permission_denied`, "
    "`requiredPermission` naming the first such permission)."
)


def organization_key_body(api_key: ApiKey) -> dict[str, Any]:
    return {
        "id": api_key.id,
        "name": api_key.name,
        "publicPart": api_key.public_part,
        "organizationId": api_key.organization_id,
        "role": api_key.role,
        "permissions": list(api_key.organization_permissions),
        "status": key_status(api_key),
        "createdAt": format_instant(api_key.created_at),
        "expiresAt": format_instant(api_key.expires_at),
        "lastUsedAt": format_instant(api_key.last_used_at),
        "revokedAt": format_instant(api_key.revoked_at),
    }


class OrganizationKeysView(APIView):
    access_scope = Scope.ORGANIZATION
    required_permissions = {"*": OrganizationPermission.KEYS_MANAGE}
    schema_tags = ["Organization"]

    @extend_schema(
        operation_id="listOrganizationApiKeys",
        summary="List the organization's own keys",
        description="The organization keys (`cpo_…`) of the caller's organization, newest first, revoked and "
        "expired ones too; never a secret. A workspace's keys are listed by GET /workspaces/{id}/api-keys. "
        + CURSOR_PAGINATION,
        parameters=[OrganizationKeyListQuery],
        responses={200: OrganizationKeyListOutput},
    )
    def get(self, request: Request) -> Response:
        query = parse_query(request.query_params, OrganizationKeyListQuery)
        page = selectors.organization_keys_page(
            organization_id=organization_access_of(request).organization.id,
            limit=query["limit"],
            after=query.get("after"),
        )
        return Response(
            {
                "organizationKeys": [organization_key_body(k) for k in page.items],
                "nextCursor": page.next_cursor,
                "hasMore": page.has_more,
            }
        )

    @extend_schema(
        operation_id="createOrganizationApiKey",
        summary="Create an organization key",
        description="A new key of the caller's organization, acting in any of its workspaces (named by "
        "X-Workspace-Id) with `role`, and holding `permissions` on the organization. It never holds more than "
        "the calling key: its role grants no permission the caller's role lacks, and each of its organization "
        "permissions is one the caller holds (403 `permission_denied` naming the first it would add, as for a "
        "workspace's keys). Answers the whole key once, in `key` (only its hash is stored). Recorded in the "
        "audit log with the calling key as the actor.",
        request=OrganizationKeyCreateInput,
        responses={201: OrganizationKeyCreatedOutput, 403: BEYOND_THE_CALLER},
    )
    @idempotent
    def post(self, request: Request) -> Response:
        data = OrganizationKeyCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        expires_at = data.validated_data["expiresAt"]
        if expires_at is not None and expires_at <= timezone.now():
            raise ValidationFailed(["expiresAt must be in the future"])
        access = organization_access_of(request)
        assert access.principal.api_key is not None, "an organization access is an organization key's"
        issued = services.organization_key_issue(
            organization=access.organization,
            issuer=access.principal.api_key,
            name=data.validated_data["name"],
            role=data.validated_data["role"],
            permissions=data.validated_data["permissions"],
            expires_at=expires_at,
            actor=actor_of_request(request),
        )
        return Response({**organization_key_body(issued.api_key), "key": issued.plaintext}, status=201)


class OrganizationKeyView(APIView):
    access_scope = Scope.ORGANIZATION
    required_permissions = {"*": OrganizationPermission.KEYS_MANAGE}
    schema_tags = ["Organization"]

    @extend_schema(
        operation_id="getOrganizationApiKey",
        summary="Get one of the organization's own keys",
        description="Never its secret.",
        responses={200: OrganizationKeyOutput, 404: KEY_NOT_FOUND},
    )
    def get(self, request: Request, id: str) -> Response:
        organization = organization_access_of(request).organization
        return Response(
            organization_key_body(selectors.organization_key_get(organization_id=organization.id, key_id=id))
        )

    @extend_schema(
        operation_id="revokeOrganizationApiKey",
        summary="Revoke one of the organization's own keys",
        description="Refused by every server process from the next request on (401). Any key of the "
        "organization may be revoked, the calling key itself included, except the organization's last working "
        "key holding `keys.manage` (409 `last_key_manager`: mint another first, or ask staff). Revoking a "
        "revoked key answers it again (its first revocation time kept). Recorded in the audit log.",
        responses={
            200: OrganizationKeyOutput,
            404: KEY_NOT_FOUND,
            409: OpenApiResponse(
                description="It is the organization's last working key holding keys.manage (`code: last_key_manager`)."
            ),
        },
    )
    def delete(self, request: Request, id: str) -> Response:
        api_key = services.organization_key_revoke(
            organization=organization_access_of(request).organization, key_id=id, actor=actor_of_request(request)
        )
        return Response(organization_key_body(api_key))
