"""Celery tasks of the accounts app: ids in, one service call, idempotent."""

from __future__ import annotations

import datetime as dt
import logging

from celery import shared_task

from accounts import selectors, services
from accounts.connect import connect_links_purge
from accounts.errors import AccountNotFound
from core.errors import ApplicationError
from platforms.base import Platform, PlatformError
from platforms.capabilities import CAPABILITIES

logger = logging.getLogger(__name__)

# Refresh this long before expiry; beat runs every few minutes, so every token gets several tries.
PROACTIVE_REFRESH_WINDOW = dt.timedelta(minutes=30)


@shared_task(name="accounts.check_facebook_pages", ignore_result=True)
def check_facebook_pages() -> int:
    """Twice a day: queue a token check of every FACEBOOK page account."""
    ids = selectors.facebook_account_ids()
    for account_id in ids:
        check_account.delay(account_id)
    return len(ids)


@shared_task(name="accounts.check_account", ignore_result=True)
def check_account(account_id: str) -> None:
    """Check one account's token; marks or clears ``unauthorized`` once per transition."""
    try:
        services.account_verify(account_id=account_id)
    except AccountNotFound:
        return  # disconnected meanwhile
    except ApplicationError as exc:  # platform unreachable or refusing: the next run tries again
        logger.warning("check of account %s did not complete: %s", account_id, exc.code)


@shared_task(name="accounts.purge_expired_connect_links", ignore_result=True)
def purge_expired_connect_links() -> int:
    """Daily: forget connect links that expired a week ago (their pages already answer 410)."""
    return connect_links_purge()


@shared_task(name="accounts.refresh_expiring_tokens", ignore_result=True)
def refresh_expiring_tokens() -> int:
    """Every few minutes: queue a refresh of every token that expires within the window."""
    refreshable = [p.value for p in Platform if CAPABILITIES[p].refreshable_token]
    ids = selectors.accounts_with_expiring_tokens(
        within_seconds=int(PROACTIVE_REFRESH_WINDOW.total_seconds()), refreshable=refreshable
    )
    for account_id in ids:
        refresh_account_token.delay(account_id)
    return len(ids)


@shared_task(name="accounts.refresh_account_token", ignore_result=True)
def refresh_account_token(account_id: str) -> None:
    """Refresh one token if it still expires within the window (single flight under a row lock;
    a second run finds it fresh and does nothing). A transient failure is left for the next run."""
    try:
        services.account_refresh_token(account_id=account_id, lead=PROACTIVE_REFRESH_WINDOW)
    except AccountNotFound:
        return
    except PlatformError as exc:
        logger.warning("token refresh of account %s failed: %s", account_id, exc.__class__.__name__)
