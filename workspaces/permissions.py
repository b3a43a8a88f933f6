"""Permission checks declared in one line per view.

``required_permissions = {"list": Permission.POSTS_READ, "create": Permission.POSTS_DRAFT}`` on a
viewset (keys are actions; on a plain APIView, lower-case HTTP methods; ``"*"`` for all). ``None``
means any valid key. A view that declares nothing for an action refuses it: nothing is open by
omission. The OpenAPI description reads the same mapping (core.view_permissions).

Where the caller stands is checked first (``access_scope``, see ``workspaces.access``): an
organization key without ``X-Workspace-Id`` reaches no workspace operation (400
``workspace_required``), and nothing but an organization key reaches an organization operation
(403 ``permission_denied``).
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from core.errors import PermissionDenied, WorkspaceRequired
from core.view_permissions import ANY_VALID_KEY, UNDECLARED, required_permission
from workspaces.access import Access, OrganizationAccess, Scope, scope_of

__all__ = ["ANY_VALID_KEY", "IsAuthenticatedPrincipal", "required_permission"]


def _handles(view: Any, method: str) -> bool:
    if hasattr(view, "action_map") or hasattr(view, "action"):
        return getattr(view, "action", None) is not None
    return hasattr(view, method.lower())


class IsAuthenticatedPrincipal(BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        access = request.auth
        if not isinstance(access, Access | OrganizationAccess):
            return False  # DRF turns this into 401 (NotAuthenticated)
        if getattr(view, "action", None) == "metadata" and request.method != "OPTIONS":
            # DRF's OPTIONS answer probes POST/PUT to describe their serializer fields; our views
            # have no serializer_class (the OpenAPI description is the field reference), so the
            # probe is declined and OPTIONS lists the route's methods and media types only.
            return False
        permission = required_permission(view, request.method or "get")
        scope = scope_of(view)
        if isinstance(access, OrganizationAccess) and scope == Scope.WORKSPACE:
            raise WorkspaceRequired()
        if isinstance(access, Access) and scope == Scope.ORGANIZATION:
            raise PermissionDenied(
                "This operation needs an organization key",
                extra={
                    "requiredPermission": permission if isinstance(permission, str) else None,
                    "role": access.role,
                    "tokenType": access.principal.token_type,
                },
            )
        if permission is UNDECLARED:
            if not _handles(view, request.method or "get"):
                return True  # DRF answers 405 next
            raise AssertionError(f"{view.__class__.__name__} declares no permission for {request.method}")
        if permission is not None:
            access.require(permission)
        return True
