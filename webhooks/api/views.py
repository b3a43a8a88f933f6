from __future__ import annotations

import json

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from audit.actors import actor_of_request
from core.idempotency import idempotent
from core.pagination import CURSOR_PAGINATION, OFFSET_PAGINATION
from core.query import parse_query
from webhooks import selectors, services
from webhooks.api.serializers import (
    DeliveryListOutput,
    DeliveryListQuery,
    DeliveryOutput,
    EventListOutput,
    EventListQuery,
    WebhookCreatedOutput,
    WebhookCreateInput,
    WebhookDeletedOutput,
    WebhookListOutput,
    WebhookOutput,
    WebhookRotateSecretInput,
    WebhookSecretRotatedOutput,
    WebhookTestOutput,
    WebhookUpdateInput,
    webhook_body,
)
from workspaces.authentication import access_of
from workspaces.roles import Permission

INVALID_URL = OpenApiResponse(
    description="Invalid URL (`code: invalid_webhook_url`, the message says why: scheme, credentials, port, "
    "localhost, or a host resolving to a non-public address), or the workspace already has 10 webhooks "
    "(`code: webhook_limit_reached`)."
)
DUPLICATE = OpenApiResponse(description="A webhook with this URL already exists in the workspace (`code: conflict`).")
# Path segments never carry NUL (PostgreSQL text cannot hold it): such a path is no route (404).
ID_SEGMENT = r"[^/\x00]+"


@extend_schema_view(
    list=extend_schema(operation_id="listWebhooks", summary="List webhooks", responses={200: WebhookListOutput}),
    retrieve=extend_schema(operation_id="getWebhook", summary="Get a webhook", responses={200: WebhookOutput}),
    destroy=extend_schema(
        operation_id="deleteWebhook", summary="Delete a webhook", responses={200: WebhookDeletedOutput}
    ),
)
class WebhookViewSet(viewsets.ViewSet):
    required_permissions = {
        "list": Permission.WEBHOOKS_READ,
        "retrieve": Permission.WEBHOOKS_READ,
        "deliveries": Permission.WEBHOOKS_READ,
        "create": Permission.WEBHOOKS_MANAGE,
        "partial_update": Permission.WEBHOOKS_MANAGE,
        "destroy": Permission.WEBHOOKS_MANAGE,
        "test": Permission.WEBHOOKS_MANAGE,
        "redeliver": Permission.WEBHOOKS_MANAGE,
        "rotate_secret": Permission.WEBHOOKS_MANAGE,
    }
    schema_tags = ["Webhooks"]
    lookup_value_regex = ID_SEGMENT

    def list(self, request: Request) -> Response:
        webhooks = selectors.webhook_list(workspace=access_of(request).workspace)
        return Response({"webhooks": WebhookOutput(webhooks, many=True).data})

    @extend_schema(
        operation_id="createWebhook",
        summary="Register a webhook",
        description="A webhook receives every event (see the `WebhookEvent` schema and `x-webhooks`) unless "
        "`events` subscribes it to some only (an unknown name is a 400 listing the valid ones; `webhook.test` "
        "always goes through). The `secret` is returned only here (and to a retry with the same "
        "`Idempotency-Key` within 24 hours, which answers this same body; it is kept encrypted until then).",
        request=WebhookCreateInput,
        responses={201: WebhookCreatedOutput, 400: INVALID_URL, 409: DUPLICATE},
    )
    @idempotent
    def create(self, request: Request) -> Response:
        data = WebhookCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        webhook = services.webhook_create(
            workspace=access_of(request).workspace, actor=actor_of_request(request), **data.validated_data
        )
        return Response(WebhookCreatedOutput(webhook).data, status=201)

    def retrieve(self, request: Request, pk: str) -> Response:
        webhook = selectors.webhook_get(workspace=access_of(request).workspace, webhook_id=pk)
        return Response(webhook_body(webhook))

    @extend_schema(
        operation_id="updateWebhook",
        summary="Change a webhook's URL, its event filter, or re-enable it",
        description="`active: true` re-enables a disabled webhook and resets its failure count; "
        "`active: false` disables it and drops pending retries. `events` replaces the subscription "
        "(null: every event again) for events emitted from now on.",
        request=WebhookUpdateInput,
        responses={200: WebhookOutput, 400: INVALID_URL, 409: DUPLICATE},
    )
    def partial_update(self, request: Request, pk: str) -> Response:
        data = WebhookUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        webhook = services.webhook_update(
            workspace=access_of(request).workspace,
            webhook_id=pk,
            actor=actor_of_request(request),
            **data.validated_data,
        )
        return Response(webhook_body(webhook))

    def destroy(self, request: Request, pk: str) -> Response:
        services.webhook_delete(workspace=access_of(request).workspace, webhook_id=pk, actor=actor_of_request(request))
        return Response({"deleted": True})

    @extend_schema(
        operation_id="testWebhook",
        summary="Send a webhook.test event now",
        description="Sent synchronously with the same URL guard, signature and 10 s deadline as real "
        "deliveries; does not count toward automatic disabling.",
        request=None,
        responses={201: WebhookTestOutput},
    )
    @action(detail=True, methods=["post"])
    @idempotent
    def test(self, request: Request, pk: str) -> Response:
        result = services.webhook_send_test(workspace=access_of(request).workspace, webhook_id=pk)
        body = {"success": result.ok, "statusCode": result.status_code, "error": result.error or None}
        return Response(body, status=201)

    @extend_schema(
        operation_id="listWebhookDeliveries",
        summary="List a webhook's deliveries with their attempts",
        description="Newest first, each with its attempts.\n\n" + OFFSET_PAGINATION,
        parameters=[DeliveryListQuery],
        responses={200: DeliveryListOutput},
    )
    @action(detail=True, methods=["get"])
    def deliveries(self, request: Request, pk: str) -> Response:
        query = parse_query(request.query_params, DeliveryListQuery)
        page = selectors.delivery_page(workspace=access_of(request).workspace, webhook_id=pk, **query)
        body = {"deliveries": DeliveryOutput(page.items, many=True).data, "total": page.total, "hasMore": page.has_more}
        return Response(body)

    @extend_schema(
        operation_id="redeliverWebhookDelivery",
        summary="Send a delivery's event again",
        description="Creates a new delivery of the same event body (same event id) to this webhook. "
        "400 `webhook_inactive` while the webhook is disabled.",
        request=None,
        responses={201: DeliveryOutput},
    )
    @action(detail=True, methods=["post"], url_path=rf"deliveries/(?P<deliveryId>{ID_SEGMENT})/redeliver")
    @idempotent
    def redeliver(self, request: Request, pk: str, deliveryId: str) -> Response:
        delivery = services.delivery_redeliver(
            workspace=access_of(request).workspace, webhook_id=pk, delivery_id=deliveryId
        )
        return Response(DeliveryOutput(delivery).data, status=201)

    @extend_schema(
        operation_id="rotateWebhookSecret",
        summary="Give a webhook a new secret, the old one still signing for a grace period",
        description="Answers the webhook with its new `secret` (shown only here). During the grace period "
        "(`graceSeconds`, default 86,400) every delivery's `x-service-signature` holds two space-separated "
        "values, `sha256=<signed with the new secret> sha256=<signed with the old secret>`; outside it, "
        "exactly one. A receiver accepts a delivery when any value matches a secret it holds, so it can "
        "switch to the new secret at any moment of the grace period. Rotating again during a grace period "
        "replaces the old secret with the one in use until now. A retry with the same `Idempotency-Key` "
        "within 24 hours rotates nothing and answers this same body, the same `secret`.",
        request=WebhookRotateSecretInput,
        responses={201: WebhookSecretRotatedOutput},
    )
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    @idempotent
    def rotate_secret(self, request: Request, pk: str) -> Response:
        data = WebhookRotateSecretInput(data=request.data)
        data.is_valid(raise_exception=True)
        webhook = services.webhook_rotate_secret(
            workspace=access_of(request).workspace,
            webhook_id=pk,
            grace_seconds=data.validated_data["graceSeconds"],
            actor=actor_of_request(request),
        )
        return Response(WebhookSecretRotatedOutput(webhook).data, status=201)


