"""Posting queues of social accounts (issue 18): ``/social-accounts/{id}/queue`` (read, replace)
and ``/social-accounts/{id}/queue/next`` (the next free slots). The slot rules: ``posts.queues``."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import PostingQueue
from core import serializers as strict
from core.fields import TimeZoneField, format_instant
from core.idempotency import idempotent
from core.query import UNKNOWN_PARAMETER, NoQuery, parse_query, validated
from posts.payloads import choice
from posts.queues import DAYS, queue_get, queue_next, queue_set
from workspaces.authentication import access_of
from workspaces.roles import Permission

_TIME = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")
_ID = OpenApiParameter("id", OpenApiTypes.STR, OpenApiParameter.PATH, description="Account id")
_SLOT_HELP = "`day` MON..SUN and `time` a 24-hour local time `HH:MM` in the queue's `timezone`."


class QueueSlotInput(strict.Serializer):
    day = choice(list(DAYS), help_text="The weekday: MON to SUN.")
    time = serializers.RegexField(
        _TIME,
        max_length=5,
        error_messages={"invalid": "must be a 24-hour local time HH:MM (00:00 to 23:59)"},
        help_text="24-hour local time, HH:MM (00:00 to 23:59)",
    )


class QueueInput(strict.Serializer):
    timezone = TimeZoneField(
        help_text=("The IANA time zone the slots' times are read in (Europe/Berlin); daylight saving time follows it.")
    )
    slots = serializers.ListField(
        child=QueueSlotInput(),
        max_length=settings.POSTING_QUEUE_MAX_SLOTS,
        help_text=f"{_SLOT_HELP} A slot given twice is one slot.",
    )

    def validate_slots(self, slots: list[dict[str, str]]) -> list[dict[str, str]]:
        return list({(slot["day"], slot["time"]): slot for slot in slots}.values())


class QueueNextQuery(strict.QuerySerializer):
    count = serializers.IntegerField(min_value=1, max_value=50, default=10, help_text="How many slots (1-50)")


class QueueSlotOutput(serializers.Serializer):
    day = choice(list(DAYS), help_text="The weekday: MON to SUN.")
    time = serializers.CharField(help_text="HH:MM, local to the queue's timezone")


class QueueOutput(serializers.Serializer):
    timezone = serializers.CharField(allow_null=True, help_text="null when the account has no queue")
    slots = QueueSlotOutput(many=True, help_text="By day (Monday first), then time")


class QueueNextOutput(serializers.Serializer):
    slots = serializers.ListField(child=serializers.DateTimeField(), help_text="UTC instants, earliest first")


_QUEUE_EXAMPLE = {
    "timezone": "Europe/Berlin",
    "slots": [{"day": "MON", "time": "09:30"}, {"day": "FRI", "time": "17:00"}],
}


def _queue_body(queue: PostingQueue | None) -> dict[str, Any]:
    if queue is None:
        return {"timezone": None, "slots": []}
    return {
        "timezone": queue.timezone,
        # QueueSlot's Meta.ordering (weekday, then time) orders the prefetched slots.
        "slots": [{"day": DAYS[s.weekday], "time": s.local_time.strftime("%H:%M")} for s in queue.slots.all()],
    }


class AccountQueueView(APIView):
    required_permissions = {"get": Permission.ACCOUNTS_READ, "put": Permission.ACCOUNTS_MANAGE}
    schema_tags = ["Social accounts"]

    @extend_schema(
        operation_id="getAccountQueue",
        summary="Read an account's posting queue",
        description='An account without a queue answers `{"timezone": null, "slots": []}`. 404 when the '
        "account is not in this workspace.",
        parameters=[_ID],
        responses={200: QueueOutput, 400: UNKNOWN_PARAMETER},
        examples=[OpenApiExample("A queue", value=_QUEUE_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request, id: str) -> Response:
        parse_query(request.query_params, NoQuery)
        return Response(_queue_body(queue_get(workspace_id=access_of(request).workspace.id, account_id=id)))

    @extend_schema(
        operation_id="setAccountQueue",
        summary="Set an account's weekly posting slots",
        description=f"Replaces the queue and answers it as stored. {_SLOT_HELP} Slots keep their local time "
        "across DST changes (a time skipped by a spring-forward change falls at the first valid instant after "
        "it; a repeated one at its first occurrence). At most POSTING_QUEUE_MAX_SLOTS slots (100 by default). "
        "A post created with `queue: true` takes the earliest free slot.",
        parameters=[_ID],
        request=QueueInput,
        responses={200: QueueOutput},
        examples=[OpenApiExample("Two slots", value=_QUEUE_EXAMPLE)],
    )
    @idempotent
    def put(self, request: Request, id: str) -> Response:
        data = validated(QueueInput, request.data)
        slots = [(DAYS.index(s["day"]), dt.time.fromisoformat(s["time"])) for s in data["slots"]]
        queue = queue_set(
            workspace_id=access_of(request).workspace.id, account_id=id, timezone_name=data["timezone"], slots=slots
        )
        return Response(_queue_body(queue))


class AccountQueueNextView(APIView):
    required_permissions = {"get": Permission.ACCOUNTS_READ}
    schema_tags = ["Social accounts"]

    @extend_schema(
        operation_id="listAccountQueueSlots",
        summary="The next free slots of an account's posting queue",
        description="The next `count` slots after now that no live post of the account (any but a FAILED one) "
        "is scheduled at, as UTC instants. Empty without a queue. 404 when the account is not in this workspace.",
        parameters=[_ID, QueueNextQuery],
        responses={200: QueueNextOutput},
        examples=[
            OpenApiExample(
                "Next two", value={"slots": ["2026-03-30T07:30:00Z", "2026-04-03T15:00:00Z"]}, response_only=True
            )
        ],
    )
    def get(self, request: Request, id: str) -> Response:
        query = parse_query(request.query_params, QueueNextQuery)
        found = queue_next(workspace_id=access_of(request).workspace.id, account_id=id, count=query["count"])
        return Response({"slots": [format_instant(moment) for moment in found]})
