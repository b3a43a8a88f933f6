"""What a view declares it needs: ``required_permissions = {"list": ..., "create": ...}`` on a
viewset (keys are actions; on a plain APIView, lower-case HTTP methods; ``"*"`` for all).

Read by the permission check (``workspaces.permissions``, which owns the roles) and by the
OpenAPI description (``core.schema``), so the two cannot disagree.
"""

from __future__ import annotations

from typing import Any

# The declared value meaning "any valid key, whatever its role".
ANY_VALID_KEY = None
# What ``required_permission`` answers for a method the view declares nothing for.
UNDECLARED = object()


def required_permission(view: Any, method: str) -> Any:
    mapping: dict[str, str | None] = getattr(view, "required_permissions", {})
    method = method.lower()
    if method == "options":
        return ANY_VALID_KEY  # metadata only
    if method == "head":
        method = "get"
    action = getattr(view, "action", None)
    for key in (action, method.lower(), "*"):
        if key is not None and key in mapping:
            return mapping[key]
    return UNDECLARED
