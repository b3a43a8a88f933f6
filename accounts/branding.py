"""The branding of a workspace's hosted connect pages (issue 31): read it, replace it, and the
validation of what a connect link adds to it (``redirectUrl``, the platforms it offers).

- The logo is an upload of the workspace (``POST /upload-urls``, then the PUT), image/png,
  image/jpeg or image/webp of at most :data:`LOGO_MAX_BYTES`, served from storage at its
  ``publicUrl``. While it is the logo the media lifecycle keeps it (``keep_until`` far ahead);
  a logo replaced or removed gets the grace an unreferenced upload gets, then goes as usual.
- The accent colour is stored as ``#rrggbb``; the pages write their button text in black or white,
  whichever contrasts more with it (always at least 4.5:1, WCAG AA), so no accent can make the
  page unreadable.
- ``redirectUrl`` is checked as a webhook URL is (``webhooks.url_safety``): http(s), no userinfo,
  every resolved address public, private ones admitted only where webhooks admit them (sandbox
  with ``WEBHOOK_ALLOW_PRIVATE_URLS``).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.utils import timezone

from accounts.models import ConnectBranding
from audit.actors import Actor
from audit.services import record
from core.errors import ValidationFailed
from media.models import MediaFile
from media.services import media_keep_until, media_resolve
from platforms.base import Platform
from webhooks.url_safety import UnsafeUrl, check_url
from workspaces.models import Workspace

ALL_PLATFORMS: tuple[str, ...] = tuple(p.value for p in Platform)
LOGO_MIME_TYPES = ("image/png", "image/jpeg", "image/webp")
LOGO_MAX_BYTES = 1024 * 1024
DISPLAY_NAME_MAX = 80
SUPPORT_URL_MAX = 2000
# While a file is the logo it is kept; afterwards it gets what an unreferenced upload gets.
KEEP_AS_LOGO = dt.datetime(9999, 1, 1, tzinfo=dt.UTC)
RELEASED_LOGO_GRACE = dt.timedelta(days=7)
_HEX = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_https = URLValidator(schemes=["https"])


@dataclass(frozen=True)
class Branding:
    """The branding as the pages and the API use it; defaults where nothing was set."""

    display_name: str = ""
    logo_url: str = ""
    accent_color: str = ""
    support_url: str = ""
    platforms: tuple[str, ...] = ALL_PLATFORMS
    updated_at: dt.datetime | None = None

    @property
    def accent_text_color(self) -> str:
        """Black or white, whichever contrasts more with the accent colour."""
        return readable_text_on(self.accent_color) if self.accent_color else "#ffffff"


def branding_get(*, workspace_id: str) -> Branding:
    """The workspace's branding (defaults when it never set one)."""
    row = ConnectBranding.objects.select_related("logo").filter(workspace_id=workspace_id).first()
    if row is None:
        return Branding()
    return Branding(
        display_name=row.display_name,
        logo_url=row.logo.public_url if row.logo is not None else "",
        accent_color=row.accent_color,
        support_url=row.support_url,
        platforms=_in_order(row.platforms) if row.platforms else ALL_PLATFORMS,
        updated_at=row.updated_at,
    )


@transaction.atomic
def branding_set(
    *,
    workspace_id: str,
    display_name: str | None,
    logo_url: str | None,
    accent_color: str | None,
    support_url: str | None,
    platforms: list[str] | None,
    actor: Actor,
) -> Branding:
    """Replace the branding whole (a None field goes back to its default). Every problem is
    reported at once (400, each message naming its field; ``media_not_found`` when the logo is
    not an upload of this workspace). Setting the same branding twice changes nothing."""
    errors: list[str] = []
    name = (display_name or "").strip()
    if len(name) > DISPLAY_NAME_MAX:
        errors.append(f"displayName must be at most {DISPLAY_NAME_MAX} characters")
    accent = ""
    if accent_color:
        if not _HEX.match(accent_color):
            errors.append("accentColor must be a hex colour: #rgb or #rrggbb")
        else:
            accent = normalize_hex(accent_color)
    support = (support_url or "").strip()
    if support:
        try:
            if len(support) > SUPPORT_URL_MAX:
                raise ValidationError("too long")
            _https(support)
        except ValidationError:
            errors.append(f"supportUrl must be an https URL of at most {SUPPORT_URL_MAX} characters")
    offered = list(platforms) if platforms is not None else []
    if platforms is not None:
        errors += _platform_problems("platforms", offered, allowed=ALL_PLATFORMS, required=True)
    logo_id = None
    if logo_url:
        logo_id, problems = _logo(workspace_id, logo_url)
        errors += problems
    if errors:
        raise ValidationFailed(errors)
    row = ConnectBranding.objects.select_for_update().filter(workspace_id=workspace_id).first()
    previous_logo = row.logo.public_url if row is not None and row.logo is not None else ""
    ConnectBranding.objects.update_or_create(
        workspace_id=workspace_id,
        defaults={
            "display_name": name,
            "logo_id": logo_id,
            "accent_color": accent,
            "support_url": support,
            "platforms": [] if set(offered) == set(ALL_PLATFORMS) else list(_in_order(offered)),
        },
    )
    record(
        actor=actor,
        action="connect_branding.update",
        organization_id=Workspace.objects.values_list("organization_id", flat=True).get(id=workspace_id),
        workspace_id=workspace_id,
        target_type="connect_branding",
        target_id=workspace_id,
        changes={"displayName": name, "logoUrl": logo_url, "accentColor": accent, "supportUrl": support},
    )
    if logo_url:
        media_keep_until(workspace_id=workspace_id, urls=[logo_url], until=KEEP_AS_LOGO)
    if previous_logo and previous_logo != logo_url:
        media_keep_until(workspace_id=workspace_id, urls=[previous_logo], until=timezone.now() + RELEASED_LOGO_GRACE)
    return branding_get(workspace_id=workspace_id)


