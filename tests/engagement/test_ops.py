"""What staff see of the inbox: the dashboard's comment sync lag and backlog (overall and per
workspace), and the same figures and the inbox's counters in /metrics."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from engagement.actions import COLUMNS, _write
from engagement.models import ActionKind, ActionStatus, CommentAction, CommentSource
from engagement.sync import comments_announce
from posts.pipeline import step
from tests.engagement.test_api import _comment
from tests.factories import WorkspaceFactory
from tests.ops.test_dashboard import shown_figures
from tests.ops.test_metrics import TOKEN, metrics_token, scrape, value
from workspaces.models import Workspace

__all__ = ["metrics_token"]
pytestmark = pytest.mark.django_db


def _seed(workspace: Workspace, *, waited_minutes: int) -> None:
    """One source due ``waited_minutes`` ago, one not due, two unanswered comments (one found
    ``waited_minutes`` ago), an answered one, a reply of the account's own, one open action."""
    now = timezone.now()
    first = _comment(workspace, "FACEBOOK")
    _comment(workspace, "FACEBOOK", target=first.target)
    answered = _comment(workspace, "FACEBOOK", target=first.target, answered=True)
    _comment(workspace, "FACEBOOK", target=first.target, parent=answered, from_account=True)
    type(first).objects.filter(id=first.id).update(first_seen_at=now - dt.timedelta(minutes=waited_minutes))
    CommentSource.objects.create(
        workspace=workspace,
        account=first.account,
        platform="FACEBOOK",
        target=first.target,
        platform_post_id=first.platform_post_id,
        next_due_at=now - dt.timedelta(minutes=waited_minutes),
    )
    later = _comment(workspace, "FACEBOOK")
    CommentSource.objects.create(
        workspace=workspace,
        account=later.account,
        platform="FACEBOOK",
        target=later.target,
        platform_post_id=later.platform_post_id,
        next_due_at=now + dt.timedelta(minutes=5),
    )
    CommentAction.objects.create(workspace=workspace, comment=later, kind=ActionKind.HIDE, due_at=now)


def test_the_dashboard_shows_the_sync_lag_and_the_backlog(admin_client: Any) -> None:
    ours, theirs = WorkspaceFactory(), WorkspaceFactory()
    _seed(ours, waited_minutes=10)
    _seed(theirs, waited_minutes=30)
    overall = admin_client.get("/admin/dashboard/")
    shown = shown_figures(overall.content.decode())
    assert (shown["comment-sources-due"], shown["comments-unanswered"], shown["comment-actions-open"]) == (2, 6, 2)
    assert 30 * 60 <= shown["comment-sync-lag"] < 31 * 60
    one = shown_figures(admin_client.get("/admin/dashboard/", {"workspace": ours.pk}).content.decode())
    assert (one["comment-sources-due"], one["comments-unanswered"], one["comment-actions-open"]) == (1, 3, 1)
    assert 10 * 60 <= one["comment-sync-lag"] < 11 * 60


def test_metrics_report_the_inbox(client: Any, metrics_token: str) -> None:
    workspace = WorkspaceFactory()
    _seed(workspace, waited_minutes=10)
    before = scrape(client, TOKEN)
    assert value(before, "crosspost_comment_sync_due_sources") == 1
    assert value(before, "crosspost_comments_unanswered") == 3
    assert value(before, "crosspost_comment_actions_open") == 1
    assert 600 <= value(before, "crosspost_comment_sync_lag_seconds") < 660
    assert value(before, "crosspost_comments_oldest_unanswered_seconds") >= 600

    account_id = CommentSource.objects.filter(next_due_at__lte=timezone.now()).get().account_id
    assert comments_announce(account_id=account_id) == 3  # every comment of that account but its own reply
    action = CommentAction.objects.get()
    [claim] = step.claim_rows(COLUMNS, [action.id], now=timezone.now())
    assert _write(claim, ActionStatus.DONE)
    after = scrape(client, TOKEN)
    received = "crosspost_comments_received_total"
    assert value(after, received, platform="FACEBOOK") == value(before, received, platform="FACEBOOK") + 3
    done = {"kind": "HIDE", "outcome": "done"}
    actions = "crosspost_comment_actions_total"
    assert value(after, actions, **done) == value(before, actions, **done) + 1
    assert value(after, "crosspost_comment_actions_open") == 0
