"""Django's sessions, authentication and messages middleware, for the pages only.

The API authenticates every call by its bearer token (DRF's ``BearerAuthentication`` sets
``request.user`` to the principal) and never reads a session, the session's staff user or a
message; the health checks read nothing of a request. On those paths the three layers did nothing
an API client could see (a session is only saved, and ``Vary: Cookie`` only added, when something
reads it), yet cost about an eighth of a bare request's instructions (docs/benchmarks.md). Each
class here is Django's own, so the admin's checks and every page (admin, connect flows, OAuth)
see them unchanged; on an API or health path the request goes straight to the next layer, as if
the layer were not there."""

from __future__ import annotations

from collections.abc import Awaitable

from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpRequest, HttpResponseBase
from django.utils.deprecation import MiddlewareMixin

from core.middleware import API_PREFIX

# The health checks: plain views that read nothing of a request (``/metrics`` reads its token
# from a header too, but is left to the full chain).
BARE_PATHS = frozenset({"/healthz", "/readyz"})


def pages_only(path: str) -> bool:
    """Whether the session layers run for ``path``: every path but the API's and the health checks'."""
    return not (path.startswith(API_PREFIX) or path in BARE_PATHS)


class PagesOnly(MiddlewareMixin):
    """Runs the Django middleware it is mixed into for pages only (:func:`pages_only`)."""

    def __call__(self, request: HttpRequest) -> HttpResponseBase | Awaitable[HttpResponseBase]:
        if pages_only(request.path):
            return super().__call__(request)
        return self.get_response(request)


class PagesSessionMiddleware(PagesOnly, SessionMiddleware):
    pass


class PagesAuthenticationMiddleware(PagesOnly, AuthenticationMiddleware):
    pass


class PagesMessageMiddleware(PagesOnly, MessageMiddleware):
    pass
