"""Reads of social accounts and connect links, always scoped to one workspace."""

from __future__ import annotations

import datetime as dt
import hashlib

from django.db.models import QuerySet
from django.utils import timezone

from accounts.errors import AccountNotFound
from accounts.models import AccountStatus, ConnectLink, SocialAccount
from platforms.base import Platform


def connected_accounts(*, workspace_id: str) -> QuerySet[SocialAccount]:
    """The workspace's accounts that are still connected (active or unauthorized). A disconnected
    account keeps its row for history; only ``GET /social-accounts/{id}`` and the disconnect itself
    still find it (:func:`account_get_any`)."""
    return SocialAccount.objects.filter(workspace_id=workspace_id).exclude(status=AccountStatus.DISCONNECTED)


def account_list(*, workspace_id: str) -> QuerySet[SocialAccount]:
    """Every connected account of the workspace, oldest connection first."""
    return connected_accounts(workspace_id=workspace_id).order_by("connected_at", "id")


def account_get(*, workspace_id: str, account_id: str) -> SocialAccount:
    """The connected account, or 404 ``Account not found`` (also for accounts of other
    workspaces, and for disconnected ones)."""
    account = connected_accounts(workspace_id=workspace_id).filter(id=account_id).first()
    if account is None:
        raise AccountNotFound()
    return account


def account_get_any(*, workspace_id: str, account_id: str) -> SocialAccount:
    """The account whatever its status (disconnected included), or 404 ``Account not found``
    (also for accounts of other workspaces)."""
    account = SocialAccount.objects.filter(workspace_id=workspace_id, id=account_id).first()
    if account is None:
        raise AccountNotFound()
    return account


def accounts_by_ids(*, workspace_id: str, ids: list[str]) -> dict[str, SocialAccount]:
    """The workspace's connected accounts among ``ids``, keyed by id; unknown (and disconnected)
    ids are simply absent."""
    if not ids:
        return {}
    return {a.id: a for a in connected_accounts(workspace_id=workspace_id).filter(id__in=set(ids))}


def account_by_page_id(*, workspace_id: str, page_id: str) -> SocialAccount | None:
    """The workspace's FACEBOOK account of that page, if any."""
    if not page_id:
        return None
    return (
        connected_accounts(workspace_id=workspace_id)
        .filter(platform=Platform.FACEBOOK.value, page_id=page_id)
        .order_by("connected_at", "id")
        .first()
    )


def facebook_accounts_by_page_ids(*, workspace_id: str, page_ids: list[str]) -> dict[str, SocialAccount]:
    """The workspace's FACEBOOK accounts among ``page_ids``, keyed by page id (the oldest
    connection of a page, as ``account_by_page_id``); unknown page ids are simply absent."""
    wanted = {page_id for page_id in page_ids if page_id}
    if not wanted:
        return {}
    found: dict[str, SocialAccount] = {}
    accounts = (
        connected_accounts(workspace_id=workspace_id)
        .filter(platform=Platform.FACEBOOK.value, page_id__in=wanted)
        .order_by("connected_at", "id")
    )
    for account in accounts:
        found.setdefault(account.page_id, account)
    return found


def account_by_id_or_page_id(*, workspace_id: str, id_or_page_id: str) -> SocialAccount:
    """By account id first, then by FACEBOOK page id; 404 when neither matches."""
    account = connected_accounts(workspace_id=workspace_id).filter(id=id_or_page_id).first()
    if account is None:
        account = account_by_page_id(workspace_id=workspace_id, page_id=id_or_page_id)
    if account is None:
        raise AccountNotFound()
    return account


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def connect_link_by_token(*, token: str) -> ConnectLink | None:
    """The link of a token (expired ones included; callers decide), or None."""
    if not token or len(token) > 200:
        return None
    return ConnectLink.objects.select_related("workspace").filter(token_hash=token_hash(token)).first()


def connect_link_is_live(link: ConnectLink) -> bool:
    return link.expires_at > timezone.now()


def facebook_account_ids() -> list[str]:
    """Every FACEBOOK page account of every workspace (for the twice-daily check)."""
    return list(
        SocialAccount.objects.filter(platform=Platform.FACEBOOK.value)
        .exclude(status=AccountStatus.DISCONNECTED)
        .values_list("id", flat=True)
    )


def accounts_with_expiring_tokens(*, within_seconds: int, refreshable: list[str]) -> list[str]:
    """Active accounts of refreshable platforms whose token expires within the window."""
    horizon = timezone.now() + dt.timedelta(seconds=within_seconds)
    return list(
        SocialAccount.objects.filter(
            platform__in=refreshable, status="active", token_expires_at__isnull=False, token_expires_at__lte=horizon
        )
        .order_by("token_expires_at")
        .values_list("id", flat=True)
    )
