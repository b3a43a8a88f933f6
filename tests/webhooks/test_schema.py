"""The event payload schemas in the OpenAPI description."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from django.conf import settings
from django.db import transaction
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.settings import patched_settings
from drf_spectacular.validation import validate_schema

from audit.actors import system_actor
from webhooks.events import EVENT_NAMES, serialize_envelope
from webhooks.schema import envelope_component

TEST_ACTOR = system_actor("tests")

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
        data_ref = envelope["properties"]["data"]["allOf"][0]["$ref"].rsplit("/", 1)[1]
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
    assert components["WebhookPostEventData"]["properties"]["post"]["allOf"][0]["$ref"].endswith("WebhookPostRecord")


def test_every_webhook_has_a_title_and_its_section_a_description() -> None:
    """ReDoc titles each webhook by its summary and opens each tag's section with the tag's
    description: an event named by a bare sentence, or an empty heading, fails here."""
    schema = _schema()
    tags = {tag["name"]: tag for tag in schema["tags"]}
    summaries = []
    for name in EVENT_NAMES:
        operation = schema["x-webhooks"][name]["post"]
        event, _, title = operation["summary"].partition(": ")
        assert event == name and title and not title.endswith("."), operation["summary"]
        summaries.append(title)
        [tag] = operation["tags"]
        assert tags[tag]["description"], tag
        assert "x-service-signature" in tags[tag]["description"]
        assert operation["description"].split("\n")[0]  # what the event means, first
    assert len(set(summaries)) == len(EVENT_NAMES)
    assert tags["Webhooks"]["description"]
    used = {tag for operations in schema["paths"].values() for op in operations.values() for tag in op.get("tags", [])}
    assert used | {"Webhook events"} == set(tags)  # every tag once, none invented
    names = [tag["name"] for tag in schema["tags"]]
    assert names.index("Webhook events") == names.index("Webhooks") + 1


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


@pytest.mark.django_db
def test_the_envelopes_the_service_emits_match_their_documented_schemas() -> None:
    """Each event as the emitting apps build it, through the outbox, validated against the
    OpenAPI components (OpenAPI 3.0 rules: nullable, required, enums)."""
    from django.utils import timezone
    from jsonschema.exceptions import ValidationError
    from openapi_schema_validator import OAS30Validator

    from accounts.disconnect import account_disconnect
    from accounts.services import account_event_data
    from platforms.base import PublishResult
    from posts.pipeline import first_comment, lateness
    from posts.pipeline.claims import claim_targets
    from posts.rendering import post_record
    from tests.factories.posts import PostFactory, PostTargetFactory, account
    from tests.factories.webhooks import WebhookFactory
    from webhooks.delivery.engine import notice_data
    from webhooks.events import emit_event, emit_webhook_notice
    from webhooks.models import Event

    components = json.loads(json.dumps(_schema()))["components"]["schemas"]
    webhook = WebhookFactory()
    workspace = webhook.workspace
    post = PostFactory(workspace=workspace, status="PARTIAL_FAILURE", text="Launch 🚀\u2028")
    PostTargetFactory(post=post, platform="MASTODON", status="PUBLISHED", platform_post_id="m1")
    PostTargetFactory(post=post, platform="BLUESKY", status="FAILED", error_message="refused")
    facebook = account(workspace, "FACEBOOK", status="unauthorized", unauthorized_reason="token expired")
    image = {"jobId": "aij_1", "sessionId": "s1", "prompt": "a cat"}
    data = {
        "post.published": {"post": post_record(post)},
        "post.partially_failed": {"post": post_record(post)},
        "post.failed": {"post": post_record(post)},
        "post.scheduled": {"post": post_record(post)},
        "account.unauthorized": account_event_data(facebook),
        "image.completed": {"image": {**image, "imageUrl": "https://cdn.example.com/i.png", "imageId": "med_1"}},
        "image.failed": {"image": {**image, "error": "content refused"}},
    }
    for name, event_data in data.items():
        emit_event(workspace_id=workspace.id, name=name, data=event_data)
    failing = WebhookFactory(workspace=workspace, consecutive_failures=15, last_failure_at=timezone.now())
    # account.disconnected as the disconnect emits it (this account's platform has no revoke call).
    account_disconnect(workspace_id=workspace.id, account_id=account(workspace, "TELEGRAM").id, actor=TEST_ACTOR)
    for name in ("webhook.failing", "webhook.disabled"):
        emit_webhook_notice(
            workspace_id=workspace.id, name=name, data=notice_data(failing), about_webhook_id=failing.id
        )
    # post.missed as the pipeline emits it: a first attempt two hours late under latePolicy skip.
    late = PostFactory(workspace=workspace, status="PENDING", late_policy="skip", max_lateness_seconds=60)
    due = timezone.now() - dt.timedelta(hours=2)
    target = PostTargetFactory(post=late, platform="MASTODON", status="PENDING", next_attempt_at=due)
    claims = claim_targets([target.id], now=timezone.now(), lease=dt.timedelta(seconds=60))
    assert lateness.judge(claims) == []
    # post.first_comment.* as the pipeline emits them: one comment posted, one whose outcome is unknown.
    commented = PostFactory(
        workspace=workspace, status="COMPLETED", first_comment={"text": "first!", "delaySeconds": 0}
    )
    for platform, remote_id in (("MASTODON", "m2"), ("FACEBOOK", "f2")):
        entry = PostTargetFactory(
            post=commented,
            platform=platform,
            status="PUBLISHED",
            platform_post_id=remote_id,
            comment_status="PENDING",
            comment_due_at=timezone.now(),
        )
        [claim] = first_comment._claim([entry.id], now=timezone.now())
        if platform == "MASTODON":
            assert first_comment.record_result(claim, PublishResult(done=True, platform_post_id="c1"))
        else:
            assert first_comment.fail(claim, "unknown_outcome", "timed out")
    # post.updated / post.unpublished as the services emit them: a request with nothing to send
    # (every entry SKIPPED) closes at once, with its entries' outcomes and the record's new keys.
    from posts.services.after_publishing import post_edit_published, post_unpublish

    tiktok = PostFactory(workspace=workspace, status="COMPLETED", text="Live")
    PostTargetFactory(post=tiktok, platform="TIKTOK", status="PUBLISHED", platform_post_id="t1", text="Live")
    post_edit_published(workspace_id=workspace.id, post_id=tiktok.id, changes={"text": "Edited"})
    post_unpublish(workspace_id=workspace.id, post_id=tiktok.id)
    # media.processed / media.failed as the fit job emits them: a variant made, one that failed.
    from media import fitting
    from media.models import MediaVariant
    from tests.factories.media import MediaFileFactory

    original = MediaFileFactory(workspace=workspace, uploaded=True)
    made = MediaVariant.objects.create(
        workspace=workspace,
        original=original,
        platform="INSTAGRAM",
        post_type="FEED",
        status="ready",
        output=MediaFileFactory(workspace=workspace, uploaded=True),
        rules_fixed=["media_aspect_ratio"],
    )
    with transaction.atomic():
        fitting._emit(made, "media.processed")
    failed = MediaVariant.objects.create(workspace=workspace, original=original, platform="TIKTOK", post_type="FEED")
    assert fitting.media_fit_failed(variant_id=failed.id, reason="the file cannot be read") == "failed"
    # comment.* as the inbox emits them: a sync's announcement, and each action's outcome (a reply
    # done, a hide, an unhide, a delete and a like done, one that failed).
    from engagement import actions as comment_actions
    from engagement.models import ActionKind, ActionStatus, CommentAction
    from engagement.sync import comments_announce
    from posts.pipeline import step
    from tests.factories.engagement import CommentFactory

    heard = CommentFactory(target__post__workspace=workspace, rating=None)
    assert comments_announce(account_id=heard.account_id) == 1
    for kind in ActionKind:
        for status in (ActionStatus.DONE, ActionStatus.FAILED) if kind == ActionKind.REPLY else (ActionStatus.DONE,):
            acted = CommentAction.objects.create(
                workspace=workspace, comment=heard, kind=kind, text="Thanks!", due_at=timezone.now()
            )
            [claim] = step.claim_rows(comment_actions.COLUMNS, [acted.id], now=timezone.now())
            if status == ActionStatus.FAILED:
                assert comment_actions._write(claim, status, error_code="unknown_outcome", message="timed out")
            else:
                reply = (f"reply-of-{acted.id}", "", None) if kind == ActionKind.REPLY else None
                assert comment_actions._write(claim, status, reply=reply)
    test_data = {"webhookId": webhook.id, "events": list(EVENT_NAMES)}
    test_body = serialize_envelope(event_id="evt_t", name="webhook.test", created_at=timezone.now(), data=test_data)
    bodies = {event.name: event.payload for event in Event.objects.all()} | {"webhook.test": test_body}
    assert sorted(bodies) == sorted(EVENT_NAMES)

    def validator(component: str) -> OAS30Validator:
        return OAS30Validator({"components": {"schemas": components}, "$ref": f"#/components/schemas/{component}"})

    for name, payload in bodies.items():
        validator(envelope_component(name)).validate(json.loads(payload))
        validator("WebhookEvent").validate(json.loads(payload))
    # A body that breaks its schema is refused: the check can fail.
    wrong = json.loads(bodies["image.failed"]) | {"data": {"post": {}}}
    with pytest.raises(ValidationError, match="'image' is a required property"):
        validator(envelope_component("image.failed")).validate(wrong)
