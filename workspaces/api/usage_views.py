"""GET /usage: an organization key's ``usage.read``, or a workspace caller whose role holds it."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.query import UNKNOWN_PARAMETER, NoQuery, parse_query
from workspaces.access import Access, Scope
from workspaces.authentication import any_access_of
from workspaces.roles import Permission
from workspaces.usage import usage_report

_LIMIT_HELP = "null: no limit."


class _PlanRefOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The plan's id.")
    name = serializers.CharField(help_text="The plan's name (the one a 403 subscription_required names).")


class _PeriodOutput(serializers.Serializer):
    start = serializers.DateTimeField(help_text="The first instant of the current calendar month (UTC).")
    end = serializers.DateTimeField(help_text="The first instant of the next one: monthly counts start again.")


class _LimitsOutput(serializers.Serializer):
    workspaces = serializers.IntegerField(allow_null=True, help_text="Active workspaces. " + _LIMIT_HELP)
    connectedAccounts = serializers.IntegerField(
        allow_null=True, help_text="Connected accounts over every workspace. " + _LIMIT_HELP
    )
    postsPerMonth = serializers.IntegerField(allow_null=True, help_text="Posts created per month. " + _LIMIT_HELP)
    aiGenerationsPerMonth = serializers.IntegerField(
        allow_null=True, help_text="AI captions and images per month. " + _LIMIT_HELP
    )
    webhooksPerWorkspace = serializers.IntegerField(
        allow_null=True, help_text="Webhooks of one workspace. " + _LIMIT_HELP
    )


class _TotalsOutput(serializers.Serializer):
    workspaces = serializers.IntegerField(help_text="Active workspaces counted.")
    connectedAccounts = serializers.IntegerField(help_text="Connected accounts.")
    postsPerMonth = serializers.IntegerField(help_text="Posts created this month (deleted ones included).")
    aiGenerationsPerMonth = serializers.IntegerField(help_text="AI generations this month (failed ones are not).")


class _WorkspaceUsageOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The workspace's id.")
    name = serializers.CharField(help_text="Its name.")
    externalId = serializers.CharField(allow_null=True, help_text="The organization's own id of its customer.")
    connectedAccounts = serializers.IntegerField(help_text="Its connected accounts.")
    postsPerMonth = serializers.IntegerField(help_text="Posts created in it this month.")
    aiGenerationsPerMonth = serializers.IntegerField(help_text="AI generations in it this month.")
    webhooks = serializers.IntegerField(help_text="Its webhooks (the per-workspace limit applies to this).")


class UsageOutput(serializers.Serializer):
    organizationId = serializers.CharField(help_text="The organization.")
    plan = _PlanRefOutput(help_text="Its plan.")
    period = _PeriodOutput(help_text="The current period of the monthly limits.")
    limits = _LimitsOutput(help_text="The plan's limits.")
    usage = _TotalsOutput(help_text="The counts against them (for a workspace caller: its own workspace only).")
    workspaces = _WorkspaceUsageOutput(
        many=True, help_text="Per active workspace, by name (for a workspace caller: its own only)."
    )


class UsageView(APIView):
    access_scope = Scope.EITHER
    required_permissions = {"get": Permission.USAGE_READ}
    schema_tags = ["Organization"]

    @extend_schema(
        operation_id="getUsage",
        summary="What the organization uses of its plan this month",
        description="For an organization key holding `usage.read` (every workspace), or a caller in a workspace "
        "whose role holds `usage.read` (admin: its own workspace only). Monthly counts are of the current "
        "calendar month (UTC).",
        responses={200: UsageOutput, 400: UNKNOWN_PARAMETER},
    )
    def get(self, request: Request) -> Response:
        parse_query(request.query_params, NoQuery)
        access = any_access_of(request)
        if isinstance(access, Access):
            return Response(usage_report(organization=access.workspace.organization, workspace=access.workspace))
        return Response(usage_report(organization=access.organization))
