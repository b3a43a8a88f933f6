from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core.idempotency import idempotent
from core.query import UNKNOWN_PARAMETER, NoQuery, parse_query, validated
from core.schema import NEEDS_REDIS
from engagement import selectors, sync
from engagement.api.serializers import (
    CommentActionOutput,
    CommentDetailOutput,
    CommentListOutput,
    CommentListQuery,
    CommentReplyInput,
    CommentSyncOutput,
    CommentTreeOutput,
)
from engagement.models import ActionKind
from engagement.services import comment_action_request
from workspaces.authentication import access_of
from workspaces.roles import Permission

_ID = OpenApiParameter("id", str, OpenApiParameter.PATH, description="Comment id")
_POST_ID = OpenApiParameter("id", str, OpenApiParameter.PATH, description="Post id")
REFUSED = OpenApiResponse(
    description="`comment_action_not_supported`: the platform's API has no such call (`GET /platforms`, "
    "`comments.actions`; the body names `platform` and `action`); `comment_deleted`; `account_unauthorized`: the "
    "comment's account is unauthorized or disconnected."
)
ACTIONS_HELP = (
    "The answer is the action (202): it reaches the platform once, as a platform step like a publish (claimed, "
    "fenced, retried with backoff on transient errors, never sent twice). Its outcome is in `GET /comments/{{id}}` "
    "(`actions`) and in an event: {event} when it is done, `comment.action_failed` when it is not (`errorCode`; "
    "`unknown_outcome`: the platform did not say whether it was done, check it). A comment's actions reach the "
    "platform one after the other, in the order they were asked for."
)
CURSOR_HELP = (
    "**Pagination (cursor):** pass the answer's `nextCursor` back as `after`; `hasMore` is true while older "
    "comments follow."
)


def _accepted(action_id: str) -> Response:
    return Response(selectors.action_body(action_id=action_id), status=202)


