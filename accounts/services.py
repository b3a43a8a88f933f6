"""Writes on social accounts: connecting, token refresh, checks and the unauthorized mark.

Every function here is keyword-only and safe to call twice: the unauthorized mark changes (and
emits ``account.unauthorized``) once per transition, a token is refreshed by one caller at a
time (``SELECT … FOR UPDATE`` on the account row, expiry re-checked under the lock), and the
history import of a connected account is enqueued only after the connecting transaction commits.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from typing import Any

from celery import current_app as app
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.errors import (
    AccountDisconnected,
    AccountNotFound,
    AccountUnauthorized,
    AudioSearchRejected,
    AudioUnavailable,
    BoardRequestRefused,
    NotFacebookPage,
    PlatformUnavailable,
)
from accounts.models import AccountStatus, SocialAccount
from accounts.selectors import account_by_id_or_page_id, account_get
from core.errors import BadRequest
from platforms.base import (
    AccountProfile,
    AudioItem,
    AuthError,
    Board,
    ConnectedIdentity,
    Credentials,
    NotSupported,
    Permanent,
    Platform,
    PlatformError,
)
from platforms.capabilities import CAPABILITIES
from platforms.registry import get_client
from webhooks.events import emit_event
from workspaces.plans import CONNECTED_ACCOUNTS, require_within

logger = logging.getLogger(__name__)

HISTORY_IMPORT_TASK = "analytics.import_account_history"
REFRESH_LEAD = dt.timedelta(minutes=5)


# --- the unauthorized mark ---------------------------------------------------------------


def account_event_data(account: SocialAccount) -> dict[str, Any]:
    """The ``data`` of ``account.unauthorized`` (spec §6)."""
    data: dict[str, Any] = {
        "id": account.id,
        "platform": account.platform,
        "displayName": account.display_name,
        "status": account.status,
        "reason": account.unauthorized_reason,
    }
    if account.platform == Platform.FACEBOOK:
        data["pageId"] = account.page_id or None
    return {"account": data}


@transaction.atomic
def account_mark_unauthorized(*, account_id: str, reason: str) -> bool:
    """Mark the active account ``unauthorized`` with the platform's stated reason. Only the call
    that makes the transition (a conditional UPDATE) emits ``account.unauthorized``, in the same
    transaction; it returns True. Already unauthorized, disconnected or unknown: nothing happens,
    False."""
    reason = (reason or "The platform rejected the token").strip()[:2000]
    # Only an active account becomes unauthorized: a disconnected one stays disconnected (a worker
    # that read the token before the disconnect may see the platform reject it afterwards).
    changed = SocialAccount.objects.filter(id=account_id, status=AccountStatus.ACTIVE).update(
        status=AccountStatus.UNAUTHORIZED, unauthorized_reason=reason, updated_at=timezone.now()
    )
    if not changed:
        return False
    account = SocialAccount.objects.get(id=account_id)
    emit_event(workspace_id=account.workspace_id, name="account.unauthorized", data=account_event_data(account))
    logger.info("account %s (%s) marked unauthorized", account.id, account.platform)
    return True


def account_clear_unauthorized(*, account_id: str) -> bool:
    """Clear the mark (the token works again). True when it was set. No event."""
    return bool(
        SocialAccount.objects.filter(id=account_id, status=AccountStatus.UNAUTHORIZED).update(
            status=AccountStatus.ACTIVE, unauthorized_reason="", updated_at=timezone.now()
        )
    )


# --- tokens ------------------------------------------------------------------------------


def _needs_refresh(account: SocialAccount, lead: dt.timedelta) -> bool:
    if account.status != AccountStatus.ACTIVE or account.token_expires_at is None:
        return False
    if not CAPABILITIES[Platform(account.platform)].refreshable_token:
        return False
    return account.token_expires_at <= timezone.now() + lead


def _store_credentials(account: SocialAccount, creds: Credentials) -> None:
    account.access_token = creds.access_token
    if creds.refresh_token:
        account.refresh_token = creds.refresh_token
    account.token_expires_at = creds.expires_at
    if creds.extra:
        account.credentials_extra = {**(account.credentials_extra or {}), **creds.extra}
    account.save(update_fields=["access_token", "refresh_token", "token_expires_at", "credentials_extra", "updated_at"])


def account_refresh_token(*, account_id: str, lead: dt.timedelta = REFRESH_LEAD) -> Credentials:
    """Refresh the token when it expires within ``lead`` (platforms with refresh tokens only)
    and return the credentials to use. Single flight: the account row is locked for the refresh
    and the expiry re-checked under the lock, so concurrent callers refresh once. A refresh
    AuthError marks the account unauthorized (committed) and is re-raised; any other platform
    error leaves the account as it was and is re-raised."""
    auth_failure: AuthError | None = None
    with transaction.atomic():
        try:
            account = SocialAccount.objects.select_for_update().get(id=account_id)
        except SocialAccount.DoesNotExist:
            raise AccountNotFound()
        if not _needs_refresh(account, lead):
            return account.credentials()
        client = get_client(account.platform)
        try:
            fresh = client.refresh_token(account.credentials())
        except NotSupported:
            return account.credentials()
        except AuthError as exc:
            account_mark_unauthorized(account_id=account_id, reason=exc.message)
            auth_failure = exc
        else:
            _store_credentials(account, fresh)
            logger.info("refreshed the token of account %s (%s)", account.id, account.platform)
            return account.credentials()
    assert auth_failure is not None  # every other path returned inside the transaction
    raise auth_failure


def account_fresh_credentials(*, account_id: str) -> Credentials:
    """:func:`account_credentials` of the account read by id (404 when it is gone)."""
    try:
        account = SocialAccount.objects.get(id=account_id)
    except SocialAccount.DoesNotExist:
        raise AccountNotFound()
    return account_credentials(account=account)


def account_credentials(*, account: SocialAccount) -> Credentials:
    """The credentials of an account row the caller has just read, refreshed first when the token
    expires within 5 minutes and the platform has refresh tokens (a refresh reads the row afresh,
    under its lock). A transient refresh failure never marks the account: the current token is
    returned while it is still valid, otherwise the error is re-raised. A disconnected account has
    no token: 404 ``account_disconnected``."""
    if account.status == AccountStatus.DISCONNECTED:
        raise AccountDisconnected()
    if not _needs_refresh(account, REFRESH_LEAD):
        return account.credentials()
    try:
        return account_refresh_token(account_id=account.id, lead=REFRESH_LEAD)
    except AuthError:
        raise
    except PlatformError:
        account.refresh_from_db()
        if account.token_expires_at is not None and account.token_expires_at > timezone.now():
            logger.warning("token refresh of account %s failed transiently; using the current token", account.id)
            return account.credentials()
        raise


def _unreachable(platform: str, exc: PlatformError) -> PlatformUnavailable:
    # Transport errors can quote request URLs, and some platforms carry tokens in them: the
    # client sees a generic sentence, the log only the error class.
    logger.warning("%s call failed: %s", platform, exc.__class__.__name__)
    retry = " (rate limited)" if exc.error_code == "rate_limited" else ""
    return PlatformUnavailable(f"{platform} could not be reached{retry}; try again later")


# --- checks ------------------------------------------------------------------------------


def _apply_profile(account: SocialAccount, profile: AccountProfile) -> None:
    account.display_name = profile.display_name or account.display_name
    account.username = profile.username or account.username
    account.avatar_url = profile.avatar_url or account.avatar_url
    if account.platform == Platform.FACEBOOK and profile.page_id:
        account.page_id = profile.page_id
    if account.platform == Platform.INSTAGRAM:
        account.supports_instagram_audio = profile.supports_instagram_audio


def account_verify(*, account_id: str) -> SocialAccount:
    """Ask the platform whether the stored token still works. Rejected: the account is marked
    unauthorized (event once per transition). Working: the mark is cleared and the profile
    refreshed. Either way ``last_checked_at`` is set. A transient failure changes nothing and
    raises 502 ``platform_unavailable``; a refusal other than the token raises 400."""
    try:
        account = SocialAccount.objects.exclude(status=AccountStatus.DISCONNECTED).get(id=account_id)
    except SocialAccount.DoesNotExist:
        raise AccountNotFound()
    client = get_client(account.platform)
    profile: AccountProfile | None = None
    try:
        creds = account_fresh_credentials(account_id=account_id)
        profile = client.check_token(creds)
    except AuthError as exc:
        account_mark_unauthorized(account_id=account_id, reason=exc.message)
    except NotSupported:
        raise BadRequest(f"{account.platform} accounts cannot be checked", code="check_not_supported")
    except Permanent as exc:
        raise BadRequest(f"The platform refused the check: {exc.message}", code="check_refused")
    except PlatformError as exc:
        raise _unreachable(account.platform, exc)
    with transaction.atomic():
        account = SocialAccount.objects.select_for_update().get(id=account_id)
        if profile is not None:
            account_clear_unauthorized(account_id=account_id)
            account.refresh_from_db()
            _apply_profile(account, profile)
        account.last_checked_at = timezone.now()
        account.save()
    return account


def account_check(*, workspace_id: str, id_or_page_id: str) -> dict[str, Any]:
    """``POST /social-accounts/{id}/check``: FACEBOOK page accounts only (by account id or by
    ``pageId``; other platforms 400 ``not_facebook_page``), see :func:`account_verify`."""
    account = account_by_id_or_page_id(workspace_id=workspace_id, id_or_page_id=id_or_page_id)
    if account.platform != Platform.FACEBOOK:
        raise NotFacebookPage()
    account = account_verify(account_id=account.id)
    return {
        "id": account.id,
        "platform": account.platform,
        "displayName": account.display_name,
        "pageId": account.page_id or None,
        "status": account.status,
        "unauthorizedReason": account.unauthorized_reason or None,
        "checkedAt": account.last_checked_at,
    }


# --- connecting (disconnecting: accounts.disconnect) ---------------------------------------


def _enqueue_history_import(account_id: str) -> None:
    app.send_task(HISTORY_IMPORT_TASK, args=[account_id])


def _fill(account: SocialAccount, identity: ConnectedIdentity) -> None:
    profile, creds = identity.profile, identity.credentials
    account.display_name = profile.display_name or profile.username or profile.external_id
    account.username = profile.username
    account.avatar_url = profile.avatar_url
    account.page_id = (profile.page_id or profile.external_id) if account.platform == Platform.FACEBOOK else ""
    account.supports_instagram_audio = account.platform == Platform.INSTAGRAM and profile.supports_instagram_audio
    account.scopes = list(identity.scopes)
    account.access_token = creds.access_token
    account.refresh_token = creds.refresh_token
    account.token_expires_at = creds.expires_at
    account.credentials_extra = dict(creds.extra)
    account.status = AccountStatus.ACTIVE
    account.unauthorized_reason = ""
    account.disconnected_at = None
    account.token_revocation = ""
    account.token_revocation_error = ""


@transaction.atomic
def accounts_connect(
    *, workspace_id: str, platform: Platform | str, identities: list[ConnectedIdentity]
) -> list[SocialAccount]:
    """Create or reconnect one account per identity (same workspace, platform and external
    id = the same account: it keeps its id and its ``connectedAt``, gets the new tokens, and
    loses any unauthorized or disconnected mark). After commit, each account's 180-day history import is queued
    (``analytics.import_account_history``, idempotent on the analytics side). A new account past
    the organization plan's connected-account limit: 403 ``subscription_required`` (nothing of
    this call is kept)."""
    platform = Platform(platform)
    saved: list[SocialAccount] = []
    for identity in identities:
        external_id = identity.profile.external_id or identity.credentials.external_id
        lookup = {"workspace_id": workspace_id, "platform": platform.value, "external_id": external_id}
        account = SocialAccount.objects.select_for_update().filter(**lookup).first()
        if account is None:
            require_within(CONNECTED_ACCOUNTS, workspace_id=workspace_id)
            account = SocialAccount(**lookup)
            _fill(account, identity)
            try:
                with transaction.atomic():
                    account.save(force_insert=True)
            except IntegrityError:  # connected concurrently by another request: reconnect it
                account = SocialAccount.objects.select_for_update().get(**lookup)
                _fill(account, identity)
                account.save()
        else:
            _fill(account, identity)
            account.save()
        saved.append(account)
        transaction.on_commit(functools.partial(_enqueue_history_import, account.id), robust=True)
    return saved


# --- platform helpers --------------------------------------------------------------------


def account_pinterest_boards(*, workspace_id: str, account_id: str) -> list[Board]:
    """Every board the PINTEREST account can pin to. 404 when not found or not PINTEREST; 400
    ``account_unauthorized`` when the token is rejected (the account is marked), 400
    ``board_request_refused`` for any other refusal; 502 when the platform is unreachable."""
    account = account_get(workspace_id=workspace_id, account_id=account_id)
    if account.platform != Platform.PINTEREST:
        raise AccountNotFound()
    try:
        creds = account_credentials(account=account)
        return get_client(account.platform).list_boards(creds)
    except AuthError as exc:
        account_mark_unauthorized(account_id=account.id, reason=exc.message)
        raise AccountUnauthorized(f"PINTEREST refused the board request; reconnect the account: {exc.message}")
    except (Permanent, NotSupported) as exc:
        raise BoardRequestRefused(f"PINTEREST refused the board request: {exc}")
    except PlatformError as exc:
        raise _unreachable(account.platform, exc)


def account_instagram_audio(*, workspace_id: str, account_id: str, audio_type: str, query: str = "") -> list[AudioItem]:
    """Audio cleared for third-party publishing (trending when ``query`` is empty). 404 when
    not found; 400 ``instagram_audio_unavailable`` unless an INSTAGRAM account connected through
    FACEBOOK login that supports audio; 400 ``audio_search_rejected`` when the platform refuses
    (a rejected token also marks the account); 502 when it is unreachable."""
    account = account_get(workspace_id=workspace_id, account_id=account_id)
    if account.platform != Platform.INSTAGRAM or not account.supports_instagram_audio:
        raise AudioUnavailable()
    try:
        creds = account_credentials(account=account)
        return get_client(account.platform).search_audio(creds, audio_type=audio_type, query=query)
    except AuthError as exc:
        account_mark_unauthorized(account_id=account.id, reason=exc.message)
        raise AudioSearchRejected(f"INSTAGRAM rejected the token; reconnect the account: {exc.message}")
    except (Permanent, NotSupported) as exc:
        raise AudioSearchRejected(f"INSTAGRAM rejected the audio search: {exc}")
    except PlatformError as exc:
        raise _unreachable(account.platform, exc)
