from __future__ import annotations

from workspaces.access import Access
from workspaces.models import Membership


def reachable_memberships(*, access: Access) -> list[Membership]:
    """The workspaces the caller can reach: an API key only its own; a member every membership."""
    if access.principal.api_key is not None:
        return []
    return sorted(access.principal.memberships, key=lambda m: (m.workspace.name, m.workspace_id))
