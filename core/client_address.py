"""The client's address for the admin login throttle (django-axes' ``AXES_CLIENT_IP_CALLABLE``).

The connection's address, unless ``CLIENT_IP_HEADER`` names the header a trusted proxy in front of
the service sets (``X-Real-IP``) or appends to (``X-Forwarded-For``). Of a list, the right-most
entry is read: the one our proxy added; entries to its left are whatever the client sent. A value
that is not an IP address is ignored, as if the header were absent."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str | None:
    header = settings.CLIENT_IP_HEADER
    if header:
        value = request.META.get("HTTP_" + header.upper().replace("-", "_"), "")
        nearest = value.rsplit(",", 1)[-1].strip()
        try:
            return str(ipaddress.ip_address(nearest))
        except ValueError:
            pass
    return request.META.get("REMOTE_ADDR")
