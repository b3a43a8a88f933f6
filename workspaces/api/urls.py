from django.urls import path, re_path

from workspaces.api.organization_key_views import OrganizationKeysView, OrganizationKeyView
from workspaces.api.organization_views import (
    WorkspaceDeletionView,
    WorkspaceDetailView,
    WorkspaceKeysView,
    WorkspaceKeyView,
    WorkspaceRestoreView,
)
from workspaces.api.usage_views import UsageView
from workspaces.api.views import MeView, WorkspaceListView

# Path segments never carry NUL or a slash (PostgreSQL text cannot hold NUL): such a path is no route.
ID = r"[^/\x00]+"

urlpatterns = [
    path("me", MeView.as_view()),
    path("workspaces", WorkspaceListView.as_view()),
    re_path(rf"^workspaces/(?P<id>{ID})$", WorkspaceDetailView.as_view()),
    re_path(rf"^workspaces/(?P<id>{ID})/restore$", WorkspaceRestoreView.as_view()),
    re_path(rf"^workspaces/(?P<id>{ID})/api-keys$", WorkspaceKeysView.as_view()),
    re_path(rf"^workspaces/(?P<id>{ID})/api-keys/(?P<keyId>{ID})$", WorkspaceKeyView.as_view()),
    re_path(rf"^workspace-deletions/(?P<id>{ID})$", WorkspaceDeletionView.as_view()),
    path("organization-keys", OrganizationKeysView.as_view()),
    re_path(rf"^organization-keys/(?P<id>{ID})$", OrganizationKeyView.as_view()),
    path("usage", UsageView.as_view()),
]
