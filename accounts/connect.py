"""White-label connect links and the flow behind the hosted connect pages.

A link (24 h, one workspace) opens the platform chooser. For an OAuth platform each trip to the
consent screen is a :class:`ConnectAttempt`: the ``state`` sent to the platform is the attempt
id and a nonce signed with ``django.core.signing``, the PKCE verifier stays encrypted in the row,
and the callback claims the attempt with a conditional UPDATE, so a state works once and only
while its link lives. Credential platforms (a handle and app password, a bot token…) post a form
instead; in sandbox mode they connect at once with the simulator's sandbox credentials.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import logging
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.branding import branding_get, link_options, offered_platforms
from accounts.errors import ConnectLinkNotFound
from accounts.models import ConnectAttempt, ConnectLink, SocialAccount
from accounts.selectors import connect_link_by_token, token_hash
from accounts.services import accounts_connect
from core.errors import SubscriptionRequired
from platforms.base import AuthError, ConnectedIdentity, NotSupported, Permanent, Platform, PlatformError
from platforms.registry import get_client

logger = logging.getLogger(__name__)

LINK_LIFETIME = dt.timedelta(hours=24)
STATE_SALT = "accounts.connect.state"


# --- links -------------------------------------------------------------------------------


@dataclass(frozen=True)
class IssuedConnectLink:
    url: str
    token: str
    expires_at: dt.datetime
    redirect_url: str = ""
    platforms: list[str] = field(default_factory=list)


def connect_url(token: str) -> str:
    return f"{settings.PUBLIC_BASE_URL}/connect/{token}"


def callback_url(platform: Platform) -> str:
    return f"{settings.PUBLIC_BASE_URL}/connect/callback/{platform.value}"


def connect_link_create(
    *, workspace_id: str, redirect_url: str | None = None, platforms: list[str] | None = None
) -> IssuedConnectLink:
    """A new link valid for 24 h. The token is returned here only; the row keeps its hash.
    ``redirect_url`` (checked as a webhook URL is: 400 ``invalid_redirect_url``) is where the
    browser goes after the flow, with the outcome in its query; ``platforms`` narrows what the
    link offers to some of the platforms the workspace's branding offers (400
    ``platform_not_offered``)."""
    redirect, chosen = link_options(workspace_id=workspace_id, redirect_url=redirect_url, platforms=platforms)
    token = secrets.token_urlsafe(32)
    link = ConnectLink.objects.create(
        workspace_id=workspace_id,
        token_hash=token_hash(token),
        expires_at=timezone.now() + LINK_LIFETIME,
        redirect_url=redirect,
        platforms=chosen,
    )
    offered = offered_platforms(branding=branding_get(workspace_id=workspace_id), link_platforms=chosen)
    return IssuedConnectLink(
        url=connect_url(token),
        token=token,
        expires_at=link.expires_at,
        redirect_url=redirect,
        platforms=[p.value for p in offered],
    )


def connect_links_purge(*, older_than: dt.timedelta = dt.timedelta(days=7)) -> int:
    """Delete links (and their consent trips) that expired more than ``older_than`` ago.
    Idempotent; returns how many links went."""
    _, by_model = ConnectLink.objects.filter(expires_at__lt=timezone.now() - older_than).delete()
    return int(by_model.get(ConnectLink._meta.label, 0))


def connect_link_delete(*, workspace_id: str, token: str) -> None:
    """Delete the link and its pending consent trips; its pages answer 404 from now on.
    404 when unknown or of another workspace."""
    link = connect_link_by_token(token=token)
    if link is None or link.workspace_id != workspace_id:
        raise ConnectLinkNotFound()
    link.delete()


# --- the page flow -----------------------------------------------------------------------


class ConnectPageError(Exception):
    """Rendered as the error page with ``status`` (always 4xx/5xx, never a stack trace), or, when
    the link it happened on has a ``redirect_url``, sent there with ``outcome=error`` and ``code``
    (the title in snake case: ``connection_declined``, ``platform_unavailable``…)."""

    def __init__(self, status: int, title: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.title = title
        self.message = message
        self.code = title.lower().replace(" ", "_").replace("-", "_")
        self.redirect_url = ""
        self.platform = ""
        self.workspace_id = ""  # the link's, once known: its error page wears its branding


@dataclass(frozen=True)
class ConnectOutcome:
    platform: Platform
    accounts: list[SocialAccount]
    token: str = ""  # the link token, when known (for "connect another")
    redirect_url: str = ""  # the link's redirectUrl: the browser goes there instead of our page


@dataclass(frozen=True)
class ConnectStep:
    """What the platform page does next: redirect to consent, show a form, or show success."""

    redirect_to: str = ""
    form_fields: tuple[str, ...] = ()
    outcome: ConnectOutcome | None = None
    errors: list[str] = field(default_factory=list)


def parse_platform(value: str) -> Platform:
    try:
        return Platform(value.upper())
    except ValueError:
        raise ConnectPageError(404, "Unknown platform", f"“{value[:40]}” is not a platform we can connect.")


def live_link(token: str) -> ConnectLink:
    """The link of ``token`` while it may be used: unknown or deleted 404, expired 410."""
    link = connect_link_by_token(token=token)
    if link is None:
        raise ConnectPageError(404, "Link not found", "This connect link does not exist or was deleted.")
    if link.expires_at <= timezone.now():
        raise ConnectPageError(410, "Link expired", "This connect link has expired. Ask for a new one.")
    return link


def _client(platform: Platform):  # type: ignore[no-untyped-def]
    try:
        return get_client(platform)
    except ModuleNotFoundError:
        raise ConnectPageError(503, "Not available yet", f"{platform.value} cannot be connected at the moment.")


def _pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def _platform_failure(platform: Platform, exc: Exception) -> ConnectPageError:
    if isinstance(exc, AuthError | Permanent):
        return ConnectPageError(
            400, "Connection refused", f"{platform.value} refused the connection: {getattr(exc, 'message', exc)}"
        )
    if isinstance(exc, NotSupported):
        return ConnectPageError(400, "Not supported", f"{platform.value} cannot be connected this way.")
    return ConnectPageError(
        502, "Platform unavailable", f"{platform.value} could not be reached. Please try again in a moment."
    )


def _finish(link: ConnectLink, platform: Platform, identities: list[ConnectedIdentity], token: str) -> ConnectOutcome:
    if not identities:
        raise ConnectPageError(
            400, "No account found", f"{platform.value} did not give access to any account we can publish to."
        )
    try:
        with transaction.atomic():
            accounts = accounts_connect(workspace_id=link.workspace_id, platform=platform, identities=identities)
            ConnectLink.objects.filter(id=link.id).update(connections=F("connections") + len(accounts))
    except SubscriptionRequired as exc:  # the organization's plan allows no more connected accounts
        raise ConnectPageError(403, "Account limit reached", str(exc.message)) from exc
    return ConnectOutcome(platform=platform, accounts=accounts, token=token, redirect_url=link.redirect_url)


@contextmanager
def _on_link(link: ConnectLink, platform: str = "") -> Iterator[None]:
    """A page failure that happens once the link is known goes to the link's redirectUrl."""
    try:
        yield
    except ConnectPageError as exc:
        exc.redirect_url = exc.redirect_url or link.redirect_url
        exc.platform = exc.platform or platform
        exc.workspace_id = exc.workspace_id or link.workspace_id
        raise


