"""mediaFit auto (issue 34 item 4) on the post side: create accepts a file a fit repairs (and
still refuses a duration), queues one variant per platform and post type, the entry lists its
``mediaVariants``, and the publisher sends the variant, waits for one being made, and fails an
entry whose fit failed with ``media_fit_failed``. Thread items' media is fitted per platform under
each item's post type, and every occurrence of a recurring series fits as its first post did."""

from __future__ import annotations

import datetime as dt
import io
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from media.models import MediaVariant, VariantStatus
from media.storage import get_media_storage
from media.tasks import fit_media, probe_media
from posts.models import Post, PostTarget, RecurringPost
from posts.pipeline import publisher
from posts.recurrence.occurrences import create_occurrence
from tests.factories.accounts import SocialAccountFactory
from tests.factories.media import MediaFileFactory
from tests.media import corpus
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def local_media(settings: Any, tmp_path: Any) -> None:
    settings.STORAGE = "local"
    settings.MEDIA_ROOT = str(tmp_path / "media")


def probed(workspace: Workspace, data: bytes, *, mime_type: str = "image/jpeg", file_name: str = "tall.jpg") -> str:
    row = MediaFileFactory(
        workspace=workspace, uploaded=True, kind="image", mime_type=mime_type, file_name=file_name, size=len(data)
    )
    get_media_storage().save(row.key, io.BytesIO(data), content_type=mime_type)
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


# --- thread items ------------------------------------------------------------------------


def thread_body(workspace: Workspace, url: str, **extra: Any) -> dict[str, Any]:
    x = SocialAccountFactory(workspace=workspace, platform="TWITTER")
    sky = SocialAccountFactory(workspace=workspace, platform="BLUESKY")
    return {
        "contentType": "TEXT",
        "text": "1/",
        "thread": [{"text": "2/ a photo", "mediaUrls": [url]}, {"text": "3/"}],
        "timezone": "UTC",
        "platforms": ["TWITTER", "BLUESKY"],
        "twitterConnectionIds": [x.id],
        "blueskyConnectionIds": [sky.id],
        "scheduledAt": "2099-01-01T00:00:00Z",
        **extra,
    }


def test_a_thread_items_media_is_fitted_for_each_platform_and_sent_fitted(api: APIClient, workspace: Workspace) -> None:
    heic = probed(workspace, corpus.image((400, 300), "HEIF"), mime_type="image/heic", file_name="phone.heic")
    refused = api.post("/api/v1/social-posts", thread_body(workspace, heic), format="json")
    assert refused.status_code == 400 and refused.json()["code"] == "media_format"  # X takes no HEIC
    assert "thread[0].mediaUrls: TWITTER" in refused.json()["message"][0]
    created = api.post("/api/v1/social-posts", thread_body(workspace, heic, mediaFit="auto"), format="json")
    assert created.status_code == 201, created.json()
    variants = {v.platform: v for v in MediaVariant.objects.filter(original__public_url=heic)}
    assert {(p, v.post_type, v.status) for p, v in variants.items()} == {
        ("TWITTER", "FEED", VariantStatus.QUEUED),
        ("BLUESKY", "FEED", VariantStatus.QUEUED),
    }
    post_id = created.json()["postId"]
    x = PostTarget.objects.select_related("post").get(post_id=post_id, platform="TWITTER")
    with pytest.raises(publisher._FitNotReady):
        publisher._thread_parts(x)  # never the original instead
    assert fit_media(variants["TWITTER"].id) == VariantStatus.READY
    assert fit_media(variants["BLUESKY"].id) == VariantStatus.UNCHANGED  # Bluesky takes any image/*
    variants["TWITTER"].refresh_from_db()
    fitted = variants["TWITTER"].output
    assert fitted is not None and fitted.mime_type == "image/jpeg"
    [item, text_only] = publisher._thread_parts(x)
    assert [m.url for m in item.media] == [fitted.public_url] and text_only.media == ()
    sky = PostTarget.objects.select_related("post").get(post_id=post_id, platform="BLUESKY")
    assert [m.url for m in publisher._thread_parts(sky)[0].media] == [heic]
    entries = {e["platform"]: e for e in api.get(f"/api/v1/social-posts/{post_id}").json()["platforms"]}
    assert [
        (v["originalUrl"], v["url"], v["status"], v["rulesFixed"]) for v in entries["TWITTER"]["mediaVariants"]
    ] == [(heic, fitted.public_url, "ready", ["media_format"])]
    assert [(v["url"], v["status"]) for v in entries["BLUESKY"]["mediaVariants"]] == [(None, "unchanged")]


def test_a_thread_item_without_media_fit_is_sent_as_it_is(api: APIClient, workspace: Workspace) -> None:
    url = probed(workspace, corpus.image((400, 300)))
    created = api.post("/api/v1/social-posts", thread_body(workspace, url), format="json")
    assert created.status_code == 201, created.json()
    assert not MediaVariant.objects.exists()
    x = PostTarget.objects.select_related("post").get(post_id=created.json()["postId"], platform="TWITTER")
    assert [m.url for m in publisher._thread_parts(x)[0].media] == [url]
    assert "mediaVariants" not in api.get(f"/api/v1/social-posts/{x.post_id}").json()["platforms"][0]


# --- recurring series --------------------------------------------------------------------


