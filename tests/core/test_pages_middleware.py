"""Sessions, the staff user and messages run for the pages only (core/pages.py): an API or health
request is answered exactly as with Django's own three layers (same status, headers and cookies,
a staff session cookie sent along changes nothing and is not refreshed), and the admin keeps its
session, its user and its messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from core.pages import pages_only
from workspaces.models import Workspace

DJANGOS_OWN = {
    "core.pages.PagesSessionMiddleware": "django.contrib.sessions.middleware.SessionMiddleware",
    "core.pages.PagesAuthenticationMiddleware": "django.contrib.auth.middleware.AuthenticationMiddleware",
    "core.pages.PagesMessageMiddleware": "django.contrib.messages.middleware.MessageMiddleware",
}


def _seen(response: Any) -> tuple[int, list[tuple[str, str]], list[str], bytes]:
    headers = sorted((k, v) for k, v in response.headers.items() if k not in {"X-Request-Id", "RateLimit-Remaining"})
    return response.status_code, headers, sorted(response.cookies), response.content


def test_only_the_api_and_health_paths_skip_the_session_layers() -> None:
    assert [pages_only(p) for p in ("/api/v1/social-posts", "/api/", "/healthz", "/readyz")] == [False] * 4
    assert all(pages_only(p) for p in ("/admin/", "/admin/login/", "/connect/x", "/oauth/authorize/", "/metrics", "/"))


@pytest.mark.django_db
def test_api_and_health_answers_are_those_of_djangos_own_layers(
    settings: Any, make_key: Callable[..., str], workspace: Workspace
) -> None:
    staff = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw-for-tests-only")
    key = make_key(workspace=workspace)
    requests: list[tuple[str, str, dict[str, Any]]] = [
        ("get", "/healthz", {}),
        ("get", "/api/v1/social-posts", {"HTTP_AUTHORIZATION": f"Bearer {key}"}),
        ("get", "/api/v1/social-posts", {}),  # 401: a staff session is no API credential
        ("get", "/api/v1/no-such-thing", {"HTTP_AUTHORIZATION": f"Bearer {key}"}),
        ("post", "/api/v1/social-posts", {"HTTP_AUTHORIZATION": f"Bearer {key}"}),  # 400, no CSRF check
    ]

    def answers() -> list[tuple[int, list[tuple[str, str]], list[str], bytes]]:
        client = Client(enforce_csrf_checks=True)
        client.force_login(staff)  # a browser with the admin open calls the API too
        seen = []
        for method, path, extra in requests:
            response = getattr(client, method)(path, {}, content_type="application/json", **extra)
            seen.append(_seen(response))
        return seen

    ours = answers()
    with override_settings(MIDDLEWARE=[DJANGOS_OWN.get(m, m) for m in settings.MIDDLEWARE]):
        theirs = answers()
    assert [s[0] for s in ours] == [200, 200, 401, 404, 400]
    assert ours == theirs
    assert all(cookies == [] for _, _, cookies, _ in ours)  # the session is neither read nor refreshed


@pytest.mark.django_db
def test_the_admin_keeps_its_session_user_and_messages(client: Client) -> None:
    user = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw-for-tests-only")
    assert client.get("/admin/").status_code == 302  # no session: to the login page
    client.force_login(user)
    page = client.get("/admin/")
    assert page.status_code == 200 and page.wsgi_request.user == user
    added = client.post("/admin/auth/group/add/", {"name": "editors"}, follow=True)
    (message,) = [str(m) for m in added.context["messages"]]
    assert "editors</a>” was added successfully." in message
