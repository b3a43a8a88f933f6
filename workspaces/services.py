"""Writes for organizations, workspaces, memberships and API keys (of a workspace or of an
organization: one way of minting, hashing and revoking for both)."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
import string
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from audit.actors import Actor, system_actor
from audit.services import record
from core.errors import Conflict, NotFound, PermissionDenied
from workspaces import key_cache
from workspaces.models import ORGANIZATION_KEY_PREFIX, WORKSPACE_KEY_PREFIX, ApiKey, Organization, Workspace
from workspaces.roles import ORGANIZATION_PERMISSIONS, ROLE_PERMISSIONS, OrganizationPermission, Role, permissions_of

# Whoever calls a service without saying who acts (tests, seeding): still recorded, as the system.
UNNAMED_CALLER = "service call"

KEY_PREFIX = WORKSPACE_KEY_PREFIX
# A new secret is letters and digits only: a key is redacted (by our CLI, and by tools that keep
# "everything up to the last separator") at its last ``_`` or ``-``, which must be the one before
# the secret. 43 characters of 62 are ~256 bits, as ``token_urlsafe(32)`` gave.
SECRET_ALPHABET = string.ascii_letters + string.digits
SECRET_LENGTH = 43


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    plaintext: str


def organization_get_or_create(*, name: str) -> Organization:
    organization, _ = Organization.objects.get_or_create(name=name)
    return organization


class AmbiguousWorkspaceName(ValueError):
    """More than one organization has a workspace of the name: the caller must say which."""

    def __init__(self, name: str, workspaces: list[Workspace]) -> None:
        self.workspaces = workspaces
        where = ", ".join(f"{w.id} in {w.organization.name!r}" for w in workspaces)
        super().__init__(f"{len(workspaces)} workspaces are named {name!r} ({where}): name the organization or the id")


def workspace_named(name: str, *, organization: Organization | None = None) -> Workspace | None:
    """The workspace of ``name`` (its id is taken too), in ``organization`` when given. Names are
    unique per organization only, so without one a name that two organizations use raises
    :class:`AmbiguousWorkspaceName` rather than picking one."""
    found = Workspace.objects.select_related("organization").filter(Q(name=name) | Q(id=name))
    if organization is not None:
        found = found.filter(organization=organization)
    matches = list(found.order_by("created_at", "id")[:10])
    by_id = [w for w in matches if w.id == name]
    if by_id:
        return by_id[0]
    if len(matches) > 1:
        raise AmbiguousWorkspaceName(name, matches)
    return matches[0] if matches else None


@transaction.atomic
def workspace_get_or_create(
    *, name: str, organization: Organization | None = None, actor: Actor | None = None
) -> Workspace:
    """The workspace of ``name`` (:func:`workspace_named`: in ``organization`` when given); created
    when missing (and recorded in the audit log), in ``organization`` or else in an organization of
    its own of the same name (as the migration gave every older workspace)."""
    found = workspace_named(name, organization=organization)
    if found is not None:
        return found
    if organization is None:
        organization = organization_get_or_create(name=name)
    workspace, created = Workspace.objects.get_or_create(organization=organization, name=name)
    if created:
        record(
            actor=actor or system_actor(UNNAMED_CALLER),
            action="workspace.create",
            organization_id=organization.id,
            workspace_id=workspace.id,
            target_type="workspace",
            target_id=workspace.id,
            changes={"name": name},
        )
    return workspace


def key_audit_changes(api_key: ApiKey) -> dict[str, object]:
    """What the audit log keeps of a key: never its secret nor its hash."""
    return {
        "name": api_key.name,
        "publicPart": api_key.public_part,
        "role": api_key.role,
        "organizationPermissions": list(api_key.organization_permissions),
        "expiresAt": api_key.expires_at.isoformat() if api_key.expires_at else None,
        "rateLimit": api_key.rate_limit,
    }


def _organization_id_of(api_key: ApiKey) -> str:
    if api_key.organization_id is not None:
        return str(api_key.organization_id)
    return str(Workspace.objects.filter(pk=api_key.workspace_id).values_list("organization_id", flat=True).get())


def record_key_change(*, api_key: ApiKey, action: str, actor: Actor | None) -> None:
    """An audit event of ``api_key`` (create, update, revoke) in the caller's transaction."""
    record(
        actor=actor or system_actor(UNNAMED_CALLER),
        action=action,
        organization_id=_organization_id_of(api_key),
        workspace_id=api_key.workspace_id,
        target_type="api_key",
        target_id=api_key.id,
        changes=key_audit_changes(api_key),
    )


def _mint(*, actor: Actor | None, **row: object) -> IssuedKey:
    """The one place a key's secret is made and hashed, for either kind of key; recorded in the
    audit log in the same transaction."""
    lookup = secrets.token_hex(8)
    secret = "".join(secrets.choice(SECRET_ALPHABET) for _ in range(SECRET_LENGTH))
    api_key = ApiKey.objects.create(lookup=lookup, secret_hash=hash_secret(secret), **row)
    record_key_change(api_key=api_key, action="api_key.create", actor=actor)
    return IssuedKey(api_key=api_key, plaintext=f"{api_key.public_part}_{secret}")


