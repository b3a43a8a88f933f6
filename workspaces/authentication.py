from __future__ import annotations

from typing import Any

from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from workspaces.access import Access, OrganizationAccess, resolve_access, scope_of
from workspaces.principal import Principal


class BearerAuthentication(BaseAuthentication):
    """``Authorization: Bearer <API key or OAuth access token>``; sets ``request.auth`` to the
    :class:`Access` (workspace + role), or the :class:`OrganizationAccess` of an organization key
    standing on its organization, and ``request.user`` to the :class:`Principal`."""

    def authenticate(self, request: Request) -> tuple[Principal, Access | OrganizationAccess] | None:
        # DRF's Request hands attributes it does not have to the HttpRequest it wraps, where
        # PrincipalMiddleware put the resolved principal.
        principal: Principal | None = getattr(request, "principal", None)
        if principal is None:
            return None
        view = (request.parser_context or {}).get("view")
        access = resolve_access(principal, request.headers.get("X-Workspace-Id"), scope=scope_of(view))
        return principal, access

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


def access_of(request: Any) -> Access:
    access = request.auth
    assert isinstance(access, Access), "view reached without authentication"
    return access


def any_access_of(request: Any) -> Access | OrganizationAccess:
    """For a view of ``Scope.EITHER``: where the caller stands, a workspace or its organization."""
    access = request.auth
    assert isinstance(access, Access | OrganizationAccess), "view reached without authentication"
    return access


def organization_access_of(request: Any) -> OrganizationAccess:
    """For a view of ``Scope.ORGANIZATION``."""
    access = request.auth
    assert isinstance(access, OrganizationAccess), "view reached without an organization key"
    return access
