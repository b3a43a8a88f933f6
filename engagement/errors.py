"""Errors of the inbox, on top of the shared hierarchy in ``core.errors``."""

from __future__ import annotations

from core.errors import BadRequest, NotFound


class CommentNotFound(NotFound):
    default_message = "Comment not found"


class CommentActionNotSupported(BadRequest):
    """The comment's platform has no API call for this action (``GET /platforms``, ``comments.actions``)."""

    code = "comment_action_not_supported"


class CommentDeleted(BadRequest):
    code = "comment_deleted"
    default_message = "The comment was deleted"


class CommentAccountUnavailable(BadRequest):
    """The comment's account cannot act now: unauthorized (reconnect it) or disconnected."""

    code = "account_unauthorized"
