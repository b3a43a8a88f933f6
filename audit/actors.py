"""Who made a change, for the audit log: an API key, a member's OAuth sign-in, a staff user in
the admin, or the system (a command line, a scheduled job), with the request it came in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from audit.models import ActorType
from core.client_address import client_address
from core.middleware import request_id_var


@dataclass(frozen=True)
class Actor:
    type: str
    id: str
    label: str = ""
    request_id: str = ""
    source_address: str | None = None


def _request_id(request: Any) -> str:
    found = getattr(request, "request_id", None) or request_id_var.get()
    return "" if found in (None, "-") else str(found)


def actor_of_request(request: Any) -> Actor:
    """The API caller of a DRF (or Django) request: its key, or the member of its OAuth token."""
    principal = getattr(request, "principal", None) or getattr(request, "user", None)
    api_key = getattr(principal, "api_key", None)
    base: dict[str, Any] = {"request_id": _request_id(request), "source_address": client_address(request)}
    if api_key is not None:
        return Actor(type=ActorType.API_KEY, id=api_key.id, label=f"{api_key.name} ({api_key.public_part})", **base)
    user_id = getattr(principal, "user_id", None)
    return Actor(type=ActorType.OAUTH, id=str(user_id), label=str(getattr(principal, "token_name", "")), **base)


def staff_actor(request: Any) -> Actor:
    """A staff user in the admin."""
    user = request.user
    return Actor(
        type=ActorType.STAFF,
        id=str(user.pk),
        label=user.get_username(),
        request_id=_request_id(request),
        source_address=client_address(request),
    )


def system_actor(name: str) -> Actor:
    """A command line (``manage.py <name>``) or a scheduled job."""
    return Actor(type=ActorType.SYSTEM, id=name[:60], label=name[:200])
