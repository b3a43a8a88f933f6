"""The client's address: the connection's, unless a trusted proxy's header is configured."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import RequestFactory

from core.client_address import client_address


def _request(**meta: str) -> Any:
    return RequestFactory().get("/admin/login/", REMOTE_ADDR="10.0.0.2", **meta)


def test_without_a_configured_header_the_connection_address(settings: Any) -> None:
    settings.CLIENT_IP_HEADER = ""
    assert client_address(_request(HTTP_X_FORWARDED_FOR="1.2.3.4", HTTP_X_REAL_IP="1.2.3.4")) == "10.0.0.2"


@pytest.mark.parametrize(
    ("header", "meta", "expected"),
    [
        ("X-Real-IP", {"HTTP_X_REAL_IP": "203.0.113.7"}, "203.0.113.7"),
        ("X-Forwarded-For", {"HTTP_X_FORWARDED_FOR": "1.2.3.4, 203.0.113.7"}, "203.0.113.7"),
        ("x-forwarded-for", {"HTTP_X_FORWARDED_FOR": " 2001:db8::1 "}, "2001:db8::1"),
        ("X-Forwarded-For", {"HTTP_X_FORWARDED_FOR": "203.0.113.7, not-an-address"}, "10.0.0.2"),
        ("X-Forwarded-For", {"HTTP_X_FORWARDED_FOR": ""}, "10.0.0.2"),
        ("X-Real-IP", {}, "10.0.0.2"),
    ],
)
def test_a_configured_header_is_read_and_a_bad_value_ignored(
    settings: Any, header: str, meta: dict[str, str], expected: str
) -> None:
    settings.CLIENT_IP_HEADER = header
    assert client_address(_request(**meta)) == expected
