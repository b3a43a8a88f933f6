"""The lifecycle sweep: referenced files are never collected, released and stale ones are."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import time_machine
from django.utils import timezone

from media.lifecycle import collect_garbage
from media.models import MediaFile, MediaSource, MediaVariant, VariantStatus
from media.tasks import collect_garbage as collect_garbage_task
from posts.models import Post, RecurringPost
from tests.factories.media import MediaFileFactory

pytestmark = pytest.mark.django_db

DAY = dt.timedelta(days=1)


def stored(workspace, local_media: Path, **kwargs) -> MediaFile:
    row = MediaFileFactory(workspace=workspace, uploaded=True, **kwargs)
    path = local_media / row.key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"bytes")
    (local_media / f"{row.key}.preview.webp").write_bytes(b"preview")
    MediaFile.objects.filter(id=row.id).update(preview_key=f"{row.key}.preview.webp", preview_status="ready")
    return row


def post(workspace, status: str, urls: list[str], *, finished_ago: dt.timedelta | None = None, **kwargs) -> Post:
    now = timezone.now()
    return Post.objects.create(
        workspace=workspace,
        status=status,
        content_type="IMAGE",
        media_urls=urls,
        scheduled_at=now + DAY if status == "SCHEDULED" else None,
        finished_at=now - finished_ago if finished_ago is not None else None,
        **kwargs,
    )


def series(workspace, status: str, template: dict) -> RecurringPost:
    return RecurringPost.objects.create(
        workspace=workspace,
        status=status,
        frequency="DAILY",
        starts_at=timezone.now(),
        timezone="UTC",
        template=template,
    )


def exists(row: MediaFile, local_media: Path) -> bool:
    in_db = MediaFile.objects.filter(id=row.id).exists()
    on_disk = (local_media / row.key).exists()
    assert in_db == on_disk == (local_media / f"{row.key}.preview.webp").exists()
    return in_db


def sweep_twice(now: dt.datetime) -> tuple[int, int]:
    return collect_garbage(now=now).deleted, collect_garbage(now=now).deleted


@pytest.mark.parametrize("status", ["DRAFT", "SCHEDULED", "PENDING", "PUBLISHING"])
def test_a_file_of_an_unfinished_post_is_never_deleted(workspace, local_media, status):
    row = stored(workspace, local_media, first_referenced_at=timezone.now())
    post(workspace, status, ["https://other.example/x.png", row.public_url])
    assert sweep_twice(timezone.now() + 400 * DAY) == (0, 0)
    assert exists(row, local_media)


def test_a_file_goes_once_its_last_post_has_published(workspace, local_media):
    row = stored(workspace, local_media, first_referenced_at=timezone.now())
    published = post(workspace, "COMPLETED", [row.public_url], finished_ago=dt.timedelta(minutes=1))
    draft = post(workspace, "DRAFT", [row.public_url])
    assert sweep_twice(timezone.now()) == (0, 0)
    assert exists(row, local_media)

    Post.objects.filter(id=draft.id).update(status="COMPLETED", finished_at=timezone.now())

    assert sweep_twice(timezone.now()) == (1, 0)
    assert not exists(row, local_media)
    assert Post.objects.get(id=published.id).media_urls == [row.public_url]


@pytest.mark.parametrize("status", ["FAILED", "PARTIAL_FAILURE"])
def test_a_failed_post_keeps_its_files_7_days_for_a_retry(workspace, local_media, status):
    recent = stored(workspace, local_media, first_referenced_at=timezone.now())
    old = stored(workspace, local_media, first_referenced_at=timezone.now())
    post(workspace, status, [recent.public_url], finished_ago=6 * DAY)
    post(workspace, status, [old.public_url], finished_ago=8 * DAY)
    assert sweep_twice(timezone.now()) == (1, 0)
    assert exists(recent, local_media)
    assert not exists(old, local_media)


def test_an_unreferenced_file_goes_7_days_after_upload(workspace, local_media):
    row = stored(workspace, local_media)
    assert sweep_twice(timezone.now() + 6 * DAY) == (0, 0)
    assert exists(row, local_media)
    assert sweep_twice(timezone.now() + 7 * DAY + dt.timedelta(minutes=1)) == (1, 0)
    assert not exists(row, local_media)


def test_a_file_whose_draft_was_deleted_waits_out_its_7_days(workspace, local_media):
    row = stored(workspace, local_media, first_referenced_at=timezone.now())
    assert sweep_twice(timezone.now() + DAY) == (0, 0)
    assert exists(row, local_media)
    assert sweep_twice(timezone.now() + 8 * DAY) == (1, 0)


@pytest.mark.parametrize(("status", "kept"), [("ACTIVE", True), ("PAUSED", True), ("ENDED", False)])
def test_a_live_recurring_series_keeps_its_files(workspace, local_media, status, kept):
    row = stored(workspace, local_media, first_referenced_at=timezone.now())
    thumb = stored(workspace, local_media, first_referenced_at=timezone.now())
    series(workspace, status, {"text": "hi", "mediaUrls": [row.public_url], "thumbnailUrl": thumb.public_url})
    post(workspace, "COMPLETED", [row.public_url], finished_ago=DAY)  # an occurrence already published
    collect_garbage(now=timezone.now() + 30 * DAY)
    assert exists(row, local_media) is kept
    assert exists(thumb, local_media) is kept


def test_a_post_thumbnail_counts_as_a_reference(workspace, local_media):
    row = stored(workspace, local_media, first_referenced_at=timezone.now())
    post(workspace, "SCHEDULED", [], thumbnail_url=row.public_url)
    collect_garbage(now=timezone.now() + 30 * DAY)
    assert exists(row, local_media)


def test_a_thread_items_media_counts_as_a_reference_until_the_post_finishes(workspace, local_media):
    row = stored(workspace, local_media, first_referenced_at=timezone.now())
    other = stored(workspace, local_media, first_referenced_at=timezone.now())
    thread = [{"text": "2/", "mediaUrls": []}, {"text": "3/", "mediaUrls": ["https://x.example/a.png", row.public_url]}]
    pending = post(workspace, "PENDING", [], thread=thread)
    assert sweep_twice(timezone.now() + 30 * DAY) == (1, 0)  # the file no thread names goes
    assert exists(row, local_media) and not exists(other, local_media)

    Post.objects.filter(id=pending.id).update(status="COMPLETED", finished_at=timezone.now())
    assert sweep_twice(timezone.now()) == (1, 0)
    assert not exists(row, local_media)


def test_a_post_of_another_workspace_does_not_keep_a_file(workspace, other_workspace, local_media):
    row = stored(workspace, local_media)
    post(other_workspace, "DRAFT", [row.public_url])
    assert sweep_twice(timezone.now() + 8 * DAY) == (1, 0)


def test_keep_until_protects_generated_images(workspace, local_media):
    row = stored(workspace, local_media, keep_until=timezone.now() + 7 * DAY, first_referenced_at=timezone.now())
    post(workspace, "COMPLETED", [row.public_url], finished_ago=dt.timedelta(hours=1))
    assert sweep_twice(timezone.now() + 6 * DAY) == (0, 0)
    assert sweep_twice(timezone.now() + 7 * DAY + dt.timedelta(seconds=1)) == (1, 0)


def test_many_files_are_swept_in_batches(workspace, local_media, monkeypatch):
    monkeypatch.setattr("media.lifecycle.BATCH_SIZE", 3)
    rows = [stored(workspace, local_media) for _ in range(7)]
    keep = rows[4]
    post(workspace, "DRAFT", [keep.public_url])
    assert sweep_twice(timezone.now() + 8 * DAY) == (6, 0)
    assert [exists(r, local_media) for r in rows] == [r is keep for r in rows]


def test_the_beat_task_runs_twice_and_changes_the_world_once(workspace, local_media):
    stale = stored(workspace, local_media)
    with time_machine.travel(timezone.now() + 8 * DAY):
        fresh = stored(workspace, local_media)
        fresh_unpreviewed = MediaFileFactory(workspace=workspace, uploaded=True)
        assert collect_garbage_task() == 1
        assert collect_garbage_task() == 0
    assert not exists(stale, local_media)
    assert exists(fresh, local_media)
    assert MediaFile.objects.get(id=fresh_unpreviewed.id).preview_status == "queued"


# --- fitted variants (mediaFit auto): kept with their original, collected with it ------------


def fitted(workspace, local_media: Path, original: MediaFile, **kwargs) -> MediaFile:
    """A ready variant of ``original`` (made when it was), its output stored as the fit stores one."""
    output = stored(workspace, local_media, source=MediaSource.FIT, **kwargs)
    MediaVariant.objects.create(
        workspace=workspace,
        original=original,
        platform="INSTAGRAM",
        post_type="REEL",
        status=VariantStatus.READY,
        output=output,
    )
    return output


def test_a_variant_lives_as_long_as_its_referenced_original(workspace, local_media):
    original = stored(workspace, local_media, first_referenced_at=timezone.now())
    variant = fitted(workspace, local_media, original)
    scheduled = post(workspace, "SCHEDULED", [original.public_url])
    assert sweep_twice(timezone.now() + 400 * DAY) == (0, 0)  # was: the variant went after 7 days
    assert exists(original, local_media) and exists(variant, local_media)

    Post.objects.filter(id=scheduled.id).update(status="COMPLETED", finished_at=timezone.now())
    assert sweep_twice(timezone.now() + DAY) == (2, 0)  # collected with it, in the same sweep
    assert not exists(original, local_media) and not exists(variant, local_media)
    assert not MediaVariant.objects.exists()


def test_a_variant_of_an_unreferenced_upload_goes_with_it_after_7_days(workspace, local_media):
    original = stored(workspace, local_media)
    variant = fitted(workspace, local_media, original)
    assert sweep_twice(timezone.now() + 6 * DAY) == (0, 0)
    assert sweep_twice(timezone.now() + 7 * DAY + dt.timedelta(minutes=1)) == (2, 0)
    assert not exists(variant, local_media)


@pytest.mark.parametrize("output_first", [True, False])
def test_a_variant_goes_in_the_sweep_its_original_goes_whichever_batch_it_sorts_into(
    workspace, local_media, monkeypatch, output_first
):
    monkeypatch.setattr("media.lifecycle.BATCH_SIZE", 1)
    ids = ("med_a", "med_b") if output_first else ("med_b", "med_a")
    original = stored(workspace, local_media, id=ids[1])
    variant = fitted(workspace, local_media, original, id=ids[0])
    assert sweep_twice(timezone.now() + 8 * DAY) == (2, 0)
    assert not exists(original, local_media) and not exists(variant, local_media)


def test_a_post_that_names_the_variant_keeps_it_after_its_original_goes(workspace, local_media):
    original = stored(workspace, local_media)
    variant = fitted(workspace, local_media, original, first_referenced_at=timezone.now())
    draft = post(workspace, "DRAFT", [variant.public_url])
    assert sweep_twice(timezone.now() + 8 * DAY) == (1, 0)
    assert not exists(original, local_media) and exists(variant, local_media)

    Post.objects.filter(id=draft.id).update(status="COMPLETED", finished_at=timezone.now())
    assert sweep_twice(timezone.now() + 8 * DAY) == (1, 0)
    assert not exists(variant, local_media)


def test_a_series_that_names_the_original_keeps_its_variant(workspace, local_media):
    original = stored(workspace, local_media, first_referenced_at=timezone.now())
    variant = fitted(workspace, local_media, original)
    series(workspace, "ACTIVE", {"text": "hi", "mediaUrls": [original.public_url]})
    assert sweep_twice(timezone.now() + 30 * DAY) == (0, 0)
    assert exists(variant, local_media)
