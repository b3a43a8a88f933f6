"""The workspace a request acts in, with the caller's role there; or, for an organization key
calling without ``X-Workspace-Id``, its organization.

A view says where it acts with ``access_scope`` (:class:`Scope`): in a workspace (the default:
every resource of the API), on the organization (organization endpoints: organization keys
only), or either (``/me``, ``/workspaces``, which describe the caller wherever it stands).
``workspaces.permissions`` refuses a caller standing in the wrong place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import PermissionDenied, WorkspaceAccessDenied, WorkspaceInactive
from workspaces.models import Organization, Workspace
from workspaces.principal import Principal
from workspaces.roles import ROLE_PERMISSIONS
from workspaces.selectors import organization_workspace


class Scope:
    WORKSPACE = "workspace"
    ORGANIZATION = "organization"
    EITHER = "either"


def scope_of(view: Any) -> str:
    """The view's ``access_scope``: one scope, or a mapping of actions (on a viewset) or lower-case
    HTTP methods to scopes, for a path whose methods stand in different places (``GET
    /workspaces`` describes any caller, ``POST /workspaces`` is an organization operation)."""
    scope = getattr(view, "access_scope", Scope.WORKSPACE)
    if isinstance(scope, dict):
        request = getattr(view, "request", None)
        method = (getattr(request, "method", None) or "get").lower()
        for key in (getattr(view, "action", None), method, "*"):
            if key is not None and key in scope:
                return str(scope[key])
        return Scope.WORKSPACE
    return str(scope)


def _refuse(permission: str, *, role: str, token_type: str) -> PermissionDenied:
    return PermissionDenied(
        f"This operation requires the {permission} permission",
        extra={"requiredPermission": permission, "role": role, "tokenType": token_type},
    )


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
            raise _refuse(permission, role=self.role, token_type=self.principal.token_type)


@dataclass(frozen=True)
class OrganizationAccess:
    """An organization key acting on its organization (no workspace named): it holds the
    key's organization permissions, and ``role`` is what it would be in any workspace."""

    principal: Principal
    organization: Organization
    role: str

    @property
    def permissions(self) -> frozenset[str]:
        api_key = self.principal.api_key
        return frozenset(api_key.organization_permissions if api_key is not None else ())

    def has(self, permission: str) -> bool:
        return permission in self.permissions

    def require(self, permission: str) -> None:
        if permission not in self.permissions:
            raise _refuse(permission, role=self.role, token_type=self.principal.token_type)


def _require_active(workspace: Workspace) -> None:
    """A workspace whose deletion was requested answers every call with 403 ``workspace_inactive``
    (its keys included) until it is restored, so that a caller learns why at once."""
    if workspace.deleted_at is not None:
        raise WorkspaceInactive()


def resolve_access(
    principal: Principal, requested_workspace_id: str | None, *, scope: str = Scope.WORKSPACE
) -> Access | OrganizationAccess:
    """Pick the workspace: a workspace key acts in its own; an organization key in the one of its
    organization named by ``X-Workspace-Id`` (on its organization without the header, or on an
    organization endpoint); a member in the one named by ``X-Workspace-Id`` or else their
    default. Anything unreachable is 403 workspace_access_denied: another organization's
    workspace looks exactly like one that does not exist."""
    requested = (requested_workspace_id or "").strip() or None
    key = principal.api_key
    if key is not None and key.organization is not None:
        organization = key.organization
        if requested is None or scope == Scope.ORGANIZATION:
            return OrganizationAccess(principal=principal, organization=organization, role=key.role)
        workspace = organization_workspace(organization_id=organization.id, workspace_id=requested)
        if workspace is None:
            raise WorkspaceAccessDenied()
        _require_active(workspace)
        workspace.organization = organization
        return Access(principal=principal, workspace=workspace, role=key.role)
    if key is not None:
        # A key without an organization has a workspace (the table's constraint).
        if key.workspace is None or (requested is not None and requested != key.workspace_id):
            raise WorkspaceAccessDenied()
        _require_active(key.workspace)
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
    _require_active(chosen.workspace)
    return Access(principal=principal, workspace=chosen.workspace, role=chosen.role)
