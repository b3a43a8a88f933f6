"""JSON error responses for code paths outside DRF views (middleware, Django handlers), written
by the renderer DRF views use, so every error body is the same bytes whichever path answered."""

from __future__ import annotations

from django.http import HttpResponse
from rest_framework.renderers import JSONRenderer

from core import errors

_RENDERER = JSONRenderer()


def json_error(error: errors.ApplicationError) -> HttpResponse:
    response = HttpResponse(_RENDERER.render(error.body()), status=error.status_code, content_type=_RENDERER.media_type)
    for name, value in error.headers.items():
        response[name] = value
    return response
