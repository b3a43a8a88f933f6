from __future__ import annotations

from rest_framework import serializers


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


class WorkspaceListOutput(serializers.Serializer):
    workspaces = WorkspaceItemOutput(many=True, help_text="Every workspace the caller can reach.")
