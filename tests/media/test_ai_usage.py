"""AI usage per member and workspace, by kind, and the optional monthly quota
(AI_MONTHLY_UNITS): 402 ai_quota_exhausted past it, refunds when a generation fails."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from media.ai.errors import AiQuotaExhausted
from media.ai.usage import UsageMember, month_of, usage_charge
from media.models import AiImageJob, AiUsage
from media.tasks import generate_image
from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory
from tests.workspaces.test_auth import _oauth_client
from workspaces.services import api_key_create

pytestmark = pytest.mark.django_db

GENERATE = "/api/v1/ai/captions"
REFINE = "/api/v1/ai/captions/refine"
IMAGES = "/api/v1/ai/images"
QUOTA_BODY = {
    "statusCode": 402,
    "error": "Payment Required",
    "code": "ai_quota_exhausted",
}


def usage_rows() -> list[tuple[str, str, int, int]]:
    return sorted(AiUsage.objects.values_list("member", "kind", "calls", "units"))


def client_with(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def test_a_key_nobody_created_is_its_own_member(workspace):
    issued = api_key_create(workspace=workspace, name="ci", role="editor")
    client = client_with(issued.plaintext)
    client.post(GENERATE, {"prompt": "a"}, format="json")
    client.post(REFINE, {"prompt": "b", "originalText": "c"}, format="json")
    client.post(IMAGES, {"prompt": "d"}, format="json")
    member = f"key:{issued.api_key.id}"
    assert usage_rows() == [(member, "caption", 2, 4), (member, "image", 1, 2)]
    row = AiUsage.objects.get(kind="caption")
    assert (row.workspace_id, row.api_key_id, row.user_id, row.month) == (
        workspace.id,
        issued.api_key.id,
        None,
        month_of(timezone.now()),
    )


def test_keys_of_one_creator_and_their_sign_in_count_as_one_member(workspace):
    user = UserFactory()
    MembershipFactory(user=user, workspace=workspace, role="contributor", is_default=True)
    first = api_key_create(workspace=workspace, name="one", role="editor", created_by_id=user.id)
    second = api_key_create(workspace=workspace, name="two", role="contributor", created_by_id=user.id)
    for client in (client_with(first.plaintext), client_with(second.plaintext), _oauth_client(user)):
        assert client.post(GENERATE, {"prompt": "a"}, format="json").status_code == 201
    assert usage_rows() == [(f"user:{user.id}", "caption", 3, 6)]
    assert AiUsage.objects.get().user_id == user.id


def test_usage_is_kept_per_workspace(client_for, workspace, other_workspace):
    client_for("admin").post(GENERATE, {"prompt": "a"}, format="json")
    client_for("admin", other_workspace).post(GENERATE, {"prompt": "a"}, format="json")
    assert sorted(AiUsage.objects.values_list("workspace_id", "units")) == sorted(
        [(workspace.id, 2), (other_workspace.id, 2)]
    )


@pytest.mark.parametrize(
    ("path", "body"), [(GENERATE, {"prompt": "p"}), (REFINE, {"prompt": "p", "originalText": "t"})]
)
def test_over_the_monthly_units_is_402_and_charges_nothing(api, settings, path, body):
    settings.AI_MONTHLY_UNITS = 4
    assert api.post(path, body, format="json").status_code == 201
    assert api.post(path, body, format="json").status_code == 201  # exactly at the limit
    response = api.post(path, body, format="json")
    assert response.status_code == 402
    assert response.json() == {
        **QUOTA_BODY,
        "message": "This workspace has used 4 of its 4 AI units this month; this generation needs 2. "
        "The quota renews on the first day of next month (UTC).",
    }
    assert [row[2:] for row in usage_rows()] == [(2, 4)]


def test_images_and_captions_share_the_quota(api, settings):
    settings.AI_MONTHLY_UNITS = 4
    assert api.post(IMAGES, {"prompt": "a"}, format="json").status_code == 201
    assert api.post(GENERATE, {"prompt": "b"}, format="json").status_code == 201
    response = api.post(IMAGES, {"prompt": "c"}, format="json")
    assert response.status_code == 402 and response.json()["code"] == "ai_quota_exhausted"
    assert AiImageJob.objects.count() == 1
    assert api.post(GENERATE, {"prompt": "d"}, format="json").status_code == 402


def test_the_quota_counts_this_month_of_this_workspace_only(api, settings, workspace, other_workspace):
    settings.AI_MONTHLY_UNITS = 2
    last_month = month_of(timezone.now()).replace(day=1) - dt.timedelta(days=1)
    AiUsage.objects.create(
        workspace=workspace, month=last_month.replace(day=1), kind="caption", member="key:x", units=50
    )
    AiUsage.objects.create(
        workspace=other_workspace, month=month_of(timezone.now()), kind="caption", member="key:y", units=50
    )
    assert api.post(GENERATE, {"prompt": "p"}, format="json").status_code == 201
    assert api.post(GENERATE, {"prompt": "p"}, format="json").status_code == 402


def test_no_quota_means_unlimited(api, settings):
    settings.AI_MONTHLY_UNITS = None
    AiUsage.objects.create(
        workspace=WorkspaceFactory(), month=month_of(timezone.now()), kind="caption", member="key:x", units=10**6
    )
    for _ in range(3):
        assert api.post(GENERATE, {"prompt": "p"}, format="json").status_code == 201


def test_a_failed_caption_is_refunded_so_the_quota_is_untouched(api, settings, fake_chat_api):
    settings.AI_MONTHLY_UNITS = 2
    settings.AI_CAPTION_PROVIDER = "openai"
    settings.AI_CAPTION_API_URL = fake_chat_api.url
    settings.AI_CAPTION_RETRY_BACKOFF_SECONDS = 0.0
    fake_chat_api.reply(500, {"error": "down"})
    assert api.post(GENERATE, {"prompt": "p"}, format="json").status_code == 502
    assert api.post(GENERATE, {"prompt": "p"}, format="json", headers={"Idempotency-Key": "k1"}).status_code == 502
    assert [row[2:] for row in usage_rows()] == [(0, 0)]
    settings.AI_CAPTION_PROVIDER = "offline"
    assert api.post(GENERATE, {"prompt": "p"}, format="json").status_code == 201
    assert [row[2:] for row in usage_rows()] == [(1, 2)]


@pytest.fixture
def failing_images(settings, fake_images_api):
    settings.AI_IMAGE_PROVIDER = "openai"
    settings.AI_IMAGE_API_URL = fake_images_api.url
    fake_images_api.status = 400
    fake_images_api.body = {"error": {"message": "rejected by the safety system"}}
    return fake_images_api


def test_a_failed_image_job_is_refunded_once(api, settings, failing_images):
    settings.AI_MONTHLY_UNITS = 2
    job_id = api.post(IMAGES, {"prompt": "p"}, format="json").json()["jobId"]
    assert [row[1:] for row in usage_rows()] == [("image", 1, 2)]
    assert api.post(IMAGES, {"prompt": "p"}, format="json").status_code == 402

    assert generate_image(job_id) == "failed"
    assert generate_image(job_id) == "failed"

    assert [row[1:] for row in usage_rows()] == [("image", 0, 0)]
    assert api.post(IMAGES, {"prompt": "p"}, format="json").status_code == 201


def test_a_completed_image_stays_charged(api):
    job_id = api.post(IMAGES, {"prompt": "p"}, format="json").json()["jobId"]
    assert generate_image(job_id) == "completed"
    assert generate_image(job_id) == "completed"
    assert [row[1:] for row in usage_rows()] == [("image", 1, 2)]


def test_admin_lists_usage_read_only(admin_client, client_for, workspace):
    client_for("admin").post(GENERATE, {"prompt": "p"}, format="json")
    row = AiUsage.objects.get()
    page = admin_client.get("/admin/media/aiusage/")
    assert page.status_code == 200
    content = page.content.decode()
    assert row.member in content and workspace.name in content
    assert admin_client.get("/admin/media/aiusage/add/").status_code == 403
    assert admin_client.post(f"/admin/media/aiusage/{row.pk}/change/", {"units": "0"}).status_code == 403
    row.refresh_from_db()
    assert row.units == 2


@pytest.mark.django_db(transaction=True)
def test_concurrent_charges_never_pass_the_quota(settings):
    settings.AI_MONTHLY_UNITS = 4  # room for two captions
    workspace = WorkspaceFactory()
    members = [UsageMember(member=f"key:k{i}") for i in range(4)]
    start = threading.Barrier(len(members))
    outcomes: list[str] = []

    def charge(member: UsageMember) -> None:
        try:
            start.wait()
            usage_charge(workspace_id=workspace.id, member=member, kind="caption")
            outcomes.append("charged")
        except AiQuotaExhausted:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=charge, args=(m,)) for m in members]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["charged", "charged", "refused", "refused"]
    assert sum(AiUsage.objects.values_list("units", flat=True)) == 4
