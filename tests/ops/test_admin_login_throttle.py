"""The admin login throttle (django-axes): five wrong passwords for one username from one address
lock that pair out, with a page that says so; other usernames and addresses are unaffected; the
documented reset command unlocks; the API's bearer tokens are never throttled by it."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/?next=/admin/"
PASSWORD = "right-password-123"


@pytest.fixture
def staff(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("ops", password=PASSWORD, is_staff=True)


def _sign_in(username: str, password: str, address: str = "203.0.113.7", **headers: str) -> Any:
    """A fresh browser each time: the lockout must not depend on a session or cookie."""
    return Client().post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address, **headers)


def _signed_in(response: Any) -> bool:
    return response.status_code == 302 and response["Location"] == "/admin/"


def _fail(times: int, username: str = "ops", address: str = "203.0.113.7", **headers: str) -> list[int]:
    return [_sign_in(username, "wrong", address, **headers).status_code for _ in range(times)]


def test_five_failures_lock_the_username_and_address_out_even_with_the_right_password(staff: Any) -> None:
    assert _fail(4) == [200, 200, 200, 200]  # the login form again, with its error
    fifth = _sign_in("ops", "wrong")
    assert fifth.status_code == 429
    locked = _sign_in("ops", PASSWORD)
    assert locked.status_code == 429
    page = locked.content.decode()
    assert "Too many failed sign-ins for “ops” from your address" in page
    assert "5 wrong passwords in a row" in page
    assert "locked\n    for 15 minutes" in page
    assert "manage.py axes_reset_username ops" in page
    assert "_auth_user_id" not in locked.client.session


def test_another_username_or_address_is_not_locked(staff: Any, django_user_model: Any) -> None:
    django_user_model.objects.create_user("oncall", password=PASSWORD, is_staff=True)
    _fail(5)
    assert _sign_in("ops", PASSWORD).status_code == 429
    assert _signed_in(_sign_in("oncall", PASSWORD))
    assert _signed_in(_sign_in("ops", PASSWORD, address="198.51.100.4"))


def test_a_success_before_the_limit_starts_the_count_again(staff: Any) -> None:
    _fail(4)
    assert _signed_in(_sign_in("ops", PASSWORD))
    assert _fail(4) == [200, 200, 200, 200]


def test_the_reset_command_unlocks(staff: Any) -> None:
    _fail(5)
    assert _sign_in("ops", PASSWORD).status_code == 429
    call_command("axes_reset_username", "ops")
    assert _signed_in(_sign_in("ops", PASSWORD))


def test_a_forwarded_header_is_ignored_unless_configured(staff: Any, settings: Any) -> None:
    """By default X-Forwarded-For is the client's own text: changing it must not reset the count."""
    for n in range(5):
        _sign_in("ops", "wrong", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")
    assert _sign_in("ops", PASSWORD, HTTP_X_FORWARDED_FOR="192.0.2.99").status_code == 429


def test_a_configured_header_gives_the_address_its_right_most_entry(staff: Any, settings: Any) -> None:
    """Behind the proxy every connection comes from the proxy; the address it appends is the client's."""
    settings.CLIENT_IP_HEADER = "X-Forwarded-For"
    proxy = "10.0.0.2"
    _fail(5, address=proxy, HTTP_X_FORWARDED_FOR="1.1.1.1, 203.0.113.7")
    assert _sign_in("ops", PASSWORD, proxy, HTTP_X_FORWARDED_FOR="198.51.100.9, 203.0.113.7").status_code == 429
    assert _signed_in(_sign_in("ops", PASSWORD, proxy, HTTP_X_FORWARDED_FOR="203.0.113.7, 198.51.100.4"))


def test_the_api_bearer_token_is_not_throttled(client_for: Any, staff: Any) -> None:
    _fail(5)
    api = client_for("admin")
    assert api.get("/api/v1/me").status_code == 200
    anonymous = Client()
    for _ in range(8):
        assert anonymous.get("/api/v1/me", HTTP_AUTHORIZATION="Bearer cpk_wrong_wrong").status_code == 401
    assert api.get("/api/v1/me").status_code == 200
