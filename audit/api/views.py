from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.api.serializers import AuditEventListOutput, AuditEventListQuery
from audit.models import AuditEvent
from audit.selectors import audit_page
from core.fields import format_instant
from core.query import parse_query
from workspaces.access import Scope
from workspaces.authentication import organization_access_of
from workspaces.roles import OrganizationPermission


def event_body(event: AuditEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "createdAt": format_instant(event.created_at),
        "action": event.action,
        "actor": {"type": event.actor_type, "id": event.actor_id, "name": event.actor_label},
        "workspaceId": event.workspace_ref or None,
        "target": {"type": event.target_type, "id": event.target_id},
        "changes": event.changes,
        "requestId": event.request_id or None,
        "sourceAddress": event.source_address,
    }


class AuditEventListView(APIView):
    access_scope = Scope.ORGANIZATION
    required_permissions = {"get": OrganizationPermission.AUDIT_READ}
    schema_tags = ["Organization"]

    @extend_schema(
        operation_id="listAuditEvents",
        summary="The organization's audit log",
        description="Every change made through the API, the admin or the command line to keys, workspaces, "
        "webhooks, accounts and plans, and every post deletion, newest first, kept for a year "
        "(`AUDIT_RETENTION_DAYS`). Each was written in the transaction of its change. Filters combine. "
        "**Pagination (cursor):** pass the answer's `nextCursor` back as `after`; `hasMore` is true while older "
        "events follow.",
        parameters=[AuditEventListQuery],
        responses={200: AuditEventListOutput},
    )
    def get(self, request: Request) -> Response:
        query = parse_query(request.query_params, AuditEventListQuery)
        page = audit_page(
            organization_id=organization_access_of(request).organization.id,
            limit=query["limit"],
            after=query.get("after"),
            workspace_id=query.get("workspaceId"),
            actor_id=query.get("actorId"),
            actions=query.get("action"),
            since=query.get("since"),
            until=query.get("until"),
        )
        return Response(
            {"events": [event_body(e) for e in page.items], "nextCursor": page.next_cursor, "hasMore": page.has_more}
        )
