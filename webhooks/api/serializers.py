from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers
from rest_framework.fields import empty

from core import serializers as strict
from core.fields import InstantField, format_instant
from core.pagination import OffsetQuery
from core.schema import MIN_PROPERTIES
from webhooks.events import EVENT_NAMES, STORED_EVENT_NAMES
from webhooks.models import Delivery, Webhook
from webhooks.services import ROTATION_GRACE_MAX_SECONDS, ROTATION_GRACE_SECONDS
from webhooks.url_safety import MAX_URL_LENGTH

CURSOR_PATTERN = r"^[0-9]{1,18}$"  # a position in the workspace's feed: any value of it is one


def _event_name(names: tuple[str, ...] = EVENT_NAMES) -> serializers.ChoiceField:
    """An event name among ``names`` (documented as that enum); an unknown one is a 400 that lists
    the valid names."""
    field_class = extend_schema_field({"type": "string", "enum": list(names)})(
        type("EventNameField", (serializers.ChoiceField,), {})
    )
    valid = ", ".join(names)
    message = f'"{{input}}" is not an event name; valid names: {valid}'
    return field_class(choices=list(names), error_messages={"invalid_choice": message})  # type: ignore[no-any-return]


def _events_filter(**kwargs: Any) -> serializers.ListField:
    return serializers.ListField(
        child=_event_name(),
        allow_null=True,
        allow_empty=False,
        min_length=1,
        max_length=len(EVENT_NAMES),
        help_text="Subscribe to these events only; absent or null: every event (the default). "
        "`webhook.test` is always sent, whatever the list.",
        **kwargs,
    )


def _distinct(events: list[str] | None) -> list[str] | None:
    return None if events is None else list(dict.fromkeys(events))