def test_every_occurrence_of_a_series_fits_as_its_first_post_did(api: APIClient, workspace: Workspace) -> None:
    url = probed(workspace, corpus.image((400, 600)))
    created = api.post(
        "/api/v1/social-posts", body(workspace, url, mediaFit="auto", recurrence={"frequency": "DAILY"}), format="json"
    )
    assert created.status_code == 201, created.json()
    series = RecurringPost.objects.get(id=created.json()["recurringPostId"])
    assert [t.get("mediaFit") for t in series.template["targets"]] == ["auto"]
    first = MediaVariant.objects.get(original__public_url=url)
    assert fit_media(first.id) == VariantStatus.READY
    first.refresh_from_db()

    second = create_occurrence(
        series, Post.objects.get(id=created.json()["postId"]).scheduled_at + dt.timedelta(days=1)
    )
    assert second is not None
    [target] = second.targets.select_related("post")
    assert target.media_fit
    assert list(MediaVariant.objects.values_list("id", flat=True)) == [first.id]  # shared, not made again
    item = publisher.MediaItem(url=url, kind="image", mime_type="image/jpeg", size=1)
    [sent] = publisher._fitted(target, (item,))
    assert first.output is not None and sent.url == first.output.public_url
    [entry] = api.get(f"/api/v1/social-posts/{second.id}").json()["platforms"]
    assert entry["mediaFit"] == "auto" and entry["mediaVariants"][0]["url"] == first.output.public_url

    MediaVariant.objects.all().delete()  # a variant that is not there any more is asked for again
    third = create_occurrence(series, second.scheduled_at + dt.timedelta(days=1))
    assert third is not None
    again = MediaVariant.objects.get(original__public_url=url)
    assert (again.platform, again.post_type, again.status) == ("INSTAGRAM", "FEED", VariantStatus.QUEUED)


def test_a_series_without_media_fit_keeps_its_template_as_it_was(api: APIClient, workspace: Workspace) -> None:
    url = probed(workspace, corpus.image((400, 500)))  # 4:5: Instagram takes it as it is
    created = api.post("/api/v1/social-posts", body(workspace, url, recurrence={"frequency": "DAILY"}), format="json")
    assert created.status_code == 201, created.json()
    series = RecurringPost.objects.get(id=created.json()["recurringPostId"])
    assert all("mediaFit" not in t for t in series.template["targets"])
    occurrence = create_occurrence(
        series, Post.objects.get(id=created.json()["postId"]).scheduled_at + dt.timedelta(days=1)
    )
    assert occurrence is not None and not occurrence.targets.get().media_fit
    assert not MediaVariant.objects.exists()


def test_get_recurring_posts_shows_each_platform_s_media_fit(api: APIClient, workspace: Workspace) -> None:
    fitted = api.post(
        "/api/v1/social-posts",
        body(
            workspace, probed(workspace, corpus.image((400, 600))), mediaFit="auto", recurrence={"frequency": "DAILY"}
        ),
        format="json",
    )
    plain = api.post(
        "/api/v1/social-posts",
        body(workspace, probed(workspace, corpus.image((400, 500))), recurrence={"frequency": "DAILY"}),
        format="json",
    )
    assert fitted.status_code == plain.status_code == 201
    fitted_id, plain_id = fitted.json()["recurringPostId"], plain.json()["recurringPostId"]
    [entry] = api.get(f"/api/v1/recurring-posts/{fitted_id}").json()["platforms"]
    assert entry["platform"] == "INSTAGRAM" and entry["mediaFit"] == "auto"
    assert "mediaFit" not in api.get(f"/api/v1/recurring-posts/{plain_id}").json()["platforms"][0]
    listed = {series["id"]: series for series in api.get("/api/v1/recurring-posts").json()["recurringPosts"]}
    assert listed[fitted_id]["platforms"][0]["mediaFit"] == "auto"
    assert "mediaFit" not in listed[plain_id]["platforms"][0]


def test_the_backfill_gives_a_series_started_before_templates_kept_media_fit_its_first_post_s(
    api: APIClient, workspace: Workspace
) -> None:
    url = probed(workspace, corpus.image((400, 600)))
    created = api.post(
        "/api/v1/social-posts", body(workspace, url, mediaFit="auto", recurrence={"frequency": "DAILY"}), format="json"
    )
    plain = api.post(
        "/api/v1/social-posts",
        body(workspace, probed(workspace, corpus.image((400, 500))), recurrence={"frequency": "DAILY"}),
        format="json",
    )
    assert created.status_code == plain.status_code == 201
    series = RecurringPost.objects.get(id=created.json()["recurringPostId"])
    untouched = RecurringPost.objects.get(id=plain.json()["recurringPostId"])
    # as a series started before 526bda4 was stored: its first post fits, its template does not say so
    series.template = {
        **series.template,
        "targets": [{k: v for k, v in t.items() if k != "mediaFit"} for t in series.template["targets"]],
    }
    series.save(update_fields=["template"])
    assert "mediaFit" not in api.get(f"/api/v1/recurring-posts/{series.id}").json()["platforms"][0]
    plain_template = untouched.template

    for expected in ("1 recurring series given their mediaFit", "0 recurring series given their mediaFit"):
        out = io.StringIO()
        call_command("backfill_series_media_fit", stdout=out)  # run twice: the second changes nothing
        assert out.getvalue().strip() == expected
        series.refresh_from_db()
        untouched.refresh_from_db()
        assert [t.get("mediaFit") for t in series.template["targets"]] == ["auto"]
        assert untouched.template == plain_template
    assert api.get(f"/api/v1/recurring-posts/{series.id}").json()["platforms"][0]["mediaFit"] == "auto"
    occurrence = create_occurrence(
        series, Post.objects.get(id=created.json()["postId"]).scheduled_at + dt.timedelta(days=1)
    )
    assert occurrence is not None and occurrence.targets.get().media_fit