@transaction.atomic
def api_key_create(
    *,
    workspace: Workspace,
    name: str,
    role: str,
    created_by_id: int | None = None,
    expires_at: dt.datetime | None = None,
    rate_limit: int | None = None,
    actor: Actor | None = None,
) -> IssuedKey:
    """Create a workspace key (``cpk_``). The plaintext is returned once and never stored; only
    its hash is. Recorded in the audit log (``actor``: who made it; none given, the system)."""
    if role not in Role.values:
        raise ValueError(f"unknown role {role!r}")
    return _mint(
        actor=actor,
        workspace=workspace,
        name=name,
        role=role,
        created_by_id=created_by_id,
        expires_at=expires_at,
        rate_limit=rate_limit,
    )


@transaction.atomic
def organization_key_create(
    *,
    organization: Organization,
    name: str,
    role: str,
    permissions: list[str],
    issued_by: ApiKey | None = None,
    created_by_id: int | None = None,
    expires_at: dt.datetime | None = None,
    rate_limit: int | None = None,
    actor: Actor | None = None,
) -> IssuedKey:
    """Create an organization key (``cpo_``): it acts in any workspace of ``organization`` with
    ``role`` and holds ``permissions`` (organization permissions) there. Made by staff
    (``issued_by`` None) or by another key of the same organization holding ``keys.manage``,
    which cannot grant a permission it lacks itself (403 ``permission_denied`` otherwise). The
    plaintext is returned once and never stored; only its hash is, as for workspace keys."""
    if role not in Role.values:
        raise ValueError(f"unknown role {role!r}")
    unknown = sorted(set(permissions) - set(ORGANIZATION_PERMISSIONS))
    if unknown:
        raise ValueError(f"unknown organization permissions {unknown!r}")
    if issued_by is not None:
        _require_issuer(issued_by, organization=organization, permissions=permissions)
        created_by_id = issued_by.created_by_id
    return _mint(
        actor=actor,
        organization=organization,
        name=name,
        role=role,
        organization_permissions=[p for p in ORGANIZATION_PERMISSIONS if p in permissions],
        created_by_id=created_by_id,
        expires_at=expires_at,
        rate_limit=rate_limit,
    )


def _require_issuer(issuer: ApiKey, *, organization: Organization, permissions: list[str]) -> None:
    if issuer.organization_id != organization.id:
        raise NotFound("Organization not found")
    held = set(issuer.organization_permissions)
    missing = [OrganizationPermission.KEYS_MANAGE, *permissions]
    for permission in missing:
        if permission not in held:
            raise PermissionDenied(
                f"This operation requires the {permission} permission",
                extra={"requiredPermission": permission, "role": issuer.role, "tokenType": "api_token"},
            )


# ``cpk_`` (or ``cpo_``) + 16 hex digits of lookup, then ``_`` + the secret (absent in the public
# part). Keys issued before secrets were letters and digits only have URL-safe ones (``_`` and
# ``-`` too): they keep working. The lookup alone finds the row; the caller checks the prefix is
# that row's (``ApiKey.public_part``).
KEY_PREFIXES = (WORKSPACE_KEY_PREFIX, ORGANIZATION_KEY_PREFIX)
_KEY_SHAPE = re.compile(
    rf"^(?:{'|'.join(KEY_PREFIXES)})_(?P<lookup>[0-9a-f]{{16}})(?:_(?P<secret>[A-Za-z0-9_-]{{1,200}}))?$"
)


def split_key(raw: str) -> tuple[str, str] | None:
    """``cpk_<lookup>_<secret>`` or ``cpo_<lookup>_<secret>`` → (lookup, secret); also accepts
    the public part alone (secret empty). None when the text is not shaped like a key (so nothing
    else, such as a NUL byte PostgreSQL would refuse, ever reaches a query)."""
    match = _KEY_SHAPE.match(raw.strip())
    if match is None:
        return None
    return match["lookup"], match["secret"] or ""


@transaction.atomic
def _revoke(api_key: ApiKey, *, actor: Actor | None) -> ApiKey:
    """Revoke one key (recorded once, by the call that revoked it); a second revoke keeps the first
    time. Every process stops accepting it at once (``key_cache.keys_changed``)."""
    if ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now()):
        api_key.refresh_from_db(fields=["revoked_at"])
        record_key_change(api_key=api_key, action="api_key.revoke", actor=actor)
    else:
        api_key.refresh_from_db(fields=["revoked_at"])
    key_cache.keys_changed()  # again on a repeat: one made while Redis was down may not have reached it
    return api_key


def api_key_revoke(*, key_or_public_part: str, actor: Actor | None = None) -> ApiKey:
    """Revoke by the whole key or its public part. Idempotent: a second revoke keeps the first time."""
    parsed = split_key(key_or_public_part)
    api_key = ApiKey.objects.filter(lookup=parsed[0]).first() if parsed else None
    if api_key is None:
        raise NotFound("API key not found")
    return _revoke(api_key, actor=actor)