def link_platforms(link: ConnectLink) -> list[Platform]:
    """The platforms the link's pages offer (its workspace's branding, narrowed by the link)."""
    return offered_platforms(branding=branding_get(workspace_id=link.workspace_id), link_platforms=link.platforms)


def _require_offered(link: ConnectLink, platform: Platform) -> None:
    if platform not in link_platforms(link):
        raise ConnectPageError(404, "Not offered", f"{platform.value} cannot be connected through this link.")


def connect_begin(*, token: str, platform_name: str, manual: bool = False) -> ConnectStep:
    """``GET /connect/<token>/<PLATFORM>``. OAuth: a new single-use attempt and the redirect to
    the platform's consent (the simulator's in sandbox mode, which approves at once). Credentials:
    the form to fill in, or in sandbox mode (unless ``manual``) an immediate connection."""
    link = live_link(token)
    with _on_link(link, platform_name.upper()[:40]):
        return _begin(link, token, parse_platform(platform_name), manual)


def _begin(link: ConnectLink, token: str, platform: Platform, manual: bool) -> ConnectStep:
    _require_offered(link, platform)
    client = _client(platform)
    if client.connect_method == "credentials":
        if settings.SANDBOX and not manual:
            try:
                identities = client.connect_with_credentials(client.sandbox_credentials())
            except (PlatformError, NotSupported) as exc:
                raise _platform_failure(platform, exc)
            return ConnectStep(outcome=_finish(link, platform, identities, token))
        return ConnectStep(form_fields=tuple(client.credential_fields))
    verifier, challenge = _pkce_pair()
    attempt = ConnectAttempt.objects.create(
        link=link,
        platform=platform.value,
        nonce=secrets.token_urlsafe(16),
        code_verifier=verifier,
        link_token=token,
        expires_at=link.expires_at,
    )
    state = signing.dumps({"a": attempt.id, "n": attempt.nonce}, salt=STATE_SALT, compress=True)
    try:
        url = client.authorize_url(redirect_uri=callback_url(platform), state=state, code_challenge=challenge)
    except (PlatformError, NotSupported) as exc:
        raise _platform_failure(platform, exc)
    return ConnectStep(redirect_to=url)


