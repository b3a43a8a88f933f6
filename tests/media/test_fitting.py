"""Fitting (issue 34 item 4): plans from the rules, variants made by ``media.fit`` in its child
process from tiny generated files, checked against ``platforms.media_rules`` and against the
simulators' own checks; the ``media.fit`` task run twice."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from media.fitting import FitPlan, Unfittable, fit_file, fit_plan, fittable
from media.models import MediaFile, MediaSource, MediaVariant, VariantStatus
from media.probing import probe_file
from media.storage import get_media_storage
from media.tasks import fit_media
from platforms.base import Platform
from platforms.capabilities import CAPABILITIES
from platforms.media_rules import (
    MEDIA_ASPECT_RATIO,
    MEDIA_CODEC,
    MEDIA_FORMAT,
    MEDIA_RESOLUTION,
    PostType,
    check_file,
    post_type_of,
    rules_for,
)
from platforms.sandbox.media_checks import refusal
from tests.factories.media import MediaFileFactory
from tests.media import corpus
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def _fit(
    tmp_path: Path, name: str, data: bytes, kind: str, platform: Platform, post_type: PostType
) -> tuple[FitPlan, dict[str, Any], bytes]:
    source = tmp_path / name
    source.write_bytes(data)
    facts = probe_file(kind=kind, path=str(source))
    plan = fit_plan(platform, post_type, kind, size=len(data), facts=facts)
    assert plan is not None
    output = tmp_path / f"fitted-{name}"
    fit_file(plan, source_path=str(source), output_path=str(output))
    fitted = output.read_bytes()
    fitted_facts = probe_file(kind=kind, path=str(output))
    assert check_file(rules_for(platform, post_type), kind, size=len(fitted), facts=fitted_facts) == []
    assert refusal(platform, post_type, fitted) is None  # the simulator takes it too
    return plan, fitted_facts, fitted


def test_a_4_5_image_is_padded_to_the_nearest_ratio_instagram_takes(tmp_path: Path) -> None:
    data = corpus.image((400, 600), "JPEG")  # 2:3, taller than Instagram's 4:5
    assert refusal(Platform.INSTAGRAM, PostType.FEED, data) is not None
    plan, facts, _ = _fit(tmp_path, "tall.jpg", data, "image", Platform.INSTAGRAM, PostType.FEED)
    assert plan.rules_fixed == (MEDIA_ASPECT_RATIO,)
    assert (facts["width"], facts["height"]) == (480, 600)  # 4:5, the picture centred on black bars


def test_a_wide_image_is_padded_to_1_91_and_a_heic_becomes_a_jpeg(tmp_path: Path) -> None:
    plan, facts, _ = _fit(
        tmp_path, "wide.heic", corpus.image((500, 100), "HEIF"), "image", Platform.INSTAGRAM, PostType.FEED
    )
    assert set(plan.rules_fixed) == {MEDIA_FORMAT, MEDIA_ASPECT_RATIO}
    assert facts["format"] == "JPEG" and facts["width"] == 500 and abs(facts["width"] / facts["height"] - 1.91) < 0.02


def test_a_4_5_video_is_padded_to_9_16_for_reels_shorts_and_tiktok(tmp_path: Path) -> None:
    data = corpus.video(tmp_path / "src.mp4", size=(432, 540), fps=25, frames=80, audio=True)
    for platform, post_type in (
        (Platform.INSTAGRAM, PostType.REEL),
        (Platform.YOUTUBE, PostType.SHORT),
        (Platform.TIKTOK, PostType.FEED),
    ):
        plan, facts, _ = _fit(tmp_path, f"{platform.value}.mp4", data, "video", platform, post_type)
        assert MEDIA_ASPECT_RATIO in plan.rules_fixed
        assert (facts["displayWidth"], facts["displayHeight"]) == (432, 768)
        assert facts["videoCodec"] == "h264" and facts["audioCodec"] == "aac"


def test_a_4_5_video_is_scaled_within_x_s_largest_size(tmp_path: Path) -> None:
    data = corpus.video(tmp_path / "big.mp4", size=(1080, 1350), fps=25, frames=15)
    plan, facts, _ = _fit(tmp_path, "x.mp4", data, "video", Platform.TWITTER, PostType.FEED)
    assert plan.rules_fixed == (MEDIA_RESOLUTION,)
    assert facts["width"] <= 1024 and facts["height"] <= 1280


def test_a_video_in_a_codec_the_platform_refuses_is_re_encoded_to_h264(tmp_path: Path) -> None:
    data = corpus.video(tmp_path / "mpeg4.mp4", codec="mpeg4", size=(320, 400), fps=25, frames=80)
    assert "(media_codec)" in (refusal(Platform.THREADS, PostType.FEED, data) or "")
    plan, facts, _ = _fit(tmp_path, "threads.mp4", data, "video", Platform.THREADS, PostType.FEED)
    assert plan.rules_fixed == (MEDIA_CODEC,)
    assert facts["videoCodec"] == "h264" and (facts["width"], facts["height"]) == (320, 400)


def test_a_file_that_fits_needs_no_variant_and_a_duration_is_never_fitted(tmp_path: Path) -> None:
    fitting = {"type": "image", "format": "JPEG", "width": 1080, "height": 1080, "animated": False}
    assert fit_plan(Platform.INSTAGRAM, PostType.FEED, "image", size=1000, facts=fitting) is None
    too_short = {
        "type": "video",
        "container": "mp4",
        "videoCodec": "h264",
        "durationSeconds": 1.0,
        "frameRate": 30,
        "width": 1080,
        "height": 1920,
    }
    with pytest.raises(Unfittable, match="media_duration"):
        fit_plan(Platform.INSTAGRAM, PostType.REEL, "video", size=1000, facts=too_short)


def _stored_original(workspace: Any, data: bytes, *, file_name: str, mime_type: str, kind: str) -> MediaFile:
    row = MediaFileFactory(workspace=workspace, file_name=file_name, mime_type=mime_type, kind=kind, uploaded=True)
    get_media_storage().save(row.key, io.BytesIO(data), content_type=mime_type)
    return row


def test_the_fit_task_stores_a_variant_beside_the_original_once_when_run_twice(workspace: Any) -> None:
    data = corpus.image((400, 600), "PNG")
    original = _stored_original(workspace, data, file_name="tall.png", mime_type="image/png", kind="image")
    variant = MediaVariant.objects.create(
        workspace=workspace, original=original, platform="INSTAGRAM", post_type="FEED"
    )
    assert fit_media(variant.id) == VariantStatus.READY
    assert fit_media(variant.id) == VariantStatus.READY  # run twice: nothing more is made
    variant.refresh_from_db()
    assert variant.output is not None and variant.output.source == MediaSource.FIT
    assert set(variant.rules_fixed) == {MEDIA_FORMAT, MEDIA_ASPECT_RATIO}
    assert MediaFile.objects.filter(source=MediaSource.FIT).count() == 1
    with get_media_storage().open(original.key) as stored:
        assert stored.read() == data  # the original is never changed
    with get_media_storage().open(variant.output.key) as stored:
        assert refusal(Platform.INSTAGRAM, PostType.FEED, stored.read()) is None
    assert list(Event.objects.filter(workspace=workspace).values_list("name", flat=True)) == ["media.processed"]


def test_an_unfittable_file_fails_its_variant_with_an_event(workspace: Any, tmp_path: Path) -> None:
    data = corpus.video(tmp_path / "short.mp4", size=(360, 640), fps=25, frames=10)
    original = _stored_original(workspace, data, file_name="short.mp4", mime_type="video/mp4", kind="video")
    variant = MediaVariant.objects.create(
        workspace=workspace, original=original, platform="INSTAGRAM", post_type="REEL"
    )
    assert fit_media(variant.id) == VariantStatus.FAILED
    assert fit_media(variant.id) == VariantStatus.FAILED
    variant.refresh_from_db()
    assert "media_duration" in variant.error and variant.output is None
    assert list(Event.objects.filter(workspace=workspace).values_list("name", flat=True)) == ["media.failed"]


@pytest.mark.parametrize(
    ("platform", "post_type"),
    [(Platform.INSTAGRAM, PostType.REEL), (Platform.YOUTUBE, PostType.SHORT), (Platform.TIKTOK, PostType.FEED)],
)
def test_a_landscape_1080p_video_is_reframed_in_the_recommended_1080_by_1920_frame(
    platform: Platform, post_type: PostType
) -> None:
    """Padded at its own width it would be 1920 x 3412 (four times the pixels: the 1-minute fit
    took 135 s of CPU); the picture is scaled into the platform's 1080 x 1920 frame instead."""
    landscape = {
        "type": "video",
        "container": "mp4",
        "videoCodec": "h264",
        "audioCodec": "aac",
        "durationSeconds": 60.0,
        "frameRate": 30,
        "width": 1920,
        "height": 1080,
    }
    plan = fit_plan(platform, post_type, "video", size=50_000_000, facts=landscape)
    assert plan is not None
    assert (plan.width, plan.height) == (1080, 1920)
    assert (plan.content_width, plan.content_height) == (1080, 606)  # 607.5, to even pixels


