"""mediaFit auto (issue 34 item 4) on the post side: create accepts a file a fit repairs (and
still refuses a duration), queues one variant per platform and post type, the entry lists its
``mediaVariants``, and the publisher sends the variant, waits for one being made, and fails an
entry whose fit failed with ``media_fit_failed``."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rest_framework.test import APIClient

from media.models import MediaVariant, VariantStatus
from media.storage import get_media_storage
from media.tasks import fit_media, probe_media
from posts.models import PostTarget
from posts.pipeline import publisher
from tests.factories.accounts import SocialAccountFactory
from tests.factories.media import MediaFileFactory
from tests.media import corpus
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def local_media(settings: Any, tmp_path: Any) -> None:
    settings.STORAGE = "local"
    settings.MEDIA_ROOT = str(tmp_path / "media")


def probed(workspace: Workspace, data: bytes) -> str:
    row = MediaFileFactory(
        workspace=workspace, uploaded=True, kind="image", mime_type="image/jpeg", file_name="tall.jpg", size=len(data)
    )
    get_media_storage().save(row.key, io.BytesIO(data), content_type="image/jpeg")
    probe_media(row.id)
    return str(row.public_url)


def body(workspace: Workspace, url: str, **extra: Any) -> dict[str, Any]:
    account = SocialAccountFactory(workspace=workspace, platform="INSTAGRAM")
    return {
        "contentType": "IMAGE",
        "text": "fit me",
        "mediaUrls": [url],
        "timezone": "UTC",
        "platforms": ["INSTAGRAM"],
        "instagramConnectionIds": [account.id],
        "saveAsDraft": False,
        "scheduledAt": "2099-01-01T00:00:00Z",
        **extra,
    }


def test_a_file_a_fit_repairs_is_accepted_with_media_fit_auto_and_its_variant_listed(
    api: APIClient, workspace: Workspace
) -> None:
    url = probed(workspace, corpus.image((400, 600)))  # 2:3: Instagram takes 4:5 to 1.91:1
    refused = api.post("/api/v1/social-posts", body(workspace, url), format="json")
    assert refused.status_code == 400 and refused.json()["code"] == "media_aspect_ratio"
    created = api.post("/api/v1/social-posts", body(workspace, url, mediaFit="auto"), format="json")
    assert created.status_code == 201, created.json()
    variant = MediaVariant.objects.get(original__public_url=url)
    assert (variant.platform, variant.post_type, variant.status) == ("INSTAGRAM", "FEED", VariantStatus.QUEUED)
    assert fit_media(variant.id) == VariantStatus.READY
    entry = api.get(f"/api/v1/social-posts/{created.json()['postId']}").json()["platforms"][0]
    assert entry["mediaFit"] == "auto"
    [listed] = entry["mediaVariants"]
    assert listed["originalUrl"] == url and listed["status"] == "ready" and listed["url"] not in (None, url)
    assert listed["rulesFixed"] == ["media_aspect_ratio"]


def test_platform_media_fit_overrides_the_post_s_setting(api: APIClient, workspace: Workspace) -> None:
    url = probed(workspace, corpus.image((400, 600)))
    off = body(workspace, url, mediaFit="auto", platformMediaFit=[{"platform": "INSTAGRAM", "mediaFit": "off"}])
    assert api.post("/api/v1/social-posts", off, format="json").status_code == 400
    on = body(workspace, url, platformMediaFit=[{"platform": "INSTAGRAM", "mediaFit": "auto"}])
    assert api.post("/api/v1/social-posts", on, format="json").status_code == 201


def test_the_publisher_sends_the_variant_waits_for_one_being_made_and_fails_a_failed_fit(
    api: APIClient, workspace: Workspace
) -> None:
    url = probed(workspace, corpus.image((400, 600)))
    created = api.post("/api/v1/social-posts", body(workspace, url, mediaFit="auto"), format="json")
    target = PostTarget.objects.select_related("post").get(post_id=created.json()["postId"])
    item = publisher.MediaItem(url=url, kind="image", mime_type="image/jpeg", size=1, alt_text="alt")
    with pytest.raises(publisher._FitNotReady):
        publisher._fitted(target, (item,))
    variant = MediaVariant.objects.get(original__public_url=url)
    fit_media(variant.id)
    [sent] = publisher._fitted(target, (item,))
    variant.refresh_from_db()
    assert variant.output is not None
    assert sent.url == variant.output.public_url and sent.mime_type == "image/jpeg" and sent.alt_text == "alt"
    MediaVariant.objects.filter(id=variant.id).update(status=VariantStatus.FAILED, error="broken")
    with pytest.raises(publisher._Unsendable) as failed:
        publisher._fitted(target, (item,))
    assert failed.value.error_code == "media_fit_failed"