def connect_submit_credentials(*, token: str, platform_name: str, fields: dict[str, str]) -> ConnectStep:
    """The credentials form was posted: validate against the platform and connect, or return the
    form again with the problem (missing fields, or the platform's refusal)."""
    link = live_link(token)
    with _on_link(link, platform_name.upper()[:40]):
        return _submit(link, token, parse_platform(platform_name), fields)


def _submit(link: ConnectLink, token: str, platform: Platform, fields: dict[str, str]) -> ConnectStep:
    _require_offered(link, platform)
    client = _client(platform)
    if client.connect_method != "credentials":
        raise ConnectPageError(400, "Not supported", f"{platform.value} connects through its own sign-in page.")
    wanted = tuple(client.credential_fields)
    values = {name: (fields.get(name) or "").strip() for name in wanted}
    missing = [name for name, value in values.items() if not value]
    if missing:
        return ConnectStep(form_fields=wanted, errors=[f"{name} is required" for name in missing])
    try:
        identities = client.connect_with_credentials(values)
    except (AuthError, Permanent) as exc:
        return ConnectStep(form_fields=wanted, errors=[f"{platform.value} refused these details: {exc.message}"])
    except (PlatformError, NotSupported) as exc:
        raise _platform_failure(platform, exc)
    return ConnectStep(outcome=_finish(link, platform, identities, token))


def connect_complete_oauth(
    *, platform_name: str, code: str, state: str, error: str = "", error_description: str = ""
) -> ConnectOutcome:
    """``GET /connect/callback/<PLATFORM>``: verify the signed state, claim its attempt (once),
    exchange the code and connect every account it yields."""
    platform = parse_platform(platform_name)
    try:
        payload = signing.loads(state, salt=STATE_SALT, max_age=LINK_LIFETIME)
        attempt_id, nonce = str(payload["a"]), str(payload["n"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise ConnectPageError(400, "Invalid request", "This sign-in response is not valid. Start again from the link.")
    attempt = ConnectAttempt.objects.select_related("link").filter(id=attempt_id, nonce=nonce).first()
    if attempt is None:
        raise ConnectPageError(404, "Link not found", "This connect link does not exist or was deleted.")
    if attempt.platform != platform.value:
        raise ConnectPageError(400, "Invalid request", "This sign-in response belongs to another platform.")
    with _on_link(attempt.link, platform.value):
        return _complete(attempt, platform, code, error, error_description)


def _complete(
    attempt: ConnectAttempt, platform: Platform, code: str, error: str, error_description: str
) -> ConnectOutcome:
    now = timezone.now()
    claimed = ConnectAttempt.objects.filter(id=attempt.id, used_at__isnull=True, expires_at__gt=now).update(used_at=now)
    if not claimed:
        if attempt.used_at is not None or ConnectAttempt.objects.filter(id=attempt.id, used_at__isnull=False).exists():
            raise ConnectPageError(
                409, "Already used", "This sign-in response was already used. Start again from the link."
            )
        raise ConnectPageError(410, "Link expired", "This connect link has expired. Ask for a new one.")
    link = attempt.link
    if link.expires_at <= now:
        raise ConnectPageError(410, "Link expired", "This connect link has expired. Ask for a new one.")
    if error:
        raise ConnectPageError(
            400, "Connection declined", f"{platform.value} did not grant access: {(error_description or error)[:300]}"
        )
    if not code:
        raise ConnectPageError(400, "Invalid request", "The platform sent no authorization code.")
    client = _client(platform)
    try:
        identities = client.exchange_code(
            code=code, redirect_uri=callback_url(platform), code_verifier=attempt.code_verifier
        )
    except (PlatformError, NotSupported) as exc:
        logger.info("connect callback for %s failed: %s", platform.value, exc.__class__.__name__)
        raise _platform_failure(platform, exc)
    return _finish(link, platform, identities, attempt.link_token)
