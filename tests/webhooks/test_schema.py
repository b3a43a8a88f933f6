"""The event payload schemas in the OpenAPI description."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.conf import settings
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.settings import patched_settings
from drf_spectacular.validation import validate_schema

from webhooks.events import EVENT_NAMES, serialize_envelope
from webhooks.schema import envelope_component

HOOK = "webhooks.schema.add_event_schemas"


def _schema() -> dict[str, Any]:
    hooks = list(settings.SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"])
    if HOOK not in hooks:
        hooks.append(HOOK)
    with patched_settings({"POSTPROCESSING_HOOKS": hooks}):
        return SchemaGenerator().get_schema(request=None, public=True)


def test_every_event_has_an_envelope_and_data_schema_and_the_document_validates() -> None:
    schema = json.loads(json.dumps(_schema()))
    validate_schema(schema)
    components = schema["components"]["schemas"]
    union = components["WebhookEvent"]
    assert sorted(union["discriminator"]["mapping"]) == sorted(EVENT_NAMES)
    assert "x-service-signature" in union["description"] and "5 minutes" in union["description"]
    for name in EVENT_NAMES:
        envelope = components[envelope_component(name)]
        assert envelope["properties"]["event"]["enum"] == [name]
        assert envelope["required"] == ["id", "event", "createdAt", "data"]
        data_ref = envelope["properties"]["data"]["$ref"].rsplit("/", 1)[1]
        assert data_ref in components
        operation = schema["x-webhooks"][name]["post"]
        assert operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
            envelope_component(name)
        )
        assert [p["name"] for p in operation["parameters"]] == [
            "x-service-event",
            "x-service-webhook-id",
            "x-service-timestamp",
            "x-service-signature",
        ]
    assert components["WebhookPostEventData"]["properties"]["post"]["$ref"].endswith("WebhookPostRecord")


def test_a_real_envelope_has_the_documented_fields() -> None:
    from django.utils import timezone

    body = json.loads(
        serialize_envelope(event_id="evt_1", name="webhook.test", created_at=timezone.now(), data={"webhookId": "w"})
    )
    documented = _schema()["components"]["schemas"][envelope_component("webhook.test")]
    assert sorted(body) == sorted(documented["properties"])


@pytest.mark.django_db
def test_served_description_includes_the_event_schemas(anon: Any) -> None:
    served = anon.get("/api/v1/openapi.json").json()
    assert "WebhookEvent" in served["components"]["schemas"] and "x-webhooks" in served