def test_every_platform_gets_each_corpus_file_as_it_accepts_it_or_a_clear_refusal(tmp_path: Path) -> None:
    """Issue 34's "Done when": the generated corpus through probe, check and fit for every
    platform that takes its kind (under the post type a post of that kind publishes as): each
    (file, platform) is accepted as it is, or fitted into a file the rules and the simulator both
    accept, or refused with the rules a fit does not repair (a duration, a file under the
    platform's smallest size) named; a truncated and a
    hostile file are refused by the probe with their reason."""
    outcomes: dict[str, set[tuple[str, ...]]] = {
        "as it is": set(),
        "fitted": set(),
        "refused": set(),
        "fit fails": set(),
    }
    for name, kind, _, data in corpus.generated(tmp_path):
        source = tmp_path / name
        source.write_bytes(data)
        facts = probe_file(kind=kind, path=str(source))
        for platform, caps in CAPABILITIES.items():
            if not (caps.max_images if kind == "image" else caps.max_videos):
                continue
            post_type = post_type_of(platform, content_type=kind.upper(), options={}, kinds=[kind])
            rules = rules_for(platform, post_type)
            violations = check_file(rules, kind, size=len(data), facts=facts)
            broken = {b.code for b in violations}
            if not all(fittable(b) for b in violations):
                with pytest.raises(Unfittable, match="media_duration|media_file_size: takes .* of at least"):
                    fit_plan(platform, post_type, kind, size=len(data), facts=facts)
                outcomes["refused"].add((name, platform.value))
                continue
            plan = fit_plan(platform, post_type, kind, size=len(data), facts=facts)
            if plan is None:
                assert not broken and refusal(platform, post_type, data) is None, (name, platform)
                outcomes["as it is"].add((name, platform.value))
                continue
            assert set(plan.rules_fixed) >= broken, (name, platform)
            output = tmp_path / f"fitted-{platform.value}-{post_type.value}-{name}"
            if not output.exists():
                fit_file(plan, source_path=str(source), output_path=str(output))
            fitted = output.read_bytes()
            fitted_facts = probe_file(kind=plan.kind, path=str(output))
            still = check_file(rules, plan.kind, size=len(fitted), facts=fitted_facts)
            if still:  # the fit task fails such a variant (media_fit_failed) rather than send it
                outcomes["fit fails"].add((name, platform.value, *(f"{b.code} {b.requirement}" for b in still)))
                continue
            assert refusal(platform, post_type, fitted) is None, (name, platform)
            outcomes["fitted"].add((name, platform.value))
    assert ("tall916.jpg", "INSTAGRAM") in outcomes["fitted"] and ("phone.heic", "TWITTER") in outcomes["fitted"]
    assert ("mpeg4.mp4", "THREADS") in outcomes["fitted"] and ("reel.mp4", "TIKTOK") in outcomes["fitted"]
    assert ("clip169.mp4", "INSTAGRAM") in outcomes["refused"]  # 1 s: a Reel lasts 3 s at least, never trimmed
    assert ("square.jpg", "INSTAGRAM") in outcomes["as it is"]
    assert ("tiny.png", "GOOGLE_BUSINESS") in outcomes["refused"]  # under 10 KB: a fit never makes a file larger
    assert outcomes["fit fails"] == set(), "\n".join(map(str, sorted(outcomes["fit fails"])))
    whole = corpus.video(tmp_path / "whole.mp4", frames=50)
    (tmp_path / "cut.mp4").write_bytes(whole[: len(whole) // 2])
    (tmp_path / "bomb.png").write_bytes(corpus.decompression_bomb_png())
    with pytest.raises(ValueError, match="truncated|not a readable"):
        probe_file(kind="video", path=str(tmp_path / "cut.mp4"))
    with pytest.raises(ValueError, match="pixels"):
        probe_file(kind="image", path=str(tmp_path / "bomb.png"))
