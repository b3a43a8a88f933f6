from __future__ import annotations

from typing import Any

from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from workspaces.access import Access, resolve_access
from workspaces.principal import Principal


class BearerAuthentication(BaseAuthentication):
    """``Authorization: Bearer <API key or OAuth access token>``; sets ``request.auth`` to the
    :class:`Access` (workspace + role) and ``request.user`` to the :class:`Principal`."""

    def authenticate(self, request: Request) -> tuple[Principal, Access] | None:
        # DRF's Request hands attributes it does not have to the HttpRequest it wraps, where
        # PrincipalMiddleware put the resolved principal.
        principal: Principal | None = getattr(request, "principal", None)
        if principal is None:
            return None
        access = resolve_access(principal, request.headers.get("X-Workspace-Id"))
        return principal, access

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


def access_of(request: Any) -> Access:
    access = request.auth
    assert isinstance(access, Access), "view reached without authentication"
    return access
