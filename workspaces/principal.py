"""Who is calling: an API key or a member's OAuth access token, resolved once per request."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
from dataclasses import dataclass, field

from django.conf import settings
from django.utils import timezone
from oauth2_provider.models import get_access_token_model

from workspaces import key_cache
from workspaces.models import ApiKey, Membership
from workspaces.services import KEY_PREFIXES, hash_secret, split_key

LAST_USED_RESOLUTION = dt.timedelta(seconds=60)


@dataclass(frozen=True)
class Principal:
    token_type: str  # "api_token" | "oauth"
    token_id: str
    token_name: str
    rate_key: str
    rate_limit: int
    expires_at: dt.datetime | None
    api_key: ApiKey | None = None
    user_id: int | None = None
    memberships: tuple[Membership, ...] = field(default=())

    is_authenticated = True


def _bearer_token(header: str) -> str | None:
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer":
        return None
    token = token.strip()
    return token or None


def _from_api_key(token: str) -> Principal | None:
    parsed = split_key(token)
    if parsed is None or not parsed[1]:
        return None
    lookup, secret = parsed
    api_key = key_cache.api_key_by_lookup(lookup)
    if api_key is None or not hmac.compare_digest(api_key.secret_hash, hash_secret(secret)):
        return None
    if not token.startswith(f"{api_key.public_part}_"):
        return None  # a workspace key's lookup under the organization prefix, or the reverse
    now = timezone.now()
    if api_key.revoked_at is not None or (api_key.expires_at is not None and api_key.expires_at <= now):
        return None
    if api_key.last_used_at is None or now - api_key.last_used_at > LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        key_cache.used(lookup, now)
    return Principal(
        token_type="api_token",
        token_id=api_key.id,
        token_name=api_key.name,
        rate_key=f"key:{api_key.id}",
        rate_limit=api_key.rate_limit or settings.RATE_LIMIT_DEFAULT,
        expires_at=api_key.expires_at,
        api_key=api_key,
    )


def _from_oauth(token: str) -> Principal | None:
    access_token_model = get_access_token_model()
    checksum = hashlib.sha256(token.encode()).hexdigest()
    access = access_token_model.objects.select_related("user").filter(token_checksum=checksum).first()
    if access is None or access.user is None or not access.is_valid() or not access.user.is_active:
        return None
    memberships = tuple(Membership.objects.select_related("workspace__organization").filter(user_id=access.user_id))
    return Principal(
        token_type="oauth",
        token_id=str(access.id),
        token_name=f"OAuth sign-in of {access.user.get_username()}",
        rate_key=f"oauth:{access.id}",
        rate_limit=settings.RATE_LIMIT_DEFAULT,
        expires_at=access.expires,
        user_id=access.user_id,
        memberships=memberships,
    )


def resolve_principal(authorization: str) -> Principal | None:
    token = _bearer_token(authorization)
    if token is None or len(token) > 512:
        return None
    if token.startswith(tuple(f"{prefix}_" for prefix in KEY_PREFIXES)):
        return _from_api_key(token)
    return _from_oauth(token)
