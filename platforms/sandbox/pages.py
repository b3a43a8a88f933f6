"""What a person opens from the links the service hands out in sandbox mode: a post as its
platform would show it (author, text, media), an account's avatar and a post's thumbnail,
served by the simulator under ``/sandbox/<slug>/`` at the service's public address (never the
real platform's site, where the simulated post does not exist)."""

from __future__ import annotations

import functools
import hashlib
import html
import io
from collections.abc import Iterable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path
from PIL import Image


def public_base(slug: str) -> str:
    """Where a person reaches the ``slug`` simulator: the service's public address, not the one
    its workers call the simulator at."""
    return f"{settings.PUBLIC_BASE_URL}/sandbox/{slug}"


def avatar_url(slug: str, account_id: str) -> str:
    return f"{public_base(slug)}/_pages/avatars/{account_id}.png"


def post_page_url(slug: str, post_id: str) -> str:
    return f"{public_base(slug)}/_pages/posts/{post_id}"


def thumbnail_url(slug: str, seed: str) -> str:
    """A post's picture (a video's cover or thumbnail, an audio track's artwork)."""
    return f"{public_base(slug)}/_pages/thumbnails/{seed}.png"


@functools.cache
def _png(seed: str, width: int, height: int) -> bytes:
    digest = hashlib.sha256(seed.encode()).digest()
    out = io.BytesIO()
    Image.new("RGB", (width, height), (digest[0], digest[1], digest[2])).save(out, format="PNG")
    return out.getvalue()


def avatar_response(seed: str) -> HttpResponse:
    """A square PNG of one colour derived from ``seed`` (the same account, the same picture)."""
    return HttpResponse(_png(seed, 200, 200), content_type="image/png")


def thumbnail_response(seed: str) -> HttpResponse:
    """A 16:9 PNG of one colour derived from ``seed``."""
    return HttpResponse(_png(seed, 320, 180), content_type="image/png")


def _avatar(request: HttpRequest, seed: str) -> HttpResponse:
    return avatar_response(seed)


def _thumbnail(request: HttpRequest, seed: str) -> HttpResponse:
    return thumbnail_response(seed)


# the pictures of :func:`avatar_url` and :func:`thumbnail_url`, for a simulator's ``urlpatterns``
urlpatterns: list[URLPattern] = [
    path("_pages/avatars/<str:seed>.png", _avatar),
    path("_pages/thumbnails/<str:seed>.png", _thumbnail),
]


def post_page(
    *, platform: str, author: str, handle: str = "", text: str, media: Iterable[str] = (), avatar: str = ""
) -> HttpResponse:
    """The post as a simple page: its author (and avatar), its text, its media."""
    e = html.escape
    pictures = "".join(f'<p><a href="{e(url)}">{e(url.rsplit("/", 1)[-1] or url)}</a></p>' for url in media)
    image = f'<img src="{e(avatar)}" alt="" width="48" height="48"> ' if avatar else ""
    by = f"{e(author)} <small>{e(handle)}</small>" if handle else e(author)
    paragraphs = "".join(f"<p>{e(p)}</p>" for p in text.split("\n\n")) if text else ""
    body = (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{e(author)} on {e(platform)} (sandbox)</title>"
        "<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}"
        "article{border:1px solid #ccc;border-radius:8px;padding:1rem}</style></head><body>"
        f"<p>{e(platform)} sandbox: a simulated post, published nowhere else.</p>"
        f"<article><header>{image}<strong>{by}</strong></header>{paragraphs}{pictures}</article></body></html>"
    )
    return HttpResponse(body, content_type="text/html; charset=utf-8")


def not_found_page(platform: str) -> HttpResponse:
    return HttpResponse(
        f"<!DOCTYPE html><html><body><p>{html.escape(platform)} sandbox: no such post.</p></body></html>",
        status=404,
        content_type="text/html; charset=utf-8",
    )
