from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from core import serializers as strict
from core.fields import InstantField, choice
from core.pagination import LIMIT_HELP
from core.schema import MIN_PROPERTIES
from workspaces.roles import ORGANIZATION_PERMISSIONS, Role


class RoleOutput(serializers.Serializer):
    key = serializers.CharField(help_text="The role's key: admin, editor, contributor or viewer.")
    name = serializers.CharField(help_text="The role's display name.")


class CanOutput(serializers.Serializer):
    draft = serializers.BooleanField(help_text="The caller may create and change drafts.")
    schedule = serializers.BooleanField(help_text="The caller may schedule posts.")
    publish = serializers.BooleanField(help_text="The caller may publish now.")


class WorkspaceRefOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The workspace's id.")
    name = serializers.CharField(help_text="The workspace's name.")


class OrganizationRefOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The organization's id.")
    name = serializers.CharField(help_text="The organization's name.")


class MeOutput(serializers.Serializer):
    tokenType = serializers.ChoiceField(
        choices=["api_token", "oauth"], help_text="api_token (an API key) or oauth (a member's access token)."
    )
    tokenId = serializers.CharField(help_text="The key's or token's id.")
    tokenName = serializers.CharField(help_text="The key's name.")
    workspace = WorkspaceRefOutput(
        allow_null=True,
        help_text="The workspace this call acted in; null for an organization key (`cpo_…`) sent without "
        "X-Workspace-Id.",
    )
    organizationId = serializers.CharField(
        help_text="The organization of that workspace (for an organization key, the key's organization)."
    )
    organizationPermissions = serializers.ListField(
        child=serializers.CharField(),
        help_text="An organization key's own permissions (workspaces.manage, keys.manage, usage.read, "
        "audit.read); empty for any other key or token.",
    )
    role = RoleOutput(help_text="The caller's role there (an organization key's role in each of its workspaces).")
    issuerRole = serializers.CharField(
        allow_null=True,
        help_text="Role key of the member who created this API key (for an OAuth token, the member's own "
        "role); null when the key was made without a member",
    )
    permissions = serializers.ListField(child=serializers.CharField(), help_text="The permissions the role grants.")
    can = CanOutput(help_text="What the caller may do with posts.")
    summary = serializers.CharField(help_text="One sentence saying what this key may do, from its permissions")
    expiresAt = serializers.DateTimeField(allow_null=True, help_text="When the key or token expires, if ever.")


class WorkspaceItemOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The workspace's id (the X-Workspace-Id header takes it).")
    name = serializers.CharField(help_text="The workspace's name.")
    organization = OrganizationRefOutput(help_text="The organization the workspace belongs to.")
    role = RoleOutput(help_text="The caller's role there.")
    permissions = serializers.ListField(
        child=serializers.CharField(), help_text="The permissions the role grants there."
    )
    isDefault = serializers.BooleanField(
        help_text="Calls without X-Workspace-Id act here (never, for an organization key: it names one)."
    )
    current = serializers.BooleanField(help_text="This call acted here.")
    can = CanOutput(help_text="What the caller may do with posts there.")
    externalId = serializers.CharField(
        allow_null=True, help_text="The organization's own id of its customer (null when none was given)."
    )
    metadata = serializers.DictField(help_text="The organization's own small JSON object (empty when none).")
    createdAt = serializers.DateTimeField(help_text="When the workspace was created.")
    deletedAt = serializers.DateTimeField(
        allow_null=True,
        help_text="When its deletion was requested (listed for an organization key until it is purged; inactive "
        "until restored); null for an active workspace.",
    )


class WorkspaceListOutput(serializers.Serializer):
    workspaces = WorkspaceItemOutput(many=True, help_text="Every workspace the caller can reach.")


# --- workspaces through the API (organization keys) -------------------------------------------

METADATA_MAX_KEYS = 50
METADATA_KEY_MAX = 40
METADATA_VALUE_MAX = 500