@extend_schema_field(
    {
        "type": "string",
        "format": "uri",
        "minLength": 1,
        "maxLength": MAX_URL_LENGTH,
        "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^@/?#]+",
    }
)
class _WebhookUrlField(serializers.CharField):
    """Checked by ``webhooks.url_safety`` (its messages name the problem); the description states
    the shape: an http(s) URL with a host and no credentials, at most MAX_URL_LENGTH characters."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(trim_whitespace=False, **kwargs)

    def run_validation(self, data: Any = empty) -> Any:
        if data == "":
            return data  # refused by webhooks.url_safety, whose message and code clients know
        return super().run_validation(data)


class WebhookCreateInput(strict.Serializer):
    url = _WebhookUrlField(
        help_text="A public http(s) endpoint: its host must resolve to public addresses only (checked when "
        "registered and before every delivery)."
    )
    events = _events_filter(required=False, default=None)

    def validate_events(self, value: list[str] | None) -> list[str] | None:
        return _distinct(value)


@extend_schema_serializer(extensions={MIN_PROPERTIES: 1})
class WebhookUpdateInput(strict.Serializer):
    url = _WebhookUrlField(required=False, help_text="A new public http(s) endpoint.")
    active = serializers.BooleanField(
        required=False,
        help_text="`true` re-enables, clears `disabledAt` and resets the failure count; `false` deactivates "
        "(`disabledAt` stays null: it is set only by the automatic disable after failures).",
    )
    events = _events_filter(required=False)

    def validate_events(self, value: list[str] | None) -> list[str] | None:
        return _distinct(value)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs:
            raise serializers.ValidationError("body must contain url, active and/or events")
        return attrs


class WebhookRotateSecretInput(strict.Serializer):
    graceSeconds = serializers.IntegerField(
        required=False,
        default=ROTATION_GRACE_SECONDS,
        min_value=0,
        max_value=ROTATION_GRACE_MAX_SECONDS,
        help_text="How long deliveries stay signed with the old secret too (default one day; 0 ends it now).",
    )


class WebhookOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The webhook's id.")
    url = serializers.CharField(help_text="Where deliveries are POSTed.")
    active = serializers.BooleanField(help_text="Deliveries are sent (false: paused or disabled after failures).")
    createdAt = InstantField(source="created_at", help_text="When it was created.")
    updatedAt = InstantField(source="updated_at", help_text="When it last changed.")
    lastSuccessAt = InstantField(
        source="last_success_at", allow_null=True, help_text="The last delivery the endpoint accepted."
    )
    lastFailureAt = InstantField(source="last_failure_at", allow_null=True, help_text="The last delivery that failed.")
    disabledAt = InstantField(
        source="disabled_at",
        allow_null=True,
        help_text="When the webhook was disabled automatically after repeated failures; null otherwise (also "
        "when deactivated with `active: false`), and cleared when it is activated again.",
    )
    events = serializers.ListField(
        child=_event_name(),
        allow_null=True,
        help_text="The events it is subscribed to; null: every event.",
    )
    previousSecretExpiresAt = InstantField(
        source="previous_secret_expires_at",
        allow_null=True,
        help_text="Until then deliveries are signed with the previous secret too (after a rotation); null when not.",
    )


class WebhookCreatedOutput(WebhookOutput):
    secret = serializers.CharField(
        help_text="`whsec_…`; shown only in this response. Key of the HMAC-SHA256 signature of every delivery."
    )


class WebhookSecretRotatedOutput(WebhookOutput):
    secret = serializers.CharField(
        help_text="The new `whsec_…`; shown only in this response. Every delivery is signed with it from now on, "
        "and with the previous secret too until `previousSecretExpiresAt`."
    )


class WebhookListOutput(serializers.Serializer):
    webhooks = WebhookOutput(many=True, help_text="The workspace's webhooks.")


class WebhookDeletedOutput(serializers.Serializer):
    deleted = serializers.BooleanField(help_text="true: the webhook is gone, its pending deliveries too.")


class WebhookTestOutput(serializers.Serializer):
    success = serializers.BooleanField(help_text="True when the receiver answered 2xx within the deadline.")
    statusCode = serializers.IntegerField(
        allow_null=True,
        help_text="The receiver's HTTP status (also when it is not 2xx); null when no response arrived "
        "(refused URL, connection failure, timeout before the status line).",
    )
    error = serializers.CharField(allow_null=True, help_text="Why the send failed; null on success.")


class DeliveryListQuery(OffsetQuery):
    pass


class AttemptOutput(serializers.Serializer):
    statusCode = serializers.IntegerField(
        source="status_code", allow_null=True, help_text="The endpoint's HTTP status; null when no answer came."
    )
    durationMs = serializers.IntegerField(source="duration_ms", help_text="How long the attempt took.")
    error = serializers.SerializerMethodField(help_text="Why it failed, when it did.")
    createdAt = InstantField(source="created_at", help_text="When it was made.")

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_error(self, attempt: Any) -> str | None:
        return attempt.error or None


class DeliveryOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The delivery's id.")
    eventId = serializers.CharField(source="event_id", help_text="The event's `id` (the body's `id`).")
    event = serializers.CharField(source="event.name", help_text="The event's name.")
    status = serializers.CharField(help_text="pending, succeeded or failed")
    attempts = AttemptOutput(many=True, source="attempts.all", help_text="Every attempt, oldest first.")
    createdAt = InstantField(source="created_at", help_text="When the delivery was made.")
    lastAttemptAt = InstantField(source="last_attempt_at", allow_null=True, help_text="When the last attempt ran.")
    nextAttemptAt = serializers.SerializerMethodField(help_text="When the next attempt runs, while pending.")

    @extend_schema_field(InstantField(allow_null=True))
    def get_nextAttemptAt(self, delivery: Delivery) -> str | None:
        if delivery.status != "pending":
            return None
        return format_instant(delivery.next_attempt_at)


class DeliveryListOutput(serializers.Serializer):
    deliveries = DeliveryOutput(many=True, help_text="This page's deliveries, newest first.")
    total = serializers.IntegerField(help_text="How many deliveries the webhook has, on every page together.")
    hasMore = serializers.BooleanField(
        help_text=("true while more deliveries follow this page (next: `offset` + the deliveries received).")
    )


class EventListQuery(strict.QuerySerializer):
    after = serializers.RegexField(
        CURSOR_PATTERN,
        required=False,
        help_text="A `nextCursor` from an earlier page, passed back as it is: the events after the last one it "
        "returned.",
        error_messages={
            "invalid": "must be a nextCursor returned by GET /events",
        },
    )
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20)
    type = serializers.ListField(
        child=_event_name(STORED_EVENT_NAMES),
        required=False,
        help_text="Only these events (repeat the parameter for several).",
    )


@extend_schema_field(
    {
        "type": "array",
        "items": {"$ref": "#/components/schemas/WebhookEvent"},
        "description": "Each exactly the JSON body the webhooks received for it, oldest first.",
    }
)
class _EventBodiesField(serializers.Field):
    pass


class EventListOutput(serializers.Serializer):
    events = _EventBodiesField()
    nextCursor = serializers.CharField(
        allow_null=True,
        help_text="Pass it as `after` to continue after this page (the same cursor again when the page is "
        "empty: poll with it later); null only when no event was returned and no `after` was given.",
    )
    hasMore = serializers.BooleanField(
        help_text="true when more events follow this page already: ask again with `after=nextCursor` at once; "
        "false when the feed is caught up (poll later with the same cursor).",
    )


def webhook_body(webhook: Webhook) -> dict[str, Any]:
    """The webhook without its secret (only create and rotate-secret answer it, with their own output)."""
    return dict(WebhookOutput(webhook).data)
