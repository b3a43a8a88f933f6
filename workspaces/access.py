"""The workspace a request acts in, with the caller's role there."""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import PermissionDenied, WorkspaceAccessDenied
from workspaces.models import Workspace
from workspaces.principal import Principal
from workspaces.roles import ROLE_PERMISSIONS


@dataclass(frozen=True)
class Access:
    principal: Principal
    workspace: Workspace
    role: str

    @property
    def permissions(self) -> frozenset[str]:
        return ROLE_PERMISSIONS[self.role]

    @property
    def member_id(self) -> int | None:
        """The member behind the call: the one who created the API key (None for a key made
        without a member, e.g. by the command line), or the OAuth token's member."""
        if self.principal.api_key is not None:
            return self.principal.api_key.created_by_id
        return self.principal.user_id

    def has(self, permission: str) -> bool:
        return permission in self.permissions

    def require(self, permission: str) -> None:
        """Raise 403 permission_denied naming the permission, the role and the token type."""
        if permission not in self.permissions:
            raise PermissionDenied(
                f"This operation requires the {permission} permission",
                extra={
                    "requiredPermission": permission,
                    "role": self.role,
                    "tokenType": self.principal.token_type,
                },
            )


def resolve_access(principal: Principal, requested_workspace_id: str | None) -> Access:
    """Pick the workspace: an API key acts in its own; a member in the one named by
    ``X-Workspace-Id`` or else their default. Anything unreachable is 403 workspace_access_denied."""
    requested = (requested_workspace_id or "").strip() or None
    if principal.api_key is not None:
        key = principal.api_key
        if requested is not None and requested != key.workspace_id:
            raise WorkspaceAccessDenied()
        return Access(principal=principal, workspace=key.workspace, role=key.role)
    memberships = principal.memberships
    if requested is not None:
        chosen = next((m for m in memberships if m.workspace_id == requested), None)
    else:
        chosen = next((m for m in memberships if m.is_default), None) or (
            min(memberships, key=lambda m: m.created_at) if memberships else None
        )
    if chosen is None:
        raise WorkspaceAccessDenied()
    return Access(principal=principal, workspace=chosen.workspace, role=chosen.role)
