"""Recurring series endpoints (spec §4 "Recurring posts"): list, get, delete, pause, resume, and
the occurrences preview (beyond the spec). Series are created by POST /social-posts with
``recurrence``."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core import serializers as strict
from core.fields import choice, format_instant
from core.idempotency import idempotent
from core.pagination import OFFSET_PAGINATION, OffsetQuery, paginate
from core.query import parse_query
from posts.models import RecurringStatus
from posts.recurrence.input import RECURRENCE_DESCRIPTION
from posts.recurrence.rendering import RecurringPostOutput, recurring_record
from posts.recurrence.selectors import series_get, series_list, series_upcoming
from posts.recurrence.services import series_delete, series_pause, series_resume
from workspaces.authentication import access_of
from workspaces.roles import Permission


class RecurringListQuery(OffsetQuery):
    statuses = serializers.ListField(child=choice(RecurringStatus.values), required=False)


class RecurringOccurrencesQuery(strict.QuerySerializer):
    limit = serializers.IntegerField(min_value=1, max_value=100, default=10)


class RecurringPostListOutput(serializers.Serializer):
    recurringPosts = RecurringPostOutput(many=True, help_text="This page's series, newest first.")
    total = serializers.IntegerField(help_text="How many series match, on every page together.")
    hasMore = serializers.BooleanField(
        help_text="true while more series follow this page (next: `offset` + the series received)."
    )


class RecurringPostDeleteOutput(serializers.Serializer):
    deleted = serializers.BooleanField(help_text="true: the series is gone (its scheduled next occurrence too).")


class RecurringOccurrencesOutput(serializers.Serializer):
    occurrences = serializers.ListField(
        child=serializers.DateTimeField(), help_text="The coming occurrences, in order."
    )


_ID = OpenApiParameter("id", str, OpenApiParameter.PATH, description="Recurring post id")
_IDEMPOTENCY = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="Repeat within 24 h returns the first response and never acts twice.",
)


class RecurringPostViewSet(viewsets.GenericViewSet):
    """Recurring series: read them, pause, resume, delete, preview their next occurrences."""

    schema_tags = ["Recurring posts"]
    lookup_field = "id"
    required_permissions = {
        "list": Permission.POSTS_READ,
        "retrieve": Permission.POSTS_READ,
        "occurrences": Permission.POSTS_READ,
        "destroy": Permission.POSTS_DRAFT,
        "pause": Permission.POSTS_DRAFT,
        "resume": Permission.POSTS_DRAFT,
    }

    @extend_schema(
        operation_id="listRecurringPosts",
        summary="List recurring series",
        description="Newest first. `statuses` may be repeated or bracket-indexed. How occurrences are "
        "computed: " + RECURRENCE_DESCRIPTION + "\n\n" + OFFSET_PAGINATION,
        parameters=[RecurringListQuery],
        responses={200: RecurringPostListOutput},
    )
    def list(self, request: Request) -> Response:
        query = parse_query(request.query_params, RecurringListQuery)
        queryset = series_list(workspace_id=access_of(request).workspace.id, statuses=query.get("statuses"))
        page = paginate(queryset, limit=query["limit"], offset=query["offset"])
        body = {"recurringPosts": [recurring_record(s) for s in page.items], "total": page.total}
        return Response({**body, "hasMore": page.has_more})

    @extend_schema(
        operation_id="getRecurringPost",
        summary="Get a recurring series",
        parameters=[_ID],
        responses={200: RecurringPostOutput},
    )
    def retrieve(self, request: Request, id: str) -> Response:
        return Response(recurring_record(series_get(workspace_id=access_of(request).workspace.id, series_id=id)))

    @extend_schema(
        operation_id="deleteRecurringPost",
        summary="Stop and remove a recurring series",
        description="Deletes the upcoming scheduled post; posts already published (or being published) are "
        "kept, their `recurringPostId` cleared.",
        parameters=[_ID],
        request=None,
        responses={200: RecurringPostDeleteOutput},
    )
    def destroy(self, request: Request, id: str) -> Response:
        series_delete(workspace_id=access_of(request).workspace.id, series_id=id)
        return Response({"deleted": True})

    @extend_schema(
        operation_id="pauseRecurringPost",
        summary="Pause a recurring series",
        description="ACTIVE → PAUSED (`pauseReason` USER): the upcoming scheduled post is deleted and no "
        "occurrence is created until it resumes. Pausing a series that is not ACTIVE changes nothing and "
        "returns it.",
        parameters=[_ID, _IDEMPOTENCY],
        request=None,
        responses={200: RecurringPostOutput},
    )
    @action(detail=True, methods=["post"])
    @idempotent
    def pause(self, request: Request, id: str) -> Response:
        series = series_pause(workspace_id=access_of(request).workspace.id, series_id=id)
        return Response(recurring_record(series))

    @extend_schema(
        operation_id="resumeRecurringPost",
        summary="Resume a paused recurring series",
        description="PAUSED → ACTIVE from the first occurrence after now; occurrences missed while paused "
        "are not published. ENDED when the rule has no occurrence left. Accounts removed meanwhile are "
        "dropped from the series (400 `connection_not_found` when none is left). Resuming a series that is "
        "not PAUSED changes nothing and returns it.",
        parameters=[_ID, _IDEMPOTENCY],
        request=None,
        responses={200: RecurringPostOutput},
    )
    @action(detail=True, methods=["post"])
    @idempotent
    def resume(self, request: Request, id: str) -> Response:
        series = series_resume(workspace_id=access_of(request).workspace.id, series_id=id)
        return Response(recurring_record(series))

    @extend_schema(
        operation_id="listRecurringPostOccurrences",
        summary="Preview the next occurrence times of a series",
        description="The next `limit` (1 to 100, default 10) occurrence instants: from the upcoming one for an "
        "ACTIVE series, what resuming now would publish for a PAUSED one, none for an ENDED one.",
        parameters=[_ID, RecurringOccurrencesQuery],
        responses={200: RecurringOccurrencesOutput},
    )
    @action(detail=True, methods=["get"])
    def occurrences(self, request: Request, id: str) -> Response:
        query = parse_query(request.query_params, RecurringOccurrencesQuery)
        series = series_get(workspace_id=access_of(request).workspace.id, series_id=id)
        instants = series_upcoming(series=series, limit=query["limit"])
        return Response({"occurrences": [format_instant(i) for i in instants]})
