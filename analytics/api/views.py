from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from analytics import reports, selectors, services
from analytics.api.serializers import (
    WINDOW_DESCRIPTION,
    BreakdownOutput,
    BreakdownQuery,
    DiscoveredPostsOutput,
    DiscoveredPostsQuery,
    OverviewOutput,
    PostsOutput,
    PostsQuery,
    SyncOutput,
    SyncStatusOutput,
    TimeseriesOutput,
    TimeseriesQuery,
    TopPostsOutput,
    TopPostsQuery,
    WindowQuery,
)
from core.fields import format_instant
from core.idempotency import idempotent
from core.pagination import PAGE_PAGINATION
from core.query import (
    UNKNOWN_PARAMETER,
    NoQuery,
    parse_query,
)
from core.schema import NEEDS_REDIS
from workspaces.authentication import access_of
from workspaces.roles import Permission


def _window(data: dict[str, Any]) -> reports.Window:
    return reports.Window(start=data["from"], end=data["to"])


class AnalyticsViewSet(viewsets.GenericViewSet):
    required_permissions = {
        "overview": Permission.ANALYTICS_READ,
        "timeseries": Permission.ANALYTICS_READ,
        "platform_breakdown": Permission.ANALYTICS_READ,
        "posts": Permission.ANALYTICS_READ,
        "top_posts": Permission.ANALYTICS_READ,
        "discovered_posts": Permission.ANALYTICS_READ,
        "sync": Permission.ANALYTICS_READ,
        "sync_status": Permission.ANALYTICS_READ,
    }
    schema_tags = ["Analytics"]

    @extend_schema(
        operation_id="getAnalyticsOverview",
        summary="Workspace totals for posts published in the window",
        description=(
            WINDOW_DESCRIPTION + "\n\n"
            "Sums of views, likes, comments and shares, posts published, average views per post, the "
            "latest known follower count and the engagement rate ((likes + comments + shares) / views × 100, "
            "over the platforms that report views), each with `previousValue` and `deltaPercent` (from the "
            "unrounded figures) against the window of equal length just before `from`. Figures are rounded "
            "to 2 decimal places. A metric is null when no selected platform reports it; `partialMetrics` "
            "lists metrics that some selected platform cannot report, whose totals cover only the platforms "
            "that can."
        ),
        parameters=[WindowQuery],
        responses={200: OverviewOutput},
    )
    @action(detail=False, methods=["get"])
    def overview(self, request: Request) -> Response:
        access = access_of(request)
        query = parse_query(request.query_params, WindowQuery)
        body = reports.overview(workspace_id=access.workspace.id, requested=query["platforms"], window=_window(query))
        body["lastSyncedAt"] = format_instant(selectors.last_synced_at(workspace_id=access.workspace.id))
        return Response(body)

    @extend_schema(
        operation_id="getAnalyticsTimeseries",
        summary="One point per day, ISO week or calendar month (UTC)",
        description=(
            WINDOW_DESCRIPTION + "\n\n"
            "Counters sum the posts published inside each bucket (and inside the window); `followers` is "
            "the latest known count at the bucket end. `interval=DAY|WEEK|MONTH` is a legacy alias of "
            "`granularity`."
        ),
        parameters=[TimeseriesQuery],
        responses={200: TimeseriesOutput},
    )
    @action(detail=False, methods=["get"])
    def timeseries(self, request: Request) -> Response:
        access = access_of(request)
        query = parse_query(request.query_params, TimeseriesQuery)
        points = reports.timeseries(
            workspace_id=access.workspace.id,
            requested=query["platforms"],
            window=_window(query),
            granularity=query["granularity"],
        )
        for point in points:
            point["date"] = format_instant(point["date"])
        return Response({"granularity": query["granularity"], "points": points})

    @extend_schema(
        operation_id="getAnalyticsPlatformBreakdown",
        summary="The overview metrics per platform",
        description=WINDOW_DESCRIPTION + "\n\n"
        "One row per platform with analytics data in the workspace, with its `supportedMetrics`. "
        "A `platforms` parameter is tolerated and ignored.",
        parameters=[BreakdownQuery],
        responses={200: BreakdownOutput},
    )
    @action(detail=False, methods=["get"], url_path="platform-breakdown")
    def platform_breakdown(self, request: Request) -> Response:
        access = access_of(request)
        query = parse_query(request.query_params, BreakdownQuery)
        rows = reports.platform_breakdown(workspace_id=access.workspace.id, window=_window(query))
        return Response({"platforms": rows})

    @extend_schema(
        operation_id="listAnalyticsPosts",
        summary="Per-post figures for every tracked post published in the window",
        description=(
            WINDOW_DESCRIPTION + "\n\n"
            "Includes posts discovered on connected accounts (their `postId` and `postPlatformId` are null). "
            "A figure the platform does not report is null (`saves`, `clicks`, `impressions` and `reach` "
            "come from the platforms that report them: Pinterest saves, clicks and impressions; Instagram reach "
            "and saves; LinkedIn impressions and reach; Facebook impressions and reach). Sorted descending by "
            "`sortBy` (nulls last).\n\n" + PAGE_PAGINATION
        ),
        parameters=[PostsQuery],
        responses={200: PostsOutput},
    )
    @action(detail=False, methods=["get"])
    def posts(self, request: Request) -> Response:
        access = access_of(request)
        query = parse_query(request.query_params, PostsQuery)
        page = reports.tracked_posts_page(
            workspace_id=access.workspace.id,
            requested=query["platforms"],
            window=_window(query),
            sort_by=query["sortBy"],
            limit=query["limit"],
            offset=(query["page"] - 1) * query["limit"],
        )
        return Response(
            {
                "posts": [selectors.post_row(t) for t in page.items],
                "total": page.total,
                "page": query["page"],
                "limit": query["limit"],
                "hasMore": page.has_more,
            }
        )

    @extend_schema(
        operation_id="listTopAnalyticsPosts",
        summary="The best posts published in the window",
        description=(
            WINDOW_DESCRIPTION + "\n\n"
            "The first `limit` rows `GET /analytics/posts` would list for the same `from`, `to`, `platforms` "
            "and `sortBy`, without pagination: the same row shape, sorted descending by `sortBy` (default "
            "`VIEWS`; a post whose platform does not report that figure comes last, then newer before older). "
            "Discovered posts are included."
        ),
        parameters=[TopPostsQuery],
        responses={200: TopPostsOutput},
    )
    @action(detail=False, methods=["get"], url_path="top-posts")
    def top_posts(self, request: Request) -> Response:
        access = access_of(request)
        query = parse_query(request.query_params, TopPostsQuery)
        rows = selectors.top_posts(
            workspace_id=access.workspace.id,
            requested=query["platforms"],
            window=_window(query),
            sort_by=query["sortBy"],
            limit=query["limit"],
        )
        return Response({"posts": [selectors.post_row(t) for t in rows]})

    @extend_schema(
        operation_id="listDiscoveredAnalyticsPosts",
        summary="Posts found on the connected accounts that were not published through this service",
        description=(
            WINDOW_DESCRIPTION + "\n\n"
            "The posts the analytics import found on the workspace's connected accounts that were not "
            "published through this service (in `GET /analytics/posts` their `postId` is null), published "
            "in the window, newest first, at most `limit` (default 200)."
        ),
        parameters=[DiscoveredPostsQuery],
        responses={200: DiscoveredPostsOutput},
    )
    @action(detail=False, methods=["get"], url_path="discovered-posts")
    def discovered_posts(self, request: Request) -> Response:
        access = access_of(request)
        query = parse_query(request.query_params, DiscoveredPostsQuery)
        rows = selectors.discovered_posts(
            workspace_id=access.workspace.id,
            requested=query["platforms"],
            window=_window(query),
            limit=query["limit"],
        )
        return Response({"posts": rows})

    @extend_schema(
        operation_id="requestAnalyticsSync",
        summary="Ask for an immediate refresh",
        description="Queues a refresh of every account with analytics, at most once per workspace per 10 "
        "minutes; inside the cooldown it answers `queued: false` with the seconds remaining (not an error). "
        "`cooldownSecondsRemaining` is the wait before the next sync is allowed, so it is null when `queued` "
        "is true. The cooldown is kept in Redis: while Redis is unreachable the answer is a 503.",
        request=None,
        responses={202: SyncOutput},
        extensions={NEEDS_REDIS: True},
    )
    @action(detail=False, methods=["post"])
    @idempotent
    def sync(self, request: Request) -> Response:
        access = access_of(request)
        outcome = services.sync_request(workspace_id=access.workspace.id)
        message = (
            "Refresh queued"
            if outcome.queued
            else f"A refresh was requested recently; try again in {outcome.cooldown_seconds_remaining} seconds"
        )
        return Response(
            {
                "queued": outcome.queued,
                "message": message,
                "cooldownSecondsRemaining": None if outcome.queued else outcome.cooldown_seconds_remaining,
            },
            status=202,
        )

    @extend_schema(
        operation_id="getAnalyticsSyncStatus",
        summary="Where each account's refresh stands",
        description=(
            "`platforms` has one row per account with analytics (the shape the published CLI and agent "
            "server read); `accounts` repeats the rows in the earlier `{accountId, platform, status, "
            "lastSyncedAt, lastErrorMessage}` shape. `accountGroupId` is the workspace id."
        ),
        responses={200: SyncStatusOutput, 400: UNKNOWN_PARAMETER},
    )
    @action(detail=False, methods=["get"], url_path="sync-status")
    def sync_status(self, request: Request) -> Response:
        access = access_of(request)
        parse_query(request.query_params, NoQuery)
        return Response(selectors.sync_status(workspace_id=access.workspace.id))