def _logo(workspace_id: str, url: str) -> tuple[str | None, list[str]]:
    try:
        [info] = media_resolve(workspace_id=workspace_id, urls=[url])
    except ValidationFailed as exc:
        if exc.code != "media_not_found":
            raise
        raise ValidationFailed(
            [f"logoUrl: {url} is not an uploaded file of this workspace (POST /upload-urls, then PUT the file)"],
            code="media_not_found",
        ) from exc
    problems = []
    if info.mime_type not in LOGO_MIME_TYPES:
        problems.append(f"logoUrl must be an image of type {', '.join(LOGO_MIME_TYPES)} (this one is {info.mime_type})")
    if info.size is None or info.size > LOGO_MAX_BYTES:
        problems.append(f"logoUrl must be at most {LOGO_MAX_BYTES} bytes")
    row = MediaFile.objects.filter(workspace_id=workspace_id, public_url=url).values_list("id", flat=True).first()
    return row, problems


def link_options(*, workspace_id: str, redirect_url: str | None, platforms: list[str] | None) -> tuple[str, list[str]]:
    """Validate what ``POST /connect-links`` adds: the normalized ``redirectUrl`` (400
    ``invalid_redirect_url``) and the platforms the link offers, a subset of those the branding
    offers (400 ``platform_not_offered``). Returns ``("", [])`` for neither."""
    normalized = ""
    if redirect_url:
        try:
            normalized = check_url(redirect_url)
        except UnsafeUrl as exc:
            raise ValidationFailed([f"redirectUrl: {exc}"], code="invalid_redirect_url")
    chosen: list[str] = []
    if platforms is not None:
        offered = branding_get(workspace_id=workspace_id).platforms
        problems = _platform_problems("platforms", list(platforms), allowed=offered, required=True)
        if problems:
            raise ValidationFailed(problems, code="platform_not_offered")
        chosen = list(_in_order(platforms))
    return normalized, chosen


def offered_platforms(*, branding: Branding, link_platforms: list[str]) -> list[Platform]:
    """What a link's pages offer: the branding's platforms, narrowed to the link's own when it
    named some, in the canonical order."""
    wanted = set(branding.platforms) & (set(link_platforms) if link_platforms else set(ALL_PLATFORMS))
    return [p for p in Platform if p.value in wanted]


def _platform_problems(name: str, values: list[str], *, allowed: tuple[str, ...], required: bool) -> list[str]:
    problems = []
    if required and not values:
        problems.append(f"{name} must name at least one platform")
    unknown = [v for v in values if v not in allowed]
    if unknown:
        problems.append(f"{name}: {', '.join(map(str, unknown))} not offered (offered: {', '.join(allowed)})")
    if len(set(values)) != len(values):
        problems.append(f"{name} must not repeat a platform")
    return problems


def _in_order(values: list[str]) -> tuple[str, ...]:
    wanted = set(values)
    return tuple(p for p in ALL_PLATFORMS if p in wanted)


def normalize_hex(value: str) -> str:
    value = value.lower()
    if len(value) == 4:
        value = "#" + "".join(c * 2 for c in value[1:])
    return value


def _luminance(hex_color: str) -> float:
    def channel(part: str) -> float:
        c = int(part, 16) / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(hex_color[i : i + 2]) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(first: str, second: str) -> float:
    """WCAG 2 contrast ratio of two ``#rrggbb`` colours (1 to 21)."""
    a, b = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def readable_text_on(background: str) -> str:
    """``#000000`` or ``#ffffff``, whichever contrasts more with ``background`` (≥ 4.58:1)."""
    black, white = contrast_ratio(background, "#000000"), contrast_ratio(background, "#ffffff")
    return "#000000" if black >= white else "#ffffff"
