"""The site-root media endpoints (signed PUT, public files) answer hostile input with a 4xx,
never a 500: NUL bytes, invalid UTF-8, absurd numbers, odd methods."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

KEY = "ws_x/00000000000000000000000000000000/a.jpg"


@pytest.mark.parametrize(
    "path",
    [
        f"/uploads/{KEY}?expires=1&contentType=image/jpeg&signature=%00",
        f"/uploads/{KEY}?expires=%00&contentType=image/jpeg&signature=x",
        f"/uploads/{KEY}?expires=1&contentType=%00&signature=x",
        f"/uploads/{KEY}?expires=1&contentType=%ff%fe&signature=%ff",
        f"/uploads/{KEY}?expires=99999999999999999999999999999&contentType=image/jpeg&signature=x",
        f"/uploads/{KEY}?expires=-1e9&contentType=image/jpeg&signature=x",
        "/uploads/ws_x/%00/a.jpg?expires=1&contentType=image/jpeg&signature=x",
        "/uploads/%ff%fe/a.jpg",
        "/uploads/",
    ],
)
def test_hostile_puts_are_refused_with_a_4xx(path: str) -> None:
    response = Client().put(path, data=b"x", content_type="image/jpeg")
    assert 400 <= response.status_code < 500, (path, response.status_code)


@pytest.mark.parametrize("path", ["/media/ws_x/%00/a.jpg", "/media/%ff%fe", "/media/a.jpg%00", "/media/" + "a" * 5000])
def test_hostile_gets_are_refused_with_a_4xx(path: str) -> None:
    for method in ("get", "head"):
        response = getattr(Client(), method)(path)
        assert 400 <= response.status_code < 500, (path, method, response.status_code)


def test_other_methods_are_405() -> None:
    assert Client().post(f"/media/{KEY}").status_code == 405
    assert Client().get(f"/uploads/{KEY}").status_code == 405
