from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from audit.actors import actor_of_request
from core.exception_handler import flatten_validation_detail
from core.idempotency import idempotent
from core.pagination import OFFSET_PAGINATION
from core.query import parse_query, validated
from posts import read_model
from posts.api.serializers import (
    RESULT_FIELDS,
    BulkOutput,
    PostChangeOutput,
    PostCreateOutput,
    PostDeleteOutput,
    PostListOutput,
    PostListQuery,
    PostOutput,
    PostPublishInput,
    PostPublishOutput,
    PostResultsOutput,
    PostRetryInput,
    PostRetryOutput,
    PostUnpublishOutput,
    PostValidateOutput,
    PublishedPostEditInput,
)
from posts.payloads import TARGETING_DESCRIPTION, BulkBatchInput, PostCreateInput, PostUpdateInput
from posts.rendering import post_record, post_records
from posts.selectors import post_page, post_row, post_status
from posts.services import (
    creation_result,
    post_create,
    post_delete,
    post_publish,
    post_retry,
    post_unschedule,
    post_update,
    post_validate,
    posts_bulk_create,
    require_for_timing,
    timing_of,
)
from posts.services.after_publishing import EDITABLE_STATUSES, post_edit_published, post_unpublish
from posts.services.creation import DRAFT
from posts.validation import Issue, build_plan
from workspaces.authentication import access_of
from workspaces.roles import Permission

IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="Repeat within 24 h returns the first response and never acts twice.",
)
_ID = OpenApiParameter("id", str, OpenApiParameter.PATH, description="Post id")
# The smallest body that publishes (README, "Your first post", sends exactly this).
_FIRST_POST_EXAMPLE = OpenApiExample(
    "The smallest post: text, now, on one account",
    request_only=True,
    value={
        "contentType": "TEXT",
        "timezone": "UTC",
        "text": "Hello from Crosspost",
        "platforms": ["MASTODON"],
        "mastodonConnectionIds": ["acc_masto"],
    },
)
_THREAD_EXAMPLE = OpenApiExample(
    "A thread on X and Bluesky",
    request_only=True,
    value={
        "contentType": "TEXT",
        "timezone": "Europe/Paris",
        "text": "How we cut our build time in half, a thread 🧵",
        "thread": [
            {"text": "1/ We cached the dependency layer first."},
            {"text": "2/ Then we split the test suite.", "mediaUrls": ["https://media.example.com/u/chart.png"]},
        ],
        "platforms": ["TWITTER", "BLUESKY"],
        "twitterConnectionIds": ["acc_x"],
        "blueskyConnectionIds": ["acc_bsky"],
    },
)
_FIRST_COMMENT_EXAMPLE = OpenApiExample(
    "A first comment with the link, a minute after the post",
    request_only=True,
    value={
        "contentType": "IMAGE",
        "timezone": "UTC",
        "text": "Our spring collection is here. Link in the first comment 👇",
        "mediaUrls": ["https://media.example.com/u/spring.jpg"],
        "firstComment": {"text": "Shop it: https://shop.example.com/spring", "delaySeconds": 60},
        "platforms": ["INSTAGRAM", "FACEBOOK"],
        "instagramConnectionIds": ["acc_ig"],
        "pageIds": ["1234567890"],
    },
)
_PLATFORM_FIRST_COMMENTS_EXAMPLE = OpenApiExample(
    "A first comment per platform (LinkedIn gets its own, Mastodon the post's)",
    request_only=True,
    value={
        "contentType": "TEXT",
        "timezone": "UTC",
        "text": "We are hiring backend engineers.",
        "firstComment": {"text": "Apply here: https://jobs.example.com/backend", "delaySeconds": 30},
        "platformFirstComments": [
            {"platform": "LINKEDIN", "text": "Apply on our careers page: https://jobs.example.com/backend #hiring"}
        ],
        "platforms": ["LINKEDIN", "MASTODON"],
        "linkedinConnectionIds": ["acc_li"],
        "mastodonConnectionIds": ["acc_masto"],
    },
)
_PLATFORM_FIRST_COMMENTS_CHANGE_EXAMPLE = OpenApiExample(
    "Replace the per-platform first comments (null removes them)",
    request_only=True,
    value={"platformFirstComments": [{"platform": "BLUESKY", "text": "Thread with the details below"}]},
)
_FIRST_COMMENT_CHANGE_EXAMPLE = OpenApiExample(
    "Add or change the first comment (null removes it)",
    request_only=True,
    value={"firstComment": {"text": "Details: https://example.com/launch", "delaySeconds": 0}},
)

