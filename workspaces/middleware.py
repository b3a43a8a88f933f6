from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from core.middleware import API_PREFIX
from workspaces.principal import resolve_principal


class PrincipalMiddleware:
    """Resolves the bearer token once, for the rate limiter and for DRF authentication."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        principal = None
        if request.path.startswith(API_PREFIX):
            authorization = request.headers.get("Authorization", "")
            if authorization:
                principal = resolve_principal(authorization)
        request.principal = principal  # type: ignore[attr-defined]
        return self.get_response(request)