class CommentViewSet(viewsets.GenericViewSet):
    lookup_field = "id"
    schema_tags = ["Comments"]
    required_permissions = {
        "list": Permission.COMMENTS_READ,
        "retrieve": Permission.COMMENTS_READ,
        "sync": Permission.COMMENTS_READ,
        "replies": Permission.COMMENTS_REPLY,
        "like": Permission.COMMENTS_REPLY,
        "hide": Permission.COMMENTS_MODERATE,
        "unhide": Permission.COMMENTS_MODERATE,
        "destroy": Permission.COMMENTS_MODERATE,
    }

    @extend_schema(
        operation_id="listComments",
        summary="The inbox: comments under the workspace's published posts",
        description="Comments (and Google Business reviews) the syncs found under the accounts' published posts, "
        "newest first by `createdAt`, deleted ones left out. Filters combine. A comment found late (a sync reads "
        "young posts every 5 minutes, then hourly, then daily to 30 days) can be older than the first page a "
        "client already read: to follow the inbox, use the `comment.received` events (or `GET /events`) or "
        "`since`.\n\n" + CURSOR_HELP,
        parameters=[CommentListQuery],
        responses={200: CommentListOutput},
    )
    def list(self, request: Request) -> Response:
        query = parse_query(request.query_params, CommentListQuery)
        page = selectors.comment_page(
            workspace_id=access_of(request).workspace.id,
            limit=query["limit"],
            after=query.get("after"),
            account_id=query.get("accountId"),
            platforms=query.get("platforms"),
            post_id=query.get("postId"),
            unanswered=query.get("unanswered"),
            hidden=query.get("hidden"),
            since=query.get("since"),
            q=query.get("q"),
        )
        return Response({"comments": page.items, "nextCursor": page.next_cursor, "hasMore": page.has_more})

    @extend_schema(
        operation_id="getComment",
        summary="One comment, with the actions asked for on it",
        description="The comment (a deleted one too, with `deletedAt`) and `actions`: every reply, hide, unhide, "
        "delete and like asked for on it, oldest first, each with its status.",
        parameters=[_ID],
        responses={200: CommentDetailOutput, 400: UNKNOWN_PARAMETER},
    )
    def retrieve(self, request: Request, id: str) -> Response:
        parse_query(request.query_params, NoQuery)
        return Response(selectors.comment_detail(workspace_id=access_of(request).workspace.id, comment_id=id))

    @extend_schema(
        operation_id="requestCommentSync",
        summary="Read the comments of every tracked post now",
        description="Queues a sync of every post published in the last 90 days on a platform with a comment API "
        "(posts older than 30 days are read only this way) and of the Google Business reviews, at most once per "
        "workspace per 10 minutes; inside the cooldown it answers `queued: false` with the seconds remaining (not "
        "an error). The reads still keep within each account's share of its platform's rate limit "
        "(`GET /platforms`, `comments.readsPerHour`): what does not fit is read in the next hour. New comments "
        "arrive as `comment.received` events. The cooldown is kept in Redis: while Redis is unreachable the "
        "answer is a 503.",
        request=None,
        responses={202: CommentSyncOutput},
        extensions={NEEDS_REDIS: True},
    )
    @action(detail=False, methods=["post"])
    @idempotent
    def sync(self, request: Request) -> Response:
        outcome = sync.comments_sync_request(workspace_id=access_of(request).workspace.id)
        message = (
            "Comment sync queued"
            if outcome.queued
            else f"A comment sync was requested recently; try again in {outcome.cooldown_seconds_remaining} seconds"
        )
        body = {
            "queued": outcome.queued,
            "message": message,
            "cooldownSecondsRemaining": None if outcome.queued else outcome.cooldown_seconds_remaining,
        }
        return Response(body, status=202)

    @extend_schema(
        operation_id="replyToComment",
        summary="Reply to a comment as the account",
        description="Posts `text` under the comment as the account whose post it is under (a Google Business "
        "review: the owner's reply, which replaces an earlier one). The text is checked first against the "
        "platform's comment rules (`GET /platforms`, `comments.textLimit`, counted as the platform counts its "
        "posts): a 400 naming `text` otherwise, and nothing is sent. Once done, the reply is a comment of its own "
        "(`fromAccount`) and the comment is `answered`. Each request is a reply of its own: send an "
        "`Idempotency-Key` to make a retried request one. " + ACTIONS_HELP.format(event="`comment.replied`"),
        parameters=[_ID],
        request=CommentReplyInput,
        responses={202: CommentActionOutput, 400: REFUSED},
    )
    @action(detail=True, methods=["post"])
    @idempotent
    def replies(self, request: Request, id: str) -> Response:
        data = validated(CommentReplyInput, request.data)
        action_ = comment_action_request(
            workspace_id=access_of(request).workspace.id, comment_id=id, kind=ActionKind.REPLY, text=data["text"]
        )
        return _accepted(action_.id)

    @extend_schema(
        operation_id="hideComment",
        summary="Hide a comment from the post's public view",
        description="Where the platform lets a post's owner hide comments. Asking again while a hide is on its way "
        "answers that one. " + ACTIONS_HELP.format(event="`comment.hidden`"),
        parameters=[_ID],
        request=None,
        responses={202: CommentActionOutput, 400: REFUSED},
    )
    @action(detail=True, methods=["post"])
    @idempotent
    def hide(self, request: Request, id: str) -> Response:
        return self._act(request, id, ActionKind.HIDE)

    @extend_schema(
        operation_id="unhideComment",
        summary="Show a hidden comment again",
        description="Asking again while an unhide is on its way answers that one. "
        + ACTIONS_HELP.format(event="`comment.unhidden`"),
        parameters=[_ID],
        request=None,
        responses={202: CommentActionOutput, 400: REFUSED},
    )
    @action(detail=True, methods=["post"])
    @idempotent
    def unhide(self, request: Request, id: str) -> Response:
        return self._act(request, id, ActionKind.UNHIDE)

    @extend_schema(
        operation_id="likeComment",
        summary="Like a comment as the account",
        description="Where the platform has such a call. Liking again answers the like already asked for. "
        + ACTIONS_HELP.format(event="`comment.liked`"),
        parameters=[_ID],
        request=None,
        responses={202: CommentActionOutput, 400: REFUSED},
    )
    @action(detail=True, methods=["post"])
    @idempotent
    def like(self, request: Request, id: str) -> Response:
        return self._act(request, id, ActionKind.LIKE)

    @extend_schema(
        operation_id="deleteComment",
        summary="Delete a comment on the platform",
        description="The account's own replies on every platform with a comment API; another person's comment "
        "where the platform lets a post's owner delete it (`GET /platforms`, `comments.actions`: `delete_own`, "
        "`delete_others`). Once done the comment and its replies carry `deletedAt` and leave `GET /comments`; a "
        "deleted reply of the account's own no longer makes its parent `answered`. Asking again answers the "
        "delete already asked for. " + ACTIONS_HELP.format(event="`comment.deleted`"),
        parameters=[_ID],
        request=None,
        responses={202: CommentActionOutput, 400: REFUSED},
    )
    @idempotent
    def destroy(self, request: Request, id: str) -> Response:
        return self._act(request, id, ActionKind.DELETE)

    def _act(self, request: Request, comment_id: str, kind: ActionKind) -> Response:
        action_ = comment_action_request(workspace_id=access_of(request).workspace.id, comment_id=comment_id, kind=kind)
        return _accepted(action_.id)


class PostCommentsViewSet(viewsets.GenericViewSet):
    schema_tags = ["Comments"]
    required_permissions = {"list": Permission.COMMENTS_READ}

    @extend_schema(
        operation_id="listPostComments",
        summary="A post's comments, as a tree per platform entry",
        description="Every entry of the post with the comments under it on its platform, oldest first, each with "
        "its `replies` (the platform's own nesting), deleted ones left out, at most 2000 per entry (`truncated`). "
        "`lastSyncedAt` says how fresh they are. An entry on a platform without a comment API (`GET /platforms`) "
        "has none.",
        parameters=[_POST_ID],
        responses={200: CommentTreeOutput, 400: UNKNOWN_PARAMETER},
    )
    def list(self, request: Request, id: str) -> Response:
        parse_query(request.query_params, NoQuery)
        return Response(selectors.post_comment_tree(workspace_id=access_of(request).workspace.id, post_id=id))
