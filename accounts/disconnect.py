"""Disconnecting an account (issue 31, ``DELETE /social-accounts/{id}``).

The account row stays, with status ``disconnected`` and no tokens, so its posts, their entries
and its analytics keep pointing at it; reconnecting the same platform account (same workspace,
platform and external id) brings the same row back to ``active``.

Order of the steps, and why:

1. One transaction, the account row locked: status ``disconnected``, the stored tokens emptied,
   ``tokenRevocation`` ``pending``; its ACTIVE series pause (``CONNECTION_REMOVED``, their
   upcoming post deleted, as CONTRACT.md §6 says for a removed account); its posting queue is
   deleted; its entries that were not sent fail with ``account_disconnected`` and their posts are
   finalized with their events (``posts.services.disconnect``); ``account.disconnected`` is emitted.
   From the commit on no worker can read the token (``account_credentials`` refuses a
   disconnected account), and a worker that had claimed an entry but not started sending loses
   its fencing token.
2. Outside any transaction: the token read under the lock is revoked at the platform where its
   client has a revoke call. A failure does not undo the disconnect; it is recorded as
   ``tokenRevocation: failed`` with the normalized errorCode (never the platform's text, which can
   quote a URL that carries the token) and logged the same way.
3. The revocation's outcome is written (only over ``pending``).

A second call finds the account disconnected and answers the same record without doing anything.
"""

from __future__ import annotations

import logging
from functools import partial

from django.db import transaction
from django.utils import timezone

from accounts.models import AccountStatus, PostingQueue, SocialAccount, TokenRevocation
from accounts.selectors import account_get_any
from accounts.services import account_event_data
from audit.actors import Actor
from audit.services import record
from platforms.base import Credentials, NotSupported, PlatformError
from platforms.registry import get_client
from posts.recurrence.services import series_account_removed
from posts.services.disconnect import entries_fail_for_disconnected_account
from webhooks.events import emit_event

logger = logging.getLogger(__name__)


def disconnected_event_data(account: SocialAccount) -> dict[str, object]:
    """The ``data`` of ``account.disconnected``: the ``account.unauthorized`` shape with the
    moment of the disconnect."""
    data = account_event_data(account)
    data["account"]["disconnectedAt"] = account.disconnected_at
    data["account"].pop("reason", None)
    return data


def account_disconnect(*, workspace_id: str, account_id: str, actor: Actor) -> SocialAccount:
    """Disconnect the account (404 when not in this workspace) as the module docstring says and
    return it. Idempotent: an account already disconnected is returned as it is."""
    account = account_get_any(workspace_id=workspace_id, account_id=account_id)
    if account.status == AccountStatus.DISCONNECTED:
        return account
    creds = _disconnect_locked(account_id=account.id, actor=actor)
    if creds is not None:
        _revoke_and_record(account.platform, account.id, creds)
    return SocialAccount.objects.get(id=account.id)


def workspace_accounts_disconnect(*, workspace_id: str, actor: Actor) -> int:
    """Disconnect every account of a workspace being deleted, as ``DELETE /social-accounts/{id}``
    does: step 1 for each in the caller's transaction, the revocations once it commits. Idempotent
    (a disconnected account is left as it is). Returns how many this call disconnected."""
    disconnected = 0
    accounts = SocialAccount.objects.filter(workspace_id=workspace_id).exclude(status=AccountStatus.DISCONNECTED)
    for account_id, platform in accounts.order_by("id").values_list("id", "platform"):
        creds = _disconnect_locked(account_id=account_id, actor=actor)
        if creds is not None:
            disconnected += 1
            transaction.on_commit(partial(_revoke_and_record, platform, account_id, creds), robust=True)
    return disconnected


def _revoke_and_record(platform: str, account_id: str, creds: Credentials) -> None:
    """Steps 2 and 3."""
    outcome, error_code = _revoke(platform, account_id, creds)
    SocialAccount.objects.filter(id=account_id, token_revocation=TokenRevocation.PENDING).update(
        token_revocation=outcome, token_revocation_error=error_code
    )


@transaction.atomic
def _disconnect_locked(*, account_id: str, actor: Actor) -> Credentials | None:
    """Step 1. Returns the credentials to revoke, or None when another call disconnected the
    account first."""
    account = SocialAccount.objects.select_related("workspace").select_for_update(of=("self",)).get(id=account_id)
    if account.status == AccountStatus.DISCONNECTED:
        return None
    creds = account.credentials()
    series_account_removed(workspace_id=account.workspace_id, account_id=account.id)
    PostingQueue.objects.filter(account=account).delete()
    failed = entries_fail_for_disconnected_account(account_id=account.id)
    account.status = AccountStatus.DISCONNECTED
    account.disconnected_at = timezone.now()
    account.access_token = ""
    account.refresh_token = ""
    account.token_expires_at = None
    account.token_revocation = TokenRevocation.PENDING
    account.token_revocation_error = ""
    account.save(
        update_fields=[
            "status",
            "disconnected_at",
            "access_token",
            "refresh_token",
            "token_expires_at",
            "token_revocation",
            "token_revocation_error",
            "updated_at",
        ]
    )
    emit_event(workspace_id=account.workspace_id, name="account.disconnected", data=disconnected_event_data(account))
    record(
        actor=actor,
        action="account.disconnect",
        organization_id=account.workspace.organization_id,
        workspace_id=account.workspace_id,
        target_type="social_account",
        target_id=account.id,
        changes={"platform": account.platform, "failedEntries": len(failed)},
    )
    logger.info("account %s (%s) disconnected; %d unsent entries failed", account.id, account.platform, len(failed))
    return creds


def _revoke(platform: str, account_id: str, creds: Credentials) -> tuple[str, str]:
    """Step 2: (tokenRevocation, errorCode of a failure)."""
    if not creds.access_token:
        return TokenRevocation.NOT_SUPPORTED, ""
    try:
        get_client(platform).revoke_token(creds)
    except NotSupported:
        return TokenRevocation.NOT_SUPPORTED, ""
    except PlatformError as exc:
        logger.warning("revoking the token of account %s (%s) failed: %s", account_id, platform, exc.error_code)
        return TokenRevocation.FAILED, str(exc.error_code)
    except Exception as exc:  # a client bug must not turn a committed disconnect into a 500
        logger.warning("revoking the token of account %s (%s) raised %s", account_id, platform, type(exc).__name__)
        return TokenRevocation.FAILED, "platform_unavailable"
    logger.info("revoked the token of account %s (%s)", account_id, platform)
    return TokenRevocation.REVOKED, ""
