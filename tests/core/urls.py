"""Test-only endpoints that exercise the shared machinery, mounted before the real ones."""

from __future__ import annotations

import time

from django.db import connection, transaction
from django.urls import include, path
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import Conflict
from core.fields import InstantField
from core.idempotency import idempotent
from core.query import parse_query
from core.redis import get_redis
from workspaces.permissions import ANY_VALID_KEY
from workspaces.roles import ALL_PERMISSIONS


class EchoQuery(serializers.Serializer):
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20)
    statuses = serializers.ListField(
        child=serializers.ChoiceField(choices=["DRAFT", "SCHEDULED"]), required=False, default=list
    )
    startDate = InstantField(required=False)


class EchoBody(serializers.Serializer):
    name = serializers.CharField(max_length=5)
    count = serializers.IntegerField(min_value=0)


class QueryView(APIView):
    required_permissions = {"get": ANY_VALID_KEY}

    def get(self, request: Request) -> Response:
        data = parse_query(request.query_params, EchoQuery, aliases={"status": "statuses"})
        if "startDate" in data:
            data["startDate"] = data["startDate"].isoformat()
        return Response(data)


class BodyView(APIView):
    required_permissions = {"post": ANY_VALID_KEY, "delete": ANY_VALID_KEY}

    @idempotent
    def post(self, request: Request) -> Response:
        serializer = EchoBody(data=request.data)
        serializer.is_valid(raise_exception=True)
        count = get_redis().incr("test:executions")
        if request.data.get("name") == "slow":
            time.sleep(1.0)
        return Response({"executions": count, **serializer.validated_data}, status=201)

    def delete(self, request: Request) -> Response:
        raise Conflict("It is busy")


class BoomView(APIView):
    required_permissions = {"get": ANY_VALID_KEY}

    def get(self, request: Request) -> Response:
        raise RuntimeError("secret internals: password=hunter2")


class BoomPostView(APIView):
    required_permissions = {"post": ANY_VALID_KEY}

    @idempotent
    def post(self, request: Request) -> Response:
        raise RuntimeError("unexpected")


class ManageView(APIView):
    required_permissions = {"get": "accounts.manage"}

    def get(self, request: Request) -> Response:
        return Response({"ok": True})


class OutOfRangeView(APIView):
    """A value validation let through and PostgreSQL refuses."""

    required_permissions = {"post": ANY_VALID_KEY}

    def post(self, request: Request) -> Response:
        with transaction.atomic(), connection.cursor() as cursor:  # as a service would
            cursor.execute("SELECT %s::smallint", [request.data.get("value")])
        return Response({"ok": True})


def _permission_probe(permission: str) -> type[APIView]:
    def get(self: APIView, request: Request) -> Response:
        return Response({"permission": permission})

    return type(f"Probe_{permission}", (APIView,), {"required_permissions": {"get": permission}, "get": get})


urlpatterns = [
    *[
        path(f"api/v1/_test/needs/{permission}", _permission_probe(permission).as_view())
        for permission in ALL_PERMISSIONS
    ],
    path("api/v1/_test/out-of-range", OutOfRangeView.as_view()),
    path("api/v1/_test/query", QueryView.as_view()),
    path("api/v1/_test/body", BodyView.as_view()),
    path("api/v1/_test/boom", BoomView.as_view()),
    path("api/v1/_test/boom-post", BoomPostView.as_view()),
    path("api/v1/_test/manage", ManageView.as_view()),
    path("", include("config.urls")),
]
