from __future__ import annotations

from rest_framework import serializers


class RoleOutput(serializers.Serializer):
    key = serializers.CharField()
    name = serializers.CharField()


class CanOutput(serializers.Serializer):
    draft = serializers.BooleanField()
    schedule = serializers.BooleanField()
    publish = serializers.BooleanField()


class WorkspaceRefOutput(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()


class MeOutput(serializers.Serializer):
    tokenType = serializers.ChoiceField(choices=["api_token", "oauth"])
    tokenId = serializers.CharField()
    tokenName = serializers.CharField()
    workspace = WorkspaceRefOutput()
    role = RoleOutput()
    issuerRole = serializers.CharField(
        allow_null=True,
        help_text="Role key of the member who created this API key (for an OAuth token, the member's own "
        "role); null when the key was made without a member",
    )
    permissions = serializers.ListField(child=serializers.CharField())
    can = CanOutput()
    summary = serializers.CharField(help_text="One sentence saying what this key may do, from its permissions")
    expiresAt = serializers.DateTimeField(allow_null=True)


class WorkspaceItemOutput(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    role = RoleOutput()
    permissions = serializers.ListField(child=serializers.CharField())
    isDefault = serializers.BooleanField()
    current = serializers.BooleanField()
    can = CanOutput()


class WorkspaceListOutput(serializers.Serializer):
    workspaces = WorkspaceItemOutput(many=True)
