"""Writes for workspaces, memberships and API keys."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
import string
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from core.errors import NotFound
from workspaces import key_cache
from workspaces.models import ApiKey, Workspace
from workspaces.roles import Role

KEY_PREFIX = "cpk"
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


def workspace_get_or_create(*, name: str) -> Workspace:
    workspace, _ = Workspace.objects.get_or_create(name=name)
    return workspace


@transaction.atomic
def api_key_create(
    *,
    workspace: Workspace,
    name: str,
    role: str,
    created_by_id: int | None = None,
    expires_at: dt.datetime | None = None,
    rate_limit: int | None = None,
) -> IssuedKey:
    """Create a key. The plaintext is returned once and never stored; only its hash is."""
    if role not in Role.values:
        raise ValueError(f"unknown role {role!r}")
    lookup = secrets.token_hex(8)
    secret = "".join(secrets.choice(SECRET_ALPHABET) for _ in range(SECRET_LENGTH))
    api_key = ApiKey.objects.create(
        workspace=workspace,
        name=name,
        role=role,
        lookup=lookup,
        secret_hash=hash_secret(secret),
        created_by_id=created_by_id,
        expires_at=expires_at,
        rate_limit=rate_limit,
    )
    return IssuedKey(api_key=api_key, plaintext=f"{KEY_PREFIX}_{lookup}_{secret}")


# ``cpk_`` + 16 hex digits of lookup, then ``_`` + the secret (absent in the public part). Keys
# issued before secrets were letters and digits only have URL-safe ones (``_`` and ``-`` too): they
# keep working.
_KEY_SHAPE = re.compile(rf"^{KEY_PREFIX}_(?P<lookup>[0-9a-f]{{16}})(?:_(?P<secret>[A-Za-z0-9_-]{{1,200}}))?$")


def split_key(raw: str) -> tuple[str, str] | None:
    """``cpk_<lookup>_<secret>`` → (lookup, secret); also accepts the public part alone
    (secret empty). None when the text is not shaped like a key (so nothing else, such as a NUL
    byte PostgreSQL would refuse, ever reaches a query)."""
    match = _KEY_SHAPE.match(raw.strip())
    if match is None:
        return None
    return match["lookup"], match["secret"] or ""


def api_key_revoke(*, key_or_public_part: str) -> ApiKey:
    """Revoke by the whole key or its public part. Idempotent: a second revoke keeps the first time."""
    parsed = split_key(key_or_public_part)
    api_key = ApiKey.objects.filter(lookup=parsed[0]).first() if parsed else None
    if api_key is None:
        raise NotFound("API key not found")
    if api_key.revoked_at is None:
        ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
        api_key.refresh_from_db(fields=["revoked_at"])
    key_cache.keys_changed()  # again on a repeat: one made while Redis was down may not have reached it
    return api_key


def api_keys_revoke(*, ids: list[str]) -> int:
    """Revoke the given keys (staff bulk action); already revoked ones keep their first time.
    Returns how many were revoked by this call."""
    revoked = ApiKey.objects.filter(pk__in=ids, revoked_at__isnull=True).update(revoked_at=timezone.now())
    key_cache.keys_changed()
    return revoked
