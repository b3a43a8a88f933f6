"""Writes the inbox's API asks for: an action on a comment (reply, hide, unhide, delete, like),
queued as a platform step (``engagement.actions``), and the on-demand sync (``engagement.sync``)."""

from __future__ import annotations

from functools import partial

from django.db import transaction
from django.utils import timezone

from accounts.models import AccountStatus
from core.errors import ValidationFailed
from engagement.enqueue import enqueue_actions
from engagement.errors import CommentAccountUnavailable, CommentActionNotSupported, CommentDeleted, CommentNotFound
from engagement.models import ActionKind, ActionStatus, Comment, CommentAction
from platforms.base import Platform
from platforms.capabilities import CAPABILITIES, validate_reply

OPEN = (ActionStatus.PENDING, ActionStatus.SENDING)
# What the platform's ``comment_actions`` must offer for each action.
NEEDS = {
    ActionKind.REPLY: "reply",
    ActionKind.HIDE: "hide",
    ActionKind.UNHIDE: "hide",
    ActionKind.LIKE: "like",
}
VERBS = {
    ActionKind.REPLY: "reply to",
    ActionKind.HIDE: "hide",
    ActionKind.UNHIDE: "unhide",
    ActionKind.DELETE: "delete",
    ActionKind.LIKE: "like",
}


def needed_capability(kind: ActionKind, comment: Comment) -> str:
    """The ``comment_actions`` entry an action on ``comment`` needs: a delete needs "delete_own"
    for the account's own reply and "delete_others" for anyone else's comment."""
    if kind == ActionKind.DELETE:
        return "delete_own" if comment.from_account else "delete_others"
    return NEEDS[kind]


def reply_text_problems(platform: str, text: str) -> list[str]:
    """Every reason ``platform`` would refuse ``text`` as a reply, each naming ``text`` (its reply
    limit, counted as its posts are, ``platforms.capabilities.validate_reply``; its byte limit where
    it has one)."""
    caps = CAPABILITIES[Platform(platform)]
    problems = [f"text: {message}" for message in validate_reply(Platform(platform), text)]
    size = len(text.encode())
    if caps.text_byte_limit is not None and size > caps.text_byte_limit:
        problems.append(f"text: {platform} reply is {size} bytes in UTF-8; the limit is {caps.text_byte_limit}")
    return problems


def comment_action_request(*, workspace_id: str, comment_id: str, kind: ActionKind, text: str = "") -> CommentAction:
    """Queue ``kind`` on the comment as a platform step (due now; after the comment's earlier open
    actions). Refused before anything is queued: 404 for a comment of another workspace, 400
    ``comment_action_not_supported`` where the platform's API has no such call, 400
    ``comment_deleted``, 400 ``account_unauthorized`` (or disconnected), a 400 naming ``text`` for
    a reply the platform would refuse. A hide, unhide, delete or like while the same one is still
    open, and a delete or like already done, answers that action again: nothing is sent twice.
    Each reply is a reply of its own (``Idempotency-Key`` makes a retried request one)."""
    with transaction.atomic():
        comment = (
            Comment.objects.select_for_update(of=("self",))
            .select_related("account")
            .filter(workspace_id=workspace_id, id=comment_id)
            .first()
        )
        if comment is None:
            raise CommentNotFound()
        needed = needed_capability(kind, comment)
        if needed not in CAPABILITIES[Platform(comment.platform)].comment_actions:
            whose = "the account's own" if needed == "delete_own" else ("others'" if needed == "delete_others" else "")
            what = f"{VERBS[kind]} {whose} comments".replace("  ", " ")
            raise CommentActionNotSupported(
                f"{comment.platform} cannot {what} through its API (GET /platforms: comments.actions)",
                extra={"platform": comment.platform, "action": needed},
            )
        if kind != ActionKind.REPLY:
            repeated = _same_action(comment, kind)
            if repeated is not None:
                return repeated
        if comment.deleted_at is not None:
            raise CommentDeleted()
        if comment.account.status != AccountStatus.ACTIVE:
            state = "disconnected" if comment.account.status == AccountStatus.DISCONNECTED else "unauthorized"
            raise CommentAccountUnavailable(f"The comment's account is {state}; reconnect it first")
        if kind == ActionKind.REPLY:
            problems = reply_text_problems(comment.platform, text)
            if problems:
                raise ValidationFailed(problems)
        now = timezone.now()
        action = CommentAction.objects.create(
            workspace_id=workspace_id, comment=comment, kind=kind, text=text, due_at=now
        )
        transaction.on_commit(partial(enqueue_actions, [action.id]), robust=True)
    return action


def _same_action(comment: Comment, kind: ActionKind) -> CommentAction | None:
    """The same action still open, or (a delete, a like) already done: asking again is answered
    with it."""
    statuses = [*OPEN, ActionStatus.DONE] if kind in (ActionKind.DELETE, ActionKind.LIKE) else list(OPEN)
    return (
        CommentAction.objects.filter(comment=comment, kind=kind, status__in=statuses)
        .order_by("-created_at", "-id")
        .first()
    )