class EventViewSet(viewsets.ViewSet):
    required_permissions = {"list": Permission.WEBHOOKS_READ}
    schema_tags = ["Webhooks"]

    @extend_schema(
        operation_id="listEvents",
        summary="The workspace's events, oldest first, to replay what a receiver missed",
        description="The events of the workspace in the order they were created, each exactly the JSON body "
        "its webhooks received (same `id`, same bytes), for the last 30 days (`EVENTS_RETENTION_DAYS`), "
        "whatever each webhook's `events` filter. Pass `nextCursor` back as `after` to continue where the "
        "page ended (cursor pagination: `hasMore` says whether more events are already there; false means "
        "caught up, poll again later with the same cursor): a receiver that was down replays from the last "
        "cursor it stored, and dedupes on `id` "
        "the events that also arrive by delivery. The order is the order in which the events became visible "
        "(committed), which is their creation order but for events of transactions still committing: a cursor "
        "never passes an event that appears later.\n\n" + CURSOR_PAGINATION,
        parameters=[EventListQuery],
        responses={200: EventListOutput},
    )
    def list(self, request: Request) -> HttpResponse:
        query = parse_query(request.query_params, EventListQuery)
        services.events_seal(workspace=access_of(request).workspace)
        page = selectors.event_page(
            workspace=access_of(request).workspace,
            after=query.get("after"),
            limit=query["limit"],
            names=query.get("type"),
        )
        # Written out from the stored bodies, never re-encoded: each event is byte for byte the
        # body its deliveries carried (and signed).
        events = ",".join(page.payloads)
        body = (
            f'{{"events":[{events}],"nextCursor":{json.dumps(page.next_cursor)},"hasMore":{json.dumps(page.has_more)}}}'
        )
        return HttpResponse(body.encode("utf-8"), content_type="application/json")