@extend_schema_field(
    {
        "type": "object",
        "maxProperties": METADATA_MAX_KEYS,
        "additionalProperties": {
            "nullable": True,
            "oneOf": [{"type": "string", "maxLength": METADATA_VALUE_MAX}, {"type": "number"}, {"type": "boolean"}],
        },
        "description": f"Up to {METADATA_MAX_KEYS} keys of 1 to {METADATA_KEY_MAX} characters, each a string (at most "
        f"{METADATA_VALUE_MAX} characters), a number, a boolean or null: the organization's own data, kept as "
        "given and answered back; never read by the service.",
    }
)
class MetadataField(serializers.JSONField):
    """A bounded flat JSON object (as payment APIs keep ``metadata``); any other JSON is a 400."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise serializers.ValidationError("must be a JSON object")
        if len(data) > METADATA_MAX_KEYS:
            raise serializers.ValidationError(f"must have at most {METADATA_MAX_KEYS} keys")
        for key, value in data.items():
            if not 1 <= len(key) <= METADATA_KEY_MAX:
                raise serializers.ValidationError(f"keys must be 1 to {METADATA_KEY_MAX} characters")
            if isinstance(value, str):
                if len(value) > METADATA_VALUE_MAX:
                    raise serializers.ValidationError(f"{key}: at most {METADATA_VALUE_MAX} characters")
            elif value is not None and not isinstance(value, bool | int | float):
                raise serializers.ValidationError(f"{key}: must be a string, a number, a boolean or null")
        return dict(data)

    def to_representation(self, value: Any) -> Any:
        return value


def _external_id_field(**kwargs: Any) -> serializers.CharField:
    return serializers.CharField(
        max_length=200,
        allow_null=True,
        help_text="The organization's own id of its customer (e.g. `acme-42`); unique in the organization "
        "(409 `conflict` otherwise); null: none.",
        **kwargs,
    )


class WorkspaceCreateInput(strict.Serializer):
    name = serializers.CharField(max_length=200, help_text="Unique in the organization (409 `conflict` otherwise).")
    externalId = _external_id_field(required=False, default=None)
    metadata = MetadataField(required=False, default=dict)


@extend_schema_serializer(extensions={MIN_PROPERTIES: 1})
class WorkspaceUpdateInput(strict.Serializer):
    name = serializers.CharField(
        max_length=200, required=False, help_text="Unique in the organization (409 `conflict` otherwise)."
    )
    externalId = _external_id_field(required=False)
    metadata = MetadataField(required=False, help_text="Replaces the whole object.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs:
            raise serializers.ValidationError("name, externalId or metadata: give at least one")
        return attrs


class WorkspaceDeletionOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The deletion job's id.")
    workspaceId = serializers.CharField(help_text="The workspace being deleted.")
    status = choice(
        ["pending", "deactivated", "restored", "purged"],
        help_text="pending (its accounts, scheduled posts and series not yet handled), deactivated (accounts "
        "disconnected, scheduled posts back to drafts, series paused; restorable until purgeAfter), restored, "
        "or purged (its data removed).",
    )
    statusUrl = serializers.CharField(help_text="This job's status: GET it until `status` is deactivated.")
    requestedAt = serializers.DateTimeField(help_text="When the deletion was requested.")
    deactivatedAt = serializers.DateTimeField(allow_null=True, help_text="When step one finished.")
    purgeAfter = serializers.DateTimeField(
        help_text="The end of the grace period: restorable until then (POST /workspaces/{id}/restore), removed after."
    )
    restoredAt = serializers.DateTimeField(allow_null=True, help_text="When the workspace was restored.")
    purgedAt = serializers.DateTimeField(allow_null=True, help_text="When its data was removed.")
    accountsDisconnected = serializers.IntegerField(help_text="Accounts disconnected by step one.")
    postsCancelled = serializers.IntegerField(help_text="Scheduled posts turned back into undated drafts.")
    seriesStopped = serializers.IntegerField(help_text="Recurring series paused.")


class WorkspaceOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The workspace's id (the X-Workspace-Id header takes it).")
    name = serializers.CharField(help_text="The workspace's name.")
    externalId = serializers.CharField(allow_null=True, help_text="The organization's own id of its customer.")
    metadata = serializers.DictField(help_text="The organization's own small JSON object.")
    organization = OrganizationRefOutput(help_text="The organization the workspace belongs to.")
    createdAt = serializers.DateTimeField(help_text="When the workspace was created.")
    updatedAt = serializers.DateTimeField(help_text="When it was last changed.")
    deletedAt = serializers.DateTimeField(
        allow_null=True, help_text="When its deletion was requested (inactive until restored); null when active."
    )
    deletion = WorkspaceDeletionOutput(
        allow_null=True, help_text="Its open deletion job (pending or deactivated), or null."
    )


# --- workspace keys through the API -------------------------------------------------------------


class ApiKeyCreateInput(strict.Serializer):
    name = serializers.CharField(max_length=200, help_text="A name to tell the key by.")
    role = choice(list(Role.values), help_text="Its role in the workspace (at most the calling key's own).")
    expiresAt = InstantField(
        required=False, allow_null=True, default=None, help_text="When it stops working (in the future); null: never."
    )


class ApiKeyOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The key's id (DELETE …/api-keys/{keyId} takes it).")
    name = serializers.CharField(help_text="Its name.")
    publicPart = serializers.CharField(help_text="The key's start, `cpk_<lookup>`, to recognise it by (no secret).")
    workspaceId = serializers.CharField(help_text="The workspace it acts in.")
    role = serializers.CharField(help_text="Its role key: admin, editor, contributor or viewer.")
    status = choice(["active", "expired", "revoked"], help_text="Whether it works now.")
    createdAt = serializers.DateTimeField(help_text="When it was created.")
    expiresAt = serializers.DateTimeField(allow_null=True, help_text="When it stops working; null: never.")
    lastUsedAt = serializers.DateTimeField(allow_null=True, help_text="Its last use (to the minute); null: never.")
    revokedAt = serializers.DateTimeField(allow_null=True, help_text="When it was revoked; null: not revoked.")


class ApiKeyCreatedOutput(ApiKeyOutput):
    key = serializers.CharField(
        help_text="The whole key, `cpk_<lookup>_<secret>`: shown only in this answer (and to a retry with the "
        "same Idempotency-Key within 24 hours, kept encrypted until then); only its hash is stored."
    )


class ApiKeyListOutput(serializers.Serializer):
    apiKeys = ApiKeyOutput(many=True, help_text="The workspace's keys, newest first, revoked and expired ones too.")


# --- organization keys through the API -----------------------------------------------------------


class OrganizationKeyCreateInput(strict.Serializer):
    name = serializers.CharField(max_length=200, help_text="A name to tell the key by.")
    role = choice(
        list(Role.values),
        help_text="Its role in each workspace of the organization it names in X-Workspace-Id (at most the "
        "calling key's own).",
    )
    permissions = serializers.ListField(
        child=choice(list(ORGANIZATION_PERMISSIONS)),
        max_length=len(ORGANIZATION_PERMISSIONS),
        help_text="Its organization permissions (" + ", ".join(ORGANIZATION_PERMISSIONS) + "), no repeats, each held "
        "by the calling key; `[]`: none (it acts in workspaces with its role only).",
    )
    expiresAt = InstantField(
        required=False, allow_null=True, default=None, help_text="When it stops working (in the future); null: never."
    )

    def validate_permissions(self, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise serializers.ValidationError("no repeats")
        return value


class OrganizationKeyListQuery(strict.QuerySerializer):
    after = serializers.RegexField(
        r"^[A-Za-z0-9_-]{1,200}$",
        required=False,
        help_text="A `nextCursor` from an earlier page, passed back as it is: the (older) keys after it.",
        error_messages={"invalid": "must be a nextCursor returned by GET /organization-keys"},
    )
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20, help_text=LIMIT_HELP)


class OrganizationKeyOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The key's id (GET and DELETE /organization-keys/{id} take it).")
    name = serializers.CharField(help_text="Its name.")
    publicPart = serializers.CharField(help_text="The key's start, `cpo_<lookup>`, to recognise it by (no secret).")
    organizationId = serializers.CharField(help_text="The organization it belongs to.")
    role = serializers.CharField(help_text="Its role key in the workspaces: admin, editor, contributor or viewer.")
    permissions = serializers.ListField(
        child=serializers.CharField(),
        help_text="Its organization permissions, in the order " + ", ".join(ORGANIZATION_PERMISSIONS) + ".",
    )
    status = choice(["active", "expired", "revoked"], help_text="Whether it works now.")
    createdAt = serializers.DateTimeField(help_text="When it was created.")
    expiresAt = serializers.DateTimeField(allow_null=True, help_text="When it stops working; null: never.")
    lastUsedAt = serializers.DateTimeField(allow_null=True, help_text="Its last use (to the minute); null: never.")
    revokedAt = serializers.DateTimeField(allow_null=True, help_text="When it was revoked; null: not revoked.")


class OrganizationKeyCreatedOutput(OrganizationKeyOutput):
    key = serializers.CharField(
        help_text="The whole key, `cpo_<lookup>_<secret>`: shown only in this answer (and to a retry with the "
        "same Idempotency-Key within 24 hours, kept encrypted until then); only its hash is stored."
    )


class OrganizationKeyListOutput(serializers.Serializer):
    organizationKeys = OrganizationKeyOutput(
        many=True, help_text="The organization's own keys, newest first, revoked and expired ones too."
    )
    nextCursor = serializers.CharField(
        allow_null=True, help_text="Pass back as `after` for the next (older) page; null when there is none."
    )
    hasMore = serializers.BooleanField(help_text="true while older keys follow this page.")
