from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import connection

from core.errors import NotFound
from core.pagination import CursorPage, newest_first_page
from workspaces.models import ApiKey, DeletionStatus, Membership, Organization, Workspace, WorkspaceDeletion

if TYPE_CHECKING:  # access → principal → this module: the type only
    from workspaces.access import Access, OrganizationAccess


def organization_workspace(*, organization_id: str, workspace_id: str) -> Workspace | None:
    """The workspace ``workspace_id`` if it belongs to ``organization_id``; None otherwise (so that
    another organization's workspace and one that does not exist look alike)."""
    return Workspace.objects.filter(pk=workspace_id, organization_id=organization_id).first()


def open_deletion(*, workspace_id: str) -> WorkspaceDeletion | None:
    """The workspace's deletion job still pending or restorable, if any."""
    return WorkspaceDeletion.objects.filter(
        workspace_ref=workspace_id, status__in=[DeletionStatus.PENDING, DeletionStatus.DEACTIVATED]
    ).first()


def deletion_get(*, organization_id: str, deletion_id: str) -> WorkspaceDeletion:
    """A deletion job of the organization; 404 otherwise."""
    deletion = WorkspaceDeletion.objects.filter(pk=deletion_id, organization_id=organization_id).first()
    if deletion is None:
        raise NotFound("Workspace deletion not found")
    return deletion


def workspace_keys(*, workspace: Workspace) -> list[ApiKey]:
    """The workspace's keys, newest first."""
    return list(ApiKey.objects.filter(workspace=workspace).order_by("-created_at", "-id"))


def organization_key_get(*, organization_id: str, key_id: str) -> ApiKey:
    """An organization key of the organization; 404 otherwise (another organization's key and a
    workspace key alike)."""
    api_key = ApiKey.objects.filter(pk=key_id, organization_id=organization_id).first()
    if api_key is None:
        raise NotFound("API key not found")
    return api_key


def organization_keys_page(*, organization_id: str, limit: int, after: str | None) -> CursorPage:
    """The organization's own keys (not its workspaces'), newest first, revoked and expired ones
    too; one query whatever the page size."""
    return newest_first_page(
        ApiKey.objects.filter(organization_id=organization_id),
        limit=limit,
        after=after,
        invalid="after must be a nextCursor returned by GET /organization-keys",
    )


def organization_workspaces(*, organization: Organization) -> list[Workspace]:
    """Every workspace of ``organization``, by name (each with the organization attached), deleted
    ones too until they are purged."""
    workspaces = list(Workspace.objects.filter(organization_id=organization.id).order_by("name", "id"))
    for workspace in workspaces:
        workspace.organization = organization
    return workspaces


def reachable_memberships(*, access: Access | OrganizationAccess) -> list[Membership]:
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


def _converted(model: Any, values: tuple[Any, ...]) -> tuple[Any, ...]:
    """The values of a raw row as the ORM would give them: each field's own conversion from the
    database applied (a JSON column arrives as its text)."""
    return tuple(
        field.from_db_value(value, None, connection) if hasattr(field, "from_db_value") else value
        for field, value in zip(model._meta.concrete_fields, values, strict=True)
    )


def _columns(model: type[ApiKey] | type[Workspace] | type[Organization], alias: str) -> tuple[list[str], str]:
    names = [f.attname for f in model._meta.concrete_fields]
    return names, ", ".join(f'{alias}."{f.column}"' for f in model._meta.concrete_fields)


_KEY_FIELDS, _KEY_SELECT = _columns(ApiKey, "k")
_WORKSPACE_FIELDS, _WORKSPACE_SELECT = _columns(Workspace, "w")
_ORGANIZATION_FIELDS, _ORGANIZATION_SELECT = _columns(Organization, "o")
# Written out rather than built by the ORM, whose query compilation cost more CPU than the rest
# of the lookup. The same rows as ``select_related("workspace__organization", "organization")
# .filter(lookup=…)``: the columns are the models' own, so that a field added to any is read too.
# An organization key has no workspace (its columns are NULL). Requests read it through
# ``workspaces.key_cache``.
_KEY_SQL = (
    f"SELECT {_KEY_SELECT}, {_WORKSPACE_SELECT}, {_ORGANIZATION_SELECT} FROM workspaces_apikey k "  # noqa: S608 (the models' columns; the lookup is a parameter)
    "LEFT JOIN workspaces_workspace w ON w.id = k.workspace_id "
    "JOIN workspaces_organization o ON o.id = COALESCE(k.organization_id, w.organization_id) "
    "WHERE k.lookup = %s"
)


def api_key_row(*, lookup: str) -> tuple[Any, ...] | None:
    """The API key of ``lookup`` joined with its workspace (if a workspace key) and its
    organization, as one row of the models' columns (immutable values, so a row may be kept and
    shared); None when there is none."""
    with connection.cursor() as cursor:
        cursor.execute(_KEY_SQL, [lookup])
        row: tuple[Any, ...] | None = cursor.fetchone()
    return row


def api_key_from_row(row: tuple[Any, ...]) -> ApiKey:
    """Fresh instances of a row of :func:`api_key_row`: the key, with its workspace (and that
    workspace's organization) or, for an organization key, its organization attached."""
    key_end = len(_KEY_FIELDS)
    workspace_end = key_end + len(_WORKSPACE_FIELDS)
    api_key = ApiKey.from_db(connection.alias, _KEY_FIELDS, row[:key_end])
    organization = Organization.from_db(connection.alias, _ORGANIZATION_FIELDS, row[workspace_end:])
    if api_key.is_organization_key:
        api_key.organization = organization
    else:
        workspace_values = _converted(Workspace, row[key_end:workspace_end])
        api_key.workspace = Workspace.from_db(connection.alias, _WORKSPACE_FIELDS, workspace_values)
        api_key.workspace.organization = organization
    return api_key
