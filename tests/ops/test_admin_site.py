"""The admin as staff first meet it (issue 30): "View site" leads somewhere, the OAuth toolkit's
pages sit apart from the product's, derived records and posts offer nothing to add or save, and
the dashboard's workspace is chosen by name. Staff users here hold only the permissions named."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Permission
from django.db.models import Q

from posts.models import PostStatus, TargetStatus
from tests.factories import WorkspaceFactory
from tests.factories.analytics import TrackedPostFactory
from tests.factories.posts import PostFactory, PostTargetFactory

pytestmark = pytest.mark.django_db


def staff_with(django_user_model: Any, client: Any, *perms: str) -> Any:
    """``client`` signed in as a staff user holding exactly ``perms`` ("app_label.codename")."""
    user = django_user_model.objects.create_user("support", password="pw-123456789", is_staff=True)
    wanted = Q(pk__in=[])
    for perm in perms:
        app_label, codename = perm.split(".")
        wanted |= Q(content_type__app_label=app_label, codename=codename)
    granted = list(Permission.objects.filter(wanted))
    assert len(granted) == len(perms), perms
    user.user_permissions.add(*granted)
    client.force_login(user)
    return client


def every_perm(*app_labels: str) -> list[str]:
    rows = Permission.objects.filter(content_type__app_label__in=app_labels).select_related("content_type")
    return [f"{row.content_type.app_label}.{row.codename}" for row in rows]


def test_view_site_leads_to_the_api_reference(client: Any, django_user_model: Any) -> None:
    staff = staff_with(django_user_model, client, "workspaces.view_workspace")
    index = staff.get("/admin/").content.decode()
    assert '<a href="/api/v1/docs/">View site</a>' in index
    assert staff.get("/api/v1/docs/").status_code == 200


def test_the_oauth_toolkit_sits_apart_after_the_products_sections(client: Any, django_user_model: Any) -> None:
    staff = staff_with(django_user_model, client, *every_perm("oauth2_provider", "posts", "workspaces", "axes"))
    sections = [(app["app_label"], app["name"]) for app in staff.get("/admin/").context["app_list"]]
    assert sections == [
        ("posts", "Posts"),
        ("workspaces", "Workspaces"),
        ("axes", "Admin login lockouts (django-axes)"),
        ("oauth2_provider", "OAuth sign-in (django-oauth-toolkit)"),
    ]
    oauth = next(app for app in staff.get("/admin/").context["app_list"] if app["app_label"] == "oauth2_provider")
    assert [model["object_name"] for model in oauth["models"]] == ["AccessToken", "Application", "RefreshToken"]
    # Staff still register OAuth clients; codes and ID tokens have no pages.
    assert staff.get("/admin/oauth2_provider/application/add/").status_code == 200
    assert staff.get("/admin/oauth2_provider/grant/").status_code == 404
    assert staff.get("/admin/oauth2_provider/idtoken/").status_code == 404


def test_derived_analytics_records_offer_no_add_and_no_save(client: Any, django_user_model: Any) -> None:
    tracked = TrackedPostFactory()
    staff = staff_with(django_user_model, client, *every_perm("analytics"))
    analytics = next(app for app in staff.get("/admin/").context["app_list"] if app["app_label"] == "analytics")
    assert {model["object_name"]: model["add_url"] for model in analytics["models"]} == {
        "AccountSyncState": None,
        "TrackedPost": None,
    }
    assert staff.get("/admin/analytics/trackedpost/add/").status_code == 403
    assert staff.get("/admin/analytics/accountsyncstate/add/").status_code == 403
    page = staff.get(f"/admin/analytics/trackedpost/{quote(tracked.pk)}/change/")
    assert page.status_code == 200 and tracked.platform_post_id in page.content.decode()
    assert 'name="_save"' not in page.content.decode()
    assert staff.post(f"/admin/analytics/trackedpost/{quote(tracked.pk)}/change/", {"views": 1}).status_code == 403


@pytest.mark.parametrize("status", [PostStatus.COMPLETED, PostStatus.FAILED, PostStatus.DRAFT])
def test_a_posts_page_is_read_only_with_no_new_entry(client: Any, django_user_model: Any, status: str) -> None:
    post = PostFactory(status=status, text="Spring sale starts today")
    PostTargetFactory(post=post, platform="MASTODON", status=TargetStatus.PUBLISHED, platform_post_id="r1")
    staff = staff_with(django_user_model, client, *every_perm("posts"))
    page = staff.get(f"/admin/posts/post/{quote(post.pk)}/change/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "Spring sale starts today" in html and "r1" in html  # the post and its entry are shown
    assert 'name="_save"' not in html and 'name="_continue"' not in html
    # No new entry: the inline takes none (the admin's script draws "Add another" only below the maximum).
    (targets,) = page.context["inline_admin_formsets"]
    assert targets.has_add_permission is False and 'name="targets-MAX_NUM_FORMS" value="0"' in html
    assert page.context["title"] == "View post"
    refused = staff.post(f"/admin/posts/post/{quote(post.pk)}/change/", {"text": "changed"})
    assert refused.status_code == 403
    post.refresh_from_db()
    assert post.text == "Spring sale starts today"
    # The list keeps its retry action (a change of the list, through the service).
    assert "retry_failed_entries" in staff.get("/admin/posts/post/").content.decode()


def test_dashboard_offers_workspaces_by_name(client: Any, django_user_model: Any) -> None:
    globex = WorkspaceFactory(name="Globex")
    WorkspaceFactory(name="Acme")
    staff = staff_with(django_user_model, client, "workspaces.view_dashboard", "workspaces.view_workspace")
    html = staff.get("/admin/dashboard/").content.decode()
    assert 'class="admin-autocomplete"' in html and 'data-ajax--url="/admin/autocomplete/"' in html
    assert "Workspace id" not in html

    # What the picker asks as staff type "glob": the workspaces whose name matches, by name.
    found = staff.get(
        "/admin/autocomplete/",
        {"term": "glob", "app_label": "workspaces", "model_name": "apikey", "field_name": "workspace"},
    )
    assert found.status_code == 200
    assert json.loads(found.content)["results"] == [{"id": globex.pk, "text": "Globex"}]

    chosen = staff.get("/admin/dashboard/", {"workspace": globex.pk})
    assert chosen.context["workspace"] == globex
    assert f'<option value="{globex.pk}" selected>Globex</option>' in chosen.content.decode()


def test_dashboard_without_workspace_access_takes_an_id(client: Any, django_user_model: Any) -> None:
    """Staff who may see the dashboard but not the workspace list cannot search it: they type an
    id, and one that names no workspace (or is no id at all) shows every workspace."""
    globex = WorkspaceFactory(name="Globex")
    staff = staff_with(django_user_model, client, "workspaces.view_dashboard")
    html = staff.get("/admin/dashboard/").content.decode()
    assert "admin-autocomplete" not in html and 'name="workspace"' in html
    assert staff.get("/admin/dashboard/", {"workspace": globex.pk}).context["workspace"] == globex
    for wrong in ("ws_nothing", "x" * 5000, "'; drop table --", "\u00e9\u4e2d"):
        page = staff.get("/admin/dashboard/", {"workspace": wrong})
        assert page.status_code == 200
        assert page.context["workspace"] is None and page.context["unknown_workspace"] is True
        assert "showing all workspaces" in page.content.decode()
