"""The typed records of ``crosspost.models`` name only fields the OpenAPI description has."""

from __future__ import annotations

from typing import Any, get_type_hints

import pytest
from crosspost import models
from drf_spectacular.generators import SchemaGenerator

COMPONENTS = {
    models.PlatformEntry: "PlatformEntryOutput",
    models.Post: "PostOutput",
    models.PostCreated: "PostCreateOutput",
    models.PostResult: "PostResultOutput",
    models.PostResults: "PostResultsOutput",
    models.Account: "SocialAccountOutput",
    models.AccountDetail: "SocialAccountDetailOutput",
    models.ConnectBranding: "ConnectBrandingOutput",
    models.UploadUrl: "UploadUrlItemOutput",
    models.Webhook: "WebhookOutput",
    models.WebhookCreated: "WebhookCreatedOutput",
}


@pytest.fixture(scope="module")
def components() -> dict[str, Any]:
    return dict(SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"])


@pytest.mark.parametrize("model", list(COMPONENTS), ids=lambda m: m.__name__)
def test_model_fields_are_described(model: type, components: dict[str, Any]) -> None:
    described = set(components[COMPONENTS[model]]["properties"])
    unknown = set(get_type_hints(model)) - described
    assert not unknown, f"crosspost.models.{model.__name__} has fields the description lacks: {sorted(unknown)}"
