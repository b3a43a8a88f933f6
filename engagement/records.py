"""The bodies of the inbox, declared once (``core.records``): a comment (``GET /comments``, the
tree of ``GET /social-posts/{id}/comments``, the events) and a comment action (the answer of every
action and its history). Rows are dicts of :data:`COMMENT_COLUMNS` / :data:`ACTION_COLUMNS` as the
selectors read them (``.values()``): rendering reads no relation."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.records import Key, Record, column, instant, text_or_none


class CommentAuthorOutput(serializers.Serializer):
    id = serializers.CharField(allow_null=True, help_text="The author's id on the platform.")
    name = serializers.CharField(allow_null=True, help_text="The author's name as the platform shows it.")
    handle = serializers.CharField(
        allow_null=True, help_text="The author's handle (username), where the platform has one."
    )
    avatarUrl = serializers.CharField(allow_null=True, help_text="The author's picture, where the platform gives one.")


def _author(row: Any) -> dict[str, Any]:
    return {
        "id": row["author_id"] or None,
        "name": row["author_name"] or None,
        "handle": row["author_handle"] or None,
        "avatarUrl": row["author_avatar_url"] or None,
    }


COMMENT_COLUMNS = (
    "id",
    "platform",
    "account_id",
    "post_id",
    "target_id",
    "parent_id",
    "platform_comment_id",
    "author_id",
    "author_name",
    "author_handle",
    "author_avatar_url",
    "text",
    "created_at",
    "like_count",
    "reply_count",
    "hidden",
    "answered",
    "from_account",
    "rating",
    "permalink",
    "deleted_at",
    "first_seen_at",
)

COMMENT = Record(
    {
        "id": Key(serializers.CharField(help_text="The comment's id here."), column("id")),
        "platform": Key(serializers.CharField(help_text="The platform it is on."), column("platform")),
        "accountId": Key(
            serializers.CharField(help_text="The connected account whose post it is under."), column("account_id")
        ),
        "postId": Key(
            serializers.CharField(
                allow_null=True, help_text="The post it is under (null for a Google Business review)."
            ),
            column("post_id"),
        ),
        "platformId": Key(
            serializers.CharField(
                allow_null=True,
                help_text="The post's platform entry it is under (`platforms[].id` of the post; null for a review).",
            ),
            column("target_id"),
        ),
        "parentId": Key(
            serializers.CharField(allow_null=True, help_text="The comment it answers (null: directly under the post)."),
            column("parent_id"),
        ),
        "platformCommentId": Key(
            serializers.CharField(help_text="Its id on the platform."), column("platform_comment_id")
        ),
        "author": Key(CommentAuthorOutput(help_text="Who wrote it."), _author),
        "text": Key(serializers.CharField(allow_blank=True, help_text="What it says."), column("text")),
        "createdAt": Key(
            serializers.DateTimeField(help_text="When it was written, as the platform says."), instant("created_at")
        ),
        "likeCount": Key(
            serializers.IntegerField(allow_null=True, help_text="The platform's own count (null: not reported)."),
            column("like_count"),
        ),
        "replyCount": Key(
            serializers.IntegerField(
                allow_null=True, help_text="The platform's own count of replies (null: not reported)."
            ),
            column("reply_count"),
        ),
        "hidden": Key(serializers.BooleanField(help_text="Hidden from the post's public view."), column("hidden")),
        "answered": Key(
            serializers.BooleanField(help_text="A reply from the connected account exists under it."),
            column("answered"),
        ),
        "fromAccount": Key(
            serializers.BooleanField(help_text="Written by the connected account itself (a reply of ours)."),
            column("from_account"),
        ),
        "rating": Key(
            serializers.IntegerField(allow_null=True, help_text="A Google Business review's stars, 1 to 5."),
            column("rating"),
        ),
        "permalink": Key(
            serializers.CharField(allow_null=True, help_text="Its address on the platform, where it has one."),
            text_or_none("permalink"),
        ),
        "deletedAt": Key(
            serializers.DateTimeField(
                allow_null=True,
                help_text="When it was deleted (through this service, or found gone from the platform); null while it "
                "is there.",
            ),
            instant("deleted_at"),
        ),
        "firstSeenAt": Key(
            serializers.DateTimeField(help_text="When a sync first found it."), instant("first_seen_at")
        ),
    }
)

ACTION_COLUMNS = (
    "id",
    "comment_id",
    "kind",
    "status",
    "text",
    "reply_id",
    "error_code",
    "error_message",
    "created_at",
    "finished_at",
)

ACTION = Record(
    {
        "id": Key(serializers.CharField(help_text="The action's id."), column("id")),
        "commentId": Key(serializers.CharField(help_text="The comment it acts on."), column("comment_id")),
        "kind": Key(
            serializers.ChoiceField(
                choices=["REPLY", "HIDE", "UNHIDE", "DELETE", "LIKE"], help_text="What is done to the comment."
            ),
            column("kind"),
        ),
        "status": Key(
            serializers.ChoiceField(
                choices=["PENDING", "SENDING", "DONE", "FAILED"],
                help_text="PENDING (waiting for a worker or a retry), SENDING, DONE on the platform, or FAILED "
                "(errorCode; `unknown_outcome`: the platform did not say whether it was done, check it).",
            ),
            column("status"),
        ),
        "text": Key(serializers.CharField(allow_null=True, help_text="REPLY: the reply's text."), text_or_none("text")),
        "replyId": Key(
            serializers.CharField(allow_null=True, help_text="REPLY, once DONE: the reply's own comment id here."),
            column("reply_id"),
        ),
        "errorCode": Key(
            serializers.CharField(allow_null=True, help_text="FAILED: the normalized errorCode."),
            text_or_none("error_code"),
        ),
        "errorMessage": Key(
            serializers.CharField(allow_null=True, help_text="FAILED: the platform's words."),
            text_or_none("error_message"),
        ),
        "requestedAt": Key(serializers.DateTimeField(help_text="When it was asked for."), instant("created_at")),
        "finishedAt": Key(
            serializers.DateTimeField(allow_null=True, help_text="When it became DONE or FAILED."),
            instant("finished_at"),
        ),
    }
)


def comment_record(row: Any) -> dict[str, Any]:
    return COMMENT.render(row)


def action_record(row: Any) -> dict[str, Any]:
    return ACTION.render(row)