_PUBLISHED_EDIT_EXAMPLE = OpenApiExample(
    "Fix a typo on every platform that edits, and YouTube's title",
    request_only=True,
    value={
        "text": "Our spring collection is here (now with sizes XS to XXL)",
        "platformTitles": [{"platform": "YOUTUBE", "title": "Spring collection 2026"}],
    },
)
_PUBLISHED_MEDIA_EDIT_EXAMPLE = OpenApiExample(
    "Replace a published post's photo with a video where the platform can",
    request_only=True,
    value={
        "contentType": "VIDEO",
        "mediaUrls": ["https://media.example.com/u/spring-teaser.mp4"],
        "mediaAltTexts": ["Models walking in the spring collection"],
    },
)


def _valid(serializer_class: type[serializers.Serializer], data: Any, *, partial: bool = False) -> dict[str, Any]:
    return validated(serializer_class, data, partial=partial)


class PostViewSet(viewsets.GenericViewSet):
    """Posts: create, list, read, change, delete and their transitions."""

    schema_tags = ["Posts"]
    lookup_field = "id"
    required_permissions = {
        "list": Permission.POSTS_READ,
        "retrieve": Permission.POSTS_READ,
        "results": Permission.POSTS_READ,
        "create": Permission.POSTS_DRAFT,
        "partial_update": Permission.POSTS_DRAFT,
        "destroy": Permission.POSTS_DRAFT,
        "unpublish": Permission.POSTS_PUBLISH,
        "publish": Permission.POSTS_DRAFT,
        "unschedule": Permission.POSTS_DRAFT,
        "validate": Permission.POSTS_DRAFT,
        "retry": Permission.POSTS_PUBLISH,
        "bulk": Permission.POSTS_SCHEDULE,
    }

    @extend_schema(
        operation_id="listPosts",
        summary="List posts",
        description="Newest first by default (`sortOrder=OLDEST` is the exact reverse, ties broken by id). "
        "`startDate`/`endDate` are inclusive and bound `scheduledAt`, or `createdAt` for posts never "
        "scheduled. Arrays may be repeated or bracket-indexed; `status` is an alias of `statuses`.\n\n"
        + OFFSET_PAGINATION,
        parameters=[PostListQuery],
        responses={200: PostListOutput},
    )
    def list(self, request: Request) -> HttpResponse:
        query = parse_query(request.query_params, PostListQuery, {"status": "statuses"})
        workspace_id = access_of(request).workspace.id
        page = post_page(
            workspace_id=workspace_id,
            renderer=read_model.renderer(),
            limit=query["limit"],
            offset=query["offset"],
            statuses=query.get("statuses"),
            platforms=query.get("platforms"),
            start=query.get("startDate"),
            end=query.get("endDate"),
            oldest_first=query["sortOrder"] == "OLDEST",
        )
        # The body PostListOutput documents, put together from the records' JSON as stored (the
        # bytes DRF's renderer gives for {"posts": [...], "total": ..., "hasMore": ...}).
        posts = b",".join(read_model.page_bodies(page, workspace_id=workspace_id))
        tail = read_model.encode({"total": page.total, "hasMore": page.has_more})
        return HttpResponse(b'{"posts":[' + posts + b"]," + tail[1:], content_type="application/json")

    @extend_schema(
        operation_id="createPost",
        summary="Create a post (now, scheduled, draft, or the start of a series)",
        description="Needs posts.draft, plus posts.schedule for a future `scheduledAt` or `queue: true`, or "
        "posts.publish when it publishes now. `queue: true` schedules the post at the earliest slot of its "
        "accounts' posting queues free for all of them (400 naming the account when one has no queue slots). "
        "`thread` (TWITTER, BLUESKY, THREADS and MASTODON only) publishes the post and then each item as a reply "
        "to the one before it; each entry answers the confirmed items in `threadItems`.\n\n"
        "Required: `contentType`, `timezone` and `platforms` with an account per platform; `text` or media as the "
        "content type needs. Without `scheduledAt` (or with a past one) the post is published now.\n\n"
        + TARGETING_DESCRIPTION,
        parameters=[IDEMPOTENCY_HEADER],
        request=PostCreateInput,
        responses={201: PostCreateOutput},
        examples=[_FIRST_POST_EXAMPLE, _THREAD_EXAMPLE, _FIRST_COMMENT_EXAMPLE, _PLATFORM_FIRST_COMMENTS_EXAMPLE],
    )
    @idempotent
    def create(self, request: Request) -> Response:
        access = access_of(request)
        data = _valid(PostCreateInput, request.data)
        timing = timing_of(
            save_as_draft=data["saveAsDraft"], scheduled_at=data.get("scheduledAt"), queue=bool(data.get("queue"))
        )
        require_for_timing(access, timing)
        plan = build_plan(workspace_id=access.workspace.id, data=data, full=timing != DRAFT)
        post = post_create(workspace_id=access.workspace.id, plan=plan, user_id=access.member_id)
        return Response(creation_result(post, plan), status=201)

    @extend_schema(operation_id="getPost", summary="Get a post", parameters=[_ID], responses={200: PostOutput})
    def retrieve(self, request: Request, id: str) -> Response:
        row, targets = post_row(workspace_id=access_of(request).workspace.id, post_id=id)
        return Response(post_records([row], targets)[0])

    @extend_schema(
        operation_id="updatePost",
        summary="Change a draft or scheduled post, or edit a published one on its platforms",
        description="**Draft or scheduled post**: omitted fields keep their values. Sending `platforms` rebuilds "
        "every platform entry and config from this request alone; the media are replaced only when `mediaUrls` is "
        "sent with it (an omitted `mediaUrls` keeps the stored media, `[]` removes them). `mediaUrls` without "
        "`platforms` is ignored; `mediaAltTexts` labels the media the post will have (the stored ones unless "
        "`mediaUrls` replaces them), with or without `platforms`: at most one per item (400 otherwise).\n\n"
        "**COMPLETED or PARTIAL_FAILURE post** (needs posts.publish too): only `text`, `platformTexts`, `title`, "
        "`platformTitles` and the media fields `contentType`, `mediaUrls`, `mediaAltTexts` "
        "(`PublishedPostEditInput`; any other field is a 400 naming it) edit each published entry on its platform, "
        "where the platform lets its API change that field (`GET /platforms`, `afterPublishing.editFields`). The "
        "new values are checked with the publishing validation first (400 listing every problem, nothing sent): "
        "new media exactly as a create checks them (the files must be this workspace's uploads, 400 "
        "`media_not_found`; the content type must fit them; each file within the media rules of every platform "
        "that is to take it, 400 naming `mediaUrls`, the platform, the file and the rule, with the rule as the "
        "code). Media are edited on MASTODON (any change), TELEGRAM (one photo or video replaced, or added to a text "
        "message; not an album, never removed) and GOOGLE_BUSINESS (its one photo set, replaced or removed); a "
        "change the platform cannot make in place (`afterPublishing.mediaEdit`) is SKIPPED with the reason; the "
        "files are sent as they are (`mediaFit` does not apply to an edit). The answer is the post with "
        "`editReport`: per entry QUEUED, SKIPPED with the reason (the platform cannot change that field or make "
        "that media change, the entry is not live, or it was removed) or UNCHANGED. An entry takes all its fields "
        "or none: one that cannot take one of them is SKIPPED. "
        "Each QUEUED edit is sent once (claimed, fenced, retried on transient errors; an unknown outcome, such as "
        "a worker lost mid-call, is never re-sent blindly: where the platform reads one post the post is looked up "
        "first, DONE if it already shows the new values, else the edit is sent again; elsewhere (Telegram) it ends "
        "FAILED `unknown_outcome`; a media edit is sent again, since a read does not show the media); a video the "
        "platform still processes is waited for (asked again, never uploaded twice); its outcome lands in the "
        "entry's `edits` history and, once every entry's is known, in one `post.updated` event. The post's `text` "
        "and media take the new values now; an entry's own text, title and media when its platform confirms (until "
        "then, and where it does not take them, the entry answers the media live there in its `mediaUrls` with its "
        "own `contentType`). Other states: 400 `post_not_editable`, as is a post removed from its platforms.",
        parameters=[_ID],
        request=PostUpdateInput,
        responses={200: PostChangeOutput},
        examples=[
            _FIRST_COMMENT_CHANGE_EXAMPLE,
            _PLATFORM_FIRST_COMMENTS_CHANGE_EXAMPLE,
            _PUBLISHED_EDIT_EXAMPLE,
            _PUBLISHED_MEDIA_EDIT_EXAMPLE,
        ],
    )
    def partial_update(self, request: Request, id: str) -> Response:
        access = access_of(request)
        if post_status(workspace_id=access.workspace.id, post_id=id) in EDITABLE_STATUSES:
            access.require(Permission.POSTS_PUBLISH)
            data = _valid(PublishedPostEditInput, request.data)
            report = post_edit_published(workspace_id=access.workspace.id, post_id=id, changes=data)
            return Response({**post_record(report.post), "editReport": report.as_dict()})
        changes = _valid(PostUpdateInput, request.data, partial=True)
        post = post_update(workspace_id=access.workspace.id, post_id=id, changes=changes)
        return Response(post_record(post))

    @extend_schema(
        operation_id="deletePost",
        summary="Delete a post (our record only)",
        description="Deletes the post and its record here; a post already published stays live on its platforms "
        "(use `POST /social-posts/{id}/unpublish` to remove it there and keep the record). 409 `conflict` while "
        "any platform entry is being published, edited or removed.",
        parameters=[_ID],
        request=None,
        responses={200: PostDeleteOutput},
    )
    def destroy(self, request: Request, id: str) -> Response:
        post_delete(workspace_id=access_of(request).workspace.id, post_id=id, actor=actor_of_request(request))
        return Response({"deleted": True})

    @extend_schema(
        operation_id="unpublishPost",
        summary="Remove a published post from its platforms, keeping the record",
        description="A COMPLETED or PARTIAL_FAILURE post (else 400 `post_not_published`). Each published entry "
        "whose platform lets its API delete a post (`GET /platforms`, `afterPublishing.deletable`) is deleted "
        "there once (claimed, fenced, retried on transient errors; a delete interrupted mid-call is looked up first "
        "where the platform reads one post, DONE without a second call if the post is gone, and elsewhere sent "
        "again, which is safe: a post the platform no longer has counts as deleted); the others are answered SKIPPED with the "
        "reason. The post and its entries stay here, with their status, ids and analytics: the post gets "
        "`unpublishedAt`, each entry `unpublish` (its outcome) and `unpublishedAt` once its copy is gone; the "
        "outcomes follow in one `post.unpublished` event. Asking again is harmless (UNCHANGED for entries "
        "removed or being removed). A removed post cannot be edited.",
        parameters=[_ID, IDEMPOTENCY_HEADER],
        request=None,
        responses={200: PostUnpublishOutput},
    )
    @action(detail=True, methods=["post"])
    @idempotent
    def unpublish(self, request: Request, id: str) -> Response:
        report = post_unpublish(
            workspace_id=access_of(request).workspace.id, post_id=id, actor=actor_of_request(request)
        )
        return Response({**post_record(report.post), "unpublishReport": report.as_dict()})

    @extend_schema(
        operation_id="getPostResults",
        summary="Per-platform results of a post",
        parameters=[_ID],
        responses={200: PostResultsOutput},
    )
    @action(detail=True, methods=["get"])
    def results(self, request: Request, id: str) -> Response:
        row, targets = post_row(workspace_id=access_of(request).workspace.id, post_id=id)
        entries = post_records([row], targets)[0]["platforms"]
        # threadItems / firstComment: only in the entries of a post with one, and so only in its results
        results = [{name: entry[name] for name in RESULT_FIELDS if name in entry} for entry in entries]
        return Response({"postId": row["id"], "status": row["status"], "results": results})

    @extend_schema(
        operation_id="publishPost",
        summary="Publish or schedule a draft or a scheduled post",
        description="Accepts a DRAFT or a SCHEDULED post and runs the create validation now. A future "
        "`scheduledAt` (given, or a dated draft's own) schedules it (posts.schedule), a SCHEDULED post being "
        "rescheduled; post.scheduled is sent each time. Otherwise it is queued now (posts.publish): a "
        "SCHEDULED post published without `scheduledAt` goes out now, once (a post the scheduler has already "
        "taken is no longer SCHEDULED). `queuedPlatforms` lists the platforms only when the post goes out now "
        "(empty when it is scheduled). 400 `post_not_draft` for any other post, the message naming its status.",
        parameters=[_ID, IDEMPOTENCY_HEADER],
        request=PostPublishInput,
        responses={201: PostPublishOutput},
    )
    @action(detail=True, methods=["post"])
    @idempotent
    def publish(self, request: Request, id: str) -> Response:
        data = _valid(PostPublishInput, request.data)
        outcome = post_publish(
            access=access_of(request),
            post_id=id,
            timezone_name=data.get("timezone"),
            scheduled_at=data.get("scheduledAt"),
        )
        return Response(outcome.body(), status=201)

    @extend_schema(
        operation_id="unschedulePost",
        summary="Make a scheduled post or dated draft an undated draft",
        parameters=[_ID, IDEMPOTENCY_HEADER],
        request=None,
        responses={200: PostOutput},
    )
    @action(detail=True, methods=["post"])
    @idempotent
    def unschedule(self, request: Request, id: str) -> Response:
        post = post_unschedule(workspace_id=access_of(request).workspace.id, post_id=id)
        return Response(post_record(post))

    @extend_schema(
        operation_id="retryPost",
        summary="Queue failed platform entries again",
        description="`platformIds` values are entry ids or platform names; missing or empty retries every "
        "FAILED entry. The matched entries are PENDING when this answers.",
        parameters=[_ID, IDEMPOTENCY_HEADER],
        request=PostRetryInput,
        responses={201: PostRetryOutput},
    )
    @action(detail=True, methods=["post"])
    @idempotent
    def retry(self, request: Request, id: str) -> Response:
        data = _valid(PostRetryInput, request.data)
        retried = post_retry(
            workspace_id=access_of(request).workspace.id, post_id=id, platform_ids=data.get("platformIds")
        )
        body = {"postId": id, "queuedPlatforms": [t.platform for t in retried], "isScheduled": False}
        return Response(body, status=201)

    @extend_schema(
        operation_id="bulkCreatePosts",
        summary="Create up to 100 posts sharing their platforms",
        description="Each item is validated and created on its own; one bad item never sinks the others. "
        "Needs posts.schedule, plus posts.publish when an item is due now. `posts[].idempotencyKey` makes "
        "an item's creation happen at most once.",
        parameters=[IDEMPOTENCY_HEADER],
        request=BulkBatchInput,
        responses={201: BulkOutput},
    )
    @action(detail=False, methods=["post"])
    @idempotent
    def bulk(self, request: Request) -> Response:
        batch = _valid(BulkBatchInput, request.data)
        body = posts_bulk_create(
            access=access_of(request), batch=batch, raw_batch=request.data if isinstance(request.data, dict) else {}
        )
        return Response(body, status=201)

    @extend_schema(
        operation_id="validatePost",
        summary="Check a create payload without creating anything",
        description="Runs exactly the create validation and answers every problem found, per platform "
        "(a `thread` item's issues name it: `thread[1]: TWITTER text is 301 characters; the limit is 280`; a "
        "`firstComment` issue names its platform: `firstComment: TIKTOK has no comment API (only …)`, and one of a "
        "`platformFirstComments` item its field: `platformFirstComments: TWITTER comment is 301 characters; the "
        "limit is 280`).",
        parameters=[IDEMPOTENCY_HEADER],
        request=PostCreateInput,
        responses={200: PostValidateOutput},
        examples=[_THREAD_EXAMPLE, _FIRST_COMMENT_EXAMPLE, _PLATFORM_FIRST_COMMENTS_EXAMPLE],
    )
    @action(detail=False, methods=["post"])
    @idempotent
    def validate(self, request: Request) -> Response:
        serializer = PostCreateInput(data=request.data)
        if not serializer.is_valid():
            issues = [Issue.from_message(message) for message in flatten_validation_detail(serializer.errors)]
            return Response({"valid": False, "issues": [i.as_dict() for i in issues], "skippedPlatforms": []})
        plan = post_validate(workspace_id=access_of(request).workspace.id, data=dict(serializer.validated_data))
        body = {"valid": plan.valid, "issues": [i.as_dict() for i in plan.issues], "skippedPlatforms": plan.skipped}
        return Response(body)
