"""AI image jobs: the endpoints, the job run (offline and HTTP providers) and its events."""

from __future__ import annotations

import base64
import datetime as dt
import io
import json
import uuid

import pytest
from django.utils import timezone
from PIL import Image

from media.ai.offline import OfflineRenderer
from media.ai.openai_compat import OpenAICompatibleProvider
from media.ai.providers import ProviderError
from media.ai.services import ai_image_job_run
from media.models import AiImageJob, MediaFile
from media.services import MediaInfo, media_resolve
from media.storage import get_media_storage
from media.tasks import generate_image
from tests.factories.media import AiImageJobFactory
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def events_of(workspace) -> list[tuple[str, dict]]:
    return [
        (e.name, json.loads(e.payload)["data"])
        for e in Event.objects.filter(workspace=workspace).order_by("created_at")
    ]


def png_bytes(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (10, 200, 30)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def openai_provider(settings, fake_images_api):
    settings.AI_IMAGE_PROVIDER = "openai"
    settings.AI_IMAGE_API_URL = fake_images_api.url
    settings.AI_IMAGE_API_KEY = "sk-test-secret-key"
    settings.AI_IMAGE_MODEL = "gpt-image-1"
    return fake_images_api


def test_create_queues_a_job_and_enqueues_after_commit(api, workspace, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        response = api.post("/api/v1/ai/images", {"prompt": "a lighthouse at dusk"}, format="json")
    assert response.status_code == 201
    job = AiImageJob.objects.get(workspace=workspace)
    assert response.json() == {"jobId": job.id, "sessionId": job.session_id, "status": "queued"}
    assert str(uuid.UUID(job.session_id)) == job.session_id  # the agent server validates it as a UUID
    assert (job.prompt, job.aspect_ratio, job.status) == ("a lighthouse at dusk", "1:1", "queued")
    assert len(callbacks) == 1


def test_create_keeps_the_given_session_and_ratio(client_for, workspace):
    response = client_for("contributor").post(
        "/api/v1/ai/images", {"prompt": "p", "aspectRatio": "9:16", "sessionId": "my-session"}, format="json"
    )
    assert response.status_code == 201
    job = AiImageJob.objects.get(id=response.json()["jobId"])
    assert response.json() == {"jobId": job.id, "sessionId": "my-session", "status": "queued"}
    assert job.aspect_ratio == "9:16"


@pytest.mark.parametrize(
    ("body", "messages"),
    [
        ({}, ["prompt: This field is required."]),
        ({"prompt": ""}, ["prompt: This field may not be blank."]),
        ({"prompt": "   "}, ["prompt: must not be blank"]),
        ({"prompt": "x" * 2001}, ["prompt: Ensure this field has no more than 2000 characters."]),
        ({"prompt": "x", "aspectRatio": "2:1"}, ['aspectRatio: "2:1" is not a valid choice.']),
        ({"prompt": "x", "sessionId": "s" * 201}, ["sessionId: Ensure this field has no more than 200 characters."]),
    ],
)
def test_create_validation(api, body, messages):
    response = api.post("/api/v1/ai/images", body, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "statusCode": 400,
        "error": "Bad Request",
        "message": messages,
        "code": "validation_error",
    }
    assert AiImageJob.objects.count() == 0


def test_a_2000_character_prompt_is_accepted(api):
    assert api.post("/api/v1/ai/images", {"prompt": "x" * 2000}, format="json").status_code == 201


def test_offline_job_completes_with_one_event(api, workspace):
    created = api.post(
        "/api/v1/ai/images", {"prompt": "a red fox", "aspectRatio": "16:9", "sessionId": "s1"}, format="json"
    ).json()

    assert generate_image(created["jobId"]) == "completed"
    assert generate_image(created["jobId"]) == "completed"

    job = AiImageJob.objects.get(id=created["jobId"])
    media = MediaFile.objects.get(id=job.image_id)
    assert api.get(f"/api/v1/ai/images/{job.id}").json() == {
        "jobId": job.id,
        "sessionId": "s1",
        "status": "completed",
        "imageUrl": media.public_url,
        "imageId": media.id,
        "error": None,
    }
    assert events_of(workspace) == [
        (
            "image.completed",
            {
                "image": {
                    "jobId": job.id,
                    "sessionId": "s1",
                    "prompt": "a red fox",
                    "imageUrl": media.public_url,
                    "imageId": media.id,
                }
            },
        )
    ]
    assert media.workspace_id == workspace.id and media.source == "ai"
    assert media.keep_until > timezone.now() + dt.timedelta(days=6)
    assert media.key.startswith(f"{workspace.id}/") and media.key.endswith(".png")
    assert media_resolve(workspace_id=workspace.id, urls=[media.public_url]) == [
        MediaInfo(url=media.public_url, kind="image", mime_type="image/png", size=media.size)
    ]
    with get_media_storage().open(media.key) as stored, Image.open(stored) as image:
        assert image.size == (1024, 576)


def test_provider_error_fails_the_job_with_one_event(api, workspace, openai_provider):
    openai_provider.status = 400
    openai_provider.body = {"error": {"message": "Your request was rejected by the safety system.", "code": "x"}}
    job_id = api.post("/api/v1/ai/images", {"prompt": "forbidden"}, format="json").json()["jobId"]

    assert generate_image(job_id) == "failed"
    assert generate_image(job_id) == "failed"

    job = AiImageJob.objects.get(id=job_id)
    error = "AI image provider rejected the request: Your request was rejected by the safety system."
    assert api.get(f"/api/v1/ai/images/{job_id}").json() == {
        "jobId": job_id,
        "sessionId": job.session_id,
        "status": "failed",
        "imageUrl": None,
        "imageId": None,
        "error": error,
    }
    assert events_of(workspace) == [
        (
            "image.failed",
            {"image": {"jobId": job_id, "sessionId": job.session_id, "prompt": "forbidden", "error": error}},
        )
    ]
    assert MediaFile.objects.count() == 0
    assert len(openai_provider.requests) == 1


def test_transient_errors_are_retried_then_fail(workspace, openai_provider):
    openai_provider.status = 503
    openai_provider.body = {"error": {"message": "overloaded"}}
    job = AiImageJobFactory(workspace=workspace)
    first = ai_image_job_run(job_id=job.id)
    # 30 s then 60 s, each ± 20 % (the jitter of every retry of the work engine)
    assert first.status == "queued" and first.retry_in_seconds is not None
    assert 24 <= first.retry_in_seconds <= 36
    second = ai_image_job_run(job_id=job.id).retry_in_seconds
    assert second is not None and 48 <= second <= 72
    assert AiImageJob.objects.get(id=job.id).lease_until is None  # released for the retry
    last = ai_image_job_run(job_id=job.id)
    assert (last.status, last.retry_in_seconds) == ("failed", None)
    job.refresh_from_db()
    assert (job.attempts, job.error) == (3, "AI image provider failed (503): overloaded")
    assert [name for name, _ in events_of(workspace)] == ["image.failed"]


def test_a_job_being_processed_is_not_run_twice(workspace):
    job = AiImageJobFactory(
        workspace=workspace, status="processing", attempts=1, lease_until=timezone.now() + dt.timedelta(minutes=5)
    )
    assert ai_image_job_run(job_id=job.id).status == "processing"
    AiImageJob.objects.filter(id=job.id).update(lease_until=timezone.now() - dt.timedelta(seconds=1))
    assert ai_image_job_run(job_id=job.id).status == "completed"  # a crashed worker's job is taken over
    assert len(events_of(workspace)) == 1


def test_openai_client_request_and_crop(openai_provider):
    openai_provider.body = {"data": [{"b64_json": base64.b64encode(png_bytes(1536, 1024)).decode()}]}
    provider = OpenAICompatibleProvider(base_url=openai_provider.url, api_key="sk-abc", model="m1")
    image = provider.generate(prompt="a boat", aspect_ratio="16:9")
    (request,) = openai_provider.requests
    assert request["path"] == "/v1/images/generations"
    assert request["headers"]["Authorization"] == "Bearer sk-abc"
    assert request["json"] == {
        "prompt": "a boat",
        "size": "1536x1024",
        "response_format": "b64_json",
        "n": 1,
        "model": "m1",
    }
    assert (image.width, image.height, image.mime_type) == (1024, 576, "image/png")
    with Image.open(io.BytesIO(image.data)) as decoded:
        assert decoded.size == (1024, 576)


@pytest.mark.parametrize(
    ("status", "body", "message", "retryable"),
    [
        (
            401,
            {"error": {"message": "Incorrect API key provided: sk-abc"}},
            "AI image provider refused the credentials",
            False,
        ),
        (429, {"error": {"message": "quota"}}, "AI image provider rate limit or quota exceeded: quota", True),
        (400, {"error": {"message": "bad key sk-abc"}}, "AI image provider rejected the request: bad key ***", False),
        (500, b"<html>oops</html>", "AI image provider failed (500): HTTP 500", True),
        (200, {"data": []}, "AI image provider returned no image", False),
        (200, {"data": [{"b64_json": "!!!"}]}, "AI image provider returned no image", False),
        (
            200,
            {"data": [{"b64_json": base64.b64encode(b"not png").decode()}]},
            "AI image provider returned an unreadable image",
            False,
        ),
        (200, b"not json", "AI image provider returned no image", False),
    ],
)
def test_openai_client_maps_errors(openai_provider, status, body, message, retryable):
    openai_provider.status, openai_provider.body = status, body
    provider = OpenAICompatibleProvider(base_url=openai_provider.url, api_key="sk-abc", model="m1")
    with pytest.raises(ProviderError) as error:
        provider.generate(prompt="x", aspect_ratio="1:1")
    assert (error.value.message, error.value.retryable) == (message, retryable)
    assert "sk-abc" not in error.value.message


def test_openai_client_timeout_and_unreachable(openai_provider):
    openai_provider.delay = 1.0
    slow = OpenAICompatibleProvider(base_url=openai_provider.url, api_key="k", model="m", timeout=0.2)
    with pytest.raises(ProviderError) as timeout:
        slow.generate(prompt="x", aspect_ratio="1:1")
    assert (timeout.value.message, timeout.value.retryable) == ("AI image provider timed out", True)
    closed = OpenAICompatibleProvider(base_url="http://127.0.0.1:9/v1", api_key="k", model="m")
    with pytest.raises(ProviderError) as unreachable:
        closed.generate(prompt="x", aspect_ratio="1:1")
    assert (unreachable.value.message, unreachable.value.retryable) == ("AI image provider is unreachable", True)


@pytest.mark.parametrize(
    ("ratio", "size"),
    [
        ("1:1", (1024, 1024)),
        ("16:9", (1024, 576)),
        ("9:16", (576, 1024)),
        ("3:2", (1024, 683)),
        ("2:3", (683, 1024)),
        ("4:5", (819, 1024)),
        ("5:4", (1024, 819)),
    ],
)
def test_offline_renderer_follows_the_ratio_and_is_deterministic(ratio, size):
    first = OfflineRenderer().generate(prompt="a calm lake, mountains", aspect_ratio=ratio)
    again = OfflineRenderer().generate(prompt="a calm lake, mountains", aspect_ratio=ratio)
    other = OfflineRenderer().generate(prompt="a stormy sea", aspect_ratio=ratio)
    assert first.data == again.data
    assert first.data != other.data
    with Image.open(io.BytesIO(first.data)) as image:
        assert (image.format, image.size) == ("PNG", size)


def test_get_is_404_for_another_workspace_or_unknown(api, other_workspace):
    foreign = AiImageJobFactory(workspace=other_workspace)
    for job_id in (foreign.id, "imgjob_unknown"):
        response = api.get(f"/api/v1/ai/images/{job_id}")
        assert response.status_code == 404
        assert response.json() == {
            "statusCode": 404,
            "error": "Not Found",
            "message": "Image job not found",
            "code": "image_job_not_found",
        }


def test_queued_job_reads_back(api, workspace):
    job = AiImageJobFactory(workspace=workspace)
    assert api.get(f"/api/v1/ai/images/{job.id}").json() == {
        "jobId": job.id,
        "sessionId": job.session_id,
        "status": "queued",
        "imageUrl": None,
        "imageId": None,
        "error": None,
    }


def test_anonymous_is_401(anon, workspace):
    job = AiImageJobFactory(workspace=workspace)
    assert anon.post("/api/v1/ai/images", {"prompt": "x"}, format="json").status_code == 401
    assert anon.get(f"/api/v1/ai/images/{job.id}").status_code == 401


def test_viewer_is_403_with_required_permission(client_for, workspace):
    viewer = client_for("viewer")
    job = AiImageJobFactory(workspace=workspace)
    for response in (
        viewer.post("/api/v1/ai/images", {"prompt": "x"}, format="json"),
        viewer.get(f"/api/v1/ai/images/{job.id}"),
    ):
        assert response.status_code == 403
        assert response.json()["requiredPermission"] == "ai.generate"
        assert response.json()["code"] == "permission_denied"


@pytest.mark.parametrize(
    ("ratio", "requested", "size"),
    [
        ("1:1", "1024x1024", (1024, 1024)),
        ("16:9", "1536x1024", (1024, 576)),
        ("9:16", "1024x1536", (576, 1024)),
        ("3:2", "1536x1024", (1024, 683)),
        ("2:3", "1024x1536", (683, 1024)),
        ("4:5", "1024x1536", (819, 1024)),
        ("5:4", "1536x1024", (1024, 819)),
    ],
)
def test_a_job_on_the_http_provider_completes_at_the_ratios_size(
    api, workspace, openai_provider, ratio, requested, size
):
    width, height = (int(n) for n in requested.split("x"))
    openai_provider.body = {"data": [{"b64_json": base64.b64encode(png_bytes(width, height)).decode()}]}
    job_id = api.post("/api/v1/ai/images", {"prompt": "a kite", "aspectRatio": ratio}, format="json").json()["jobId"]

    assert generate_image(job_id) == "completed"

    (request,) = openai_provider.requests
    assert request["headers"]["Authorization"] == "Bearer sk-test-secret-key"
    assert request["json"] == {
        "prompt": "a kite",
        "size": requested,
        "response_format": "b64_json",
        "n": 1,
        "model": "gpt-image-1",
    }
    job = AiImageJob.objects.get(id=job_id)
    media = MediaFile.objects.get(id=job.image_id)
    with get_media_storage().open(media.key) as stored, Image.open(stored) as image:
        assert (image.format, image.size) == ("PNG", size)
    assert [name for name, _ in events_of(workspace)] == ["image.completed"]
