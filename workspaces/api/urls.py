from django.urls import path

from workspaces.api.views import MeView, WorkspaceListView

urlpatterns = [
    path("me", MeView.as_view()),
    path("workspaces", WorkspaceListView.as_view()),
]