def api_keys_revoke(*, ids: list[str], actor: Actor | None = None) -> int:
    """Revoke the given keys (staff bulk action); already revoked ones keep their first time.
    Returns how many were revoked by this call."""
    revoked = 0
    with transaction.atomic():
        for api_key in ApiKey.objects.filter(pk__in=ids, revoked_at__isnull=True).order_by("pk"):
            if ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now()):
                api_key.refresh_from_db(fields=["revoked_at"])
                record_key_change(api_key=api_key, action="api_key.revoke", actor=actor)
                revoked += 1
        key_cache.keys_changed()
    return revoked


# --- workspace keys through the API (an organization key holding keys.manage) ----------------


def _require_role_within(*, role: str, issuer: ApiKey) -> None:
    """A key never grants more than its issuer holds: the new key's role may not have a
    permission the issuing organization key's role lacks (403 naming the first one)."""
    held = ROLE_PERMISSIONS[issuer.role]
    for permission in permissions_of(role):
        if permission not in held:
            raise PermissionDenied(
                f"A key with the {issuer.role} role cannot create a key with the {role} role",
                extra={"requiredPermission": permission, "role": issuer.role, "tokenType": "api_token"},
            )


@transaction.atomic
def workspace_key_issue(
    *,
    workspace: Workspace,
    issuer: ApiKey,
    name: str,
    role: str,
    expires_at: dt.datetime | None,
    actor: Actor,
) -> IssuedKey:
    """A workspace key of ``workspace`` made by the organization key ``issuer`` (``keys.manage``,
    checked by the view), with a role within the issuer's own (403 otherwise). The plaintext is
    returned once; only its hash is stored, and the audit event is written with it."""
    _require_role_within(role=role, issuer=issuer)
    return api_key_create(
        workspace=workspace,
        name=name,
        role=role,
        created_by_id=issuer.created_by_id,
        expires_at=expires_at,
        actor=actor,
    )


def workspace_key_revoke(*, workspace: Workspace, key_id: str, actor: Actor) -> ApiKey:
    """Revoke a key of ``workspace`` (404 when it is not one of its keys). Idempotent."""
    api_key = ApiKey.objects.filter(pk=key_id, workspace=workspace).first()
    if api_key is None:
        raise NotFound("API key not found")
    return _revoke(api_key, actor=actor)


# --- organization keys through the API (an organization key holding keys.manage) -------------


@transaction.atomic
def organization_key_issue(
    *,
    organization: Organization,
    issuer: ApiKey,
    name: str,
    role: str,
    permissions: list[str],
    expires_at: dt.datetime | None,
    actor: Actor,
) -> IssuedKey:
    """An organization key of ``organization`` made by its key ``issuer`` (``keys.manage``, checked
    by the view), holding no more than the issuer does: its role within the issuer's role and its
    organization permissions among the issuer's (403 ``permission_denied`` naming the first one it
    would add, as for workspace keys). The plaintext is returned once; only its hash is stored,
    and the audit event is written with it."""
    _require_role_within(role=role, issuer=issuer)
    return organization_key_create(
        organization=organization,
        name=name,
        role=role,
        permissions=permissions,
        issued_by=issuer,
        expires_at=expires_at,
        actor=actor,
    )


def _manages_keys(*, organization_id: str, now: dt.datetime) -> QuerySet[ApiKey]:
    """The organization's keys that can manage keys now: not revoked, not expired, ``keys.manage``."""
    return ApiKey.objects.filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=now),
        organization_id=organization_id,
        revoked_at__isnull=True,
        organization_permissions__contains=[OrganizationPermission.KEYS_MANAGE],
    )


@transaction.atomic
def organization_key_revoke(*, organization: Organization, key_id: str, actor: Actor) -> ApiKey:
    """Revoke an organization key of ``organization`` (404 for any other id: another
    organization's key, a workspace key). Idempotent: a revoked key is answered again with its
    first revocation time. Refused with 409 ``last_key_manager`` when it is the organization's
    last working key holding ``keys.manage`` (a key revoking itself, in practice), so that the
    organization never locks itself out of its keys; staff revocations (admin, ``manage.py``) are
    not refused. The organization's row is locked first, so that two such keys revoking
    themselves at once cannot both succeed. Every process refuses the key from the next request."""
    Organization.objects.select_for_update().filter(pk=organization.id).values_list("pk", flat=True).get()
    api_key = ApiKey.objects.filter(pk=key_id, organization_id=organization.id).first()
    if api_key is None:
        raise NotFound("API key not found")
    managers = _manages_keys(organization_id=organization.id, now=timezone.now())
    if managers.filter(pk=api_key.pk).exists() and not managers.exclude(pk=api_key.pk).exists():
        raise Conflict(
            f"This is the organization's last working key holding {OrganizationPermission.KEYS_MANAGE}: mint "
            "another one first, or ask staff to revoke it",
            code="last_key_manager",
        )
    return _revoke(api_key, actor=actor)
