from __future__ import annotations

from workspaces.access import Access
from workspaces.models import Membership


def reachable_memberships(*, access: Access) -> list[Membership]:
    """The workspaces the caller can reach: an API key only its own; a member every membership."""
    if access.principal.api_key is not None:
        return []
    return sorted(access.principal.memberships, key=lambda m: (m.workspace.name, m.workspace_id))


def issuer_role(*, access: Access) -> str | None:
    """The role of the member who created the calling API key in its workspace (None for a key
    made without a member, or whose member has left); for a member's own OAuth token, their role."""
    api_key = access.principal.api_key
    if api_key is None:
        return access.role
    if api_key.created_by_id is None:
        return None
    return (
        Membership.objects.filter(user_id=api_key.created_by_id, workspace_id=access.workspace.id)
        .values_list("role", flat=True)
        .first()
    )
