"""A test-only organization endpoint (none is public yet), mounted before the real ones: the
access rules of ``Scope.ORGANIZATION`` are checked through it."""

from __future__ import annotations

from django.urls import include, path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from workspaces.access import Scope
from workspaces.authentication import organization_access_of
from workspaces.roles import OrganizationPermission


class OrganizationProbe(APIView):
    access_scope = Scope.ORGANIZATION
    required_permissions = {"get": OrganizationPermission.USAGE_READ}

    def get(self, request: Request) -> Response:
        access = organization_access_of(request)
        return Response({"organizationId": access.organization.id, "permissions": sorted(access.permissions)})


urlpatterns = [
    path("api/v1/_test/organization", OrganizationProbe.as_view()),
    path("", include("config.urls")),
]
