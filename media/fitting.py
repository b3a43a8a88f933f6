"""Fitting media to a platform (issue 34, ``mediaFit: "auto"``): one variant per original x
platform x post type (``MediaVariant``), made by ``media.fit`` in a child process, stored beside
the original as a MediaFile of its own (the original is never changed).

The policy (docs/contract.md, "Fitting media"):

- What a fit repairs: aspect ratio (padded, never cropped: the picture is scaled to fit and
  centred on a **black** canvas of the nearest allowed ratio), resolution (scaled down to the
  largest size the platform takes, or up to its smallest), image format (HEIC, WebP, GIF and any
  other refused format become JPEG, or PNG where the platform takes PNG but not JPEG; an
  animation where none is taken becomes its first frame), file size (an image re-encoded as JPEG;
  a video re-encoded under a bit rate that fits), video container, codecs, frame rate and bit
  rate (re-encoded as H.264 High / AAC in MP4, at the nearest allowed frame rate).
- What it never repairs: a video too long or too short (``media_duration``: trimming would change
  what the post says, so it stays a refusal), a file smaller than the platform's smallest file
  size (``media_file_size`` "of at least": a fit never makes a file larger) and a file the probe
  could not read.
- Vertical video: where the platform recommends 9:16 framing (Instagram Reels and Stories,
  Facebook Reels and Stories, YouTube Shorts, TikTok videos: ``FIT_RATIOS``), a video of another
  ratio is padded to 9:16 even when its own ratio is allowed, in a frame no larger than the
  1080 x 1920 these platforms recommend (``FRAME_WIDTH``): a landscape 1080p video padded at its
  own width would be 1920 x 3412, four times the pixels to encode for no picture gained.
- A fitted file is probed and checked against the rules again before it is kept: a variant that
  still breaks one fails (``media_fit_failed``) rather than being sent."""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from media.children import Limits, run_child
from media.enqueue import FIT_MEDIA, enqueue_each
from media.files import new_key
from media.models import MediaFile, MediaKind, MediaSource, MediaVariant, ProbeStatus, VariantStatus
from media.probing import media_probe, probe_file
from media.storage import get_media_storage
from platforms.base import Platform
from platforms.media_rules import (
    MEDIA_ASPECT_RATIO,
    MEDIA_BITRATE,
    MEDIA_CODEC,
    MEDIA_DURATION,
    MEDIA_FILE_SIZE,
    MEDIA_FORMAT,
    MEDIA_FRAME_RATE,
    MEDIA_RESOLUTION,
    MEDIA_UNUSABLE,
    ImageRules,
    PictureRules,
    PostType,
    Ratio,
    VideoRules,
    Violation,
    check_file,
    rules_for,
)
from webhooks.events import emit_event

logger = logging.getLogger(__name__)
_SOURCE_ROOT = Path(__file__).resolve().parent.parent

MEDIA_FIT_FAILED = "media_fit_failed"
# Rule codes a fit repairs; any other (a duration, an unreadable file) stays a refusal.
FITTABLE_CODES = frozenset(
    {MEDIA_FORMAT, MEDIA_FILE_SIZE, MEDIA_ASPECT_RATIO, MEDIA_RESOLUTION, MEDIA_FRAME_RATE, MEDIA_BITRATE, MEDIA_CODEC}
)
NOT_FITTABLE_CODES = frozenset({MEDIA_DURATION, MEDIA_UNUSABLE})
NINE_SIXTEEN = Ratio(9, 16)
# The framing a fitted video gets where the platform recommends one (its own notes and guides).
FIT_RATIOS: dict[tuple[Platform, PostType], Ratio] = {
    (Platform.INSTAGRAM, PostType.REEL): NINE_SIXTEEN,
    (Platform.INSTAGRAM, PostType.STORY): NINE_SIXTEEN,
    (Platform.FACEBOOK, PostType.REEL): NINE_SIXTEEN,
    (Platform.FACEBOOK, PostType.STORY): NINE_SIXTEEN,
    (Platform.YOUTUBE, PostType.SHORT): NINE_SIXTEEN,
    (Platform.TIKTOK, PostType.FEED): NINE_SIXTEEN,
}
# The widest frame a video reframed to its platform's recommended ratio is made at (1080 x 1920
# for 9:16): the picture inside is only ever scaled down to it, never cut.
FRAME_WIDTH = 1080
FITTED_KINDS = (MediaKind.IMAGE, MediaKind.VIDEO)
DEFAULT_VIDEO_BIT_RATE = 8_000_000  # a 1080p H.264 target where the platform names no cap
_RATIO_EPSILON = 0.002
_REASON_MAX_LENGTH = 500


def fittable(violation: Violation) -> bool:
    """Whether a fit repairs this broken rule: its code is one a fit repairs, and it is not a file
    under the platform's smallest size (a fit never makes a file larger; that stays a refusal)."""
    return violation.code in FITTABLE_CODES and not violation.too_small


class Unfittable(Exception):
    """The file breaks a rule a fit does not repair; the message says which."""


@dataclass(frozen=True)
class FitPlan:
    """What ``media.fit`` makes: a canvas of ``width`` x ``height`` with the picture scaled to
    ``content_width`` x ``content_height`` in its middle, and the repaired rule codes."""

    kind: str
    width: int
    height: int
    content_width: int
    content_height: int
    rules_fixed: tuple[str, ...]
    image_format: str = "JPEG"
    fps: float | None = None
    max_bit_rate: int | None = None
    rotation: int = 0

    def as_json(self) -> str:
        return json.dumps(
            {
                "kind": self.kind,
                "width": self.width,
                "height": self.height,
                "contentWidth": self.content_width,
                "contentHeight": self.content_height,
                "format": self.image_format,
                "fps": self.fps,
                "maxBitRate": self.max_bit_rate,
                "rotation": self.rotation,
            }
        )


def fit_ratio(platform: Platform, post_type: PostType, kind: str) -> Ratio | None:
    return FIT_RATIOS.get((platform, post_type)) if kind == MediaKind.VIDEO else None


def fit_plan(
    platform: Platform, post_type: PostType, kind: str, *, size: int | None, facts: Mapping[str, Any]
) -> FitPlan | None:
    """The variant ``platform`` needs of a ``kind`` file (what the probe measured: ``facts``) for
    ``post_type``, or None when the file already fits. Raises :class:`Unfittable` for a file that
    breaks a rule a fit does not repair."""
    rules = rules_for(platform, post_type)
    spec = rules.for_kind(kind)
    if not isinstance(spec, PictureRules):
        return None
    broken = check_file(rules, kind, size=size, facts=facts)
    stuck = [b for b in broken if not fittable(b)]
    if stuck:
        raise Unfittable("; ".join(f"{b.code}: takes {kind}s {b.requirement}, the file {b.found}" for b in stuck))
    width = int(facts.get("displayWidth") or facts.get("width") or 0)
    height = int(facts.get("displayHeight") or facts.get("height") or 0)
    if width < 1 or height < 1:
        raise Unfittable("the file has no picture size")
    preferred = fit_ratio(platform, post_type, kind)
    reframe = preferred is not None and abs(width / height - preferred.value) > _RATIO_EPSILON * preferred.value
    if not broken and not reframe:
        return None
    codes = list(dict.fromkeys(b.code for b in broken))
    if reframe and MEDIA_ASPECT_RATIO not in codes:
        codes.append(MEDIA_ASPECT_RATIO)
    canvas_w, canvas_h = _canvas(spec, width, height, preferred)
    scale = _scale(spec, canvas_w, canvas_h)
    if reframe and canvas_w * scale > FRAME_WIDTH:
        scale = FRAME_WIDTH / canvas_w
    even = kind == MediaKind.VIDEO
    out_w, out_h = _within_ratio(spec, _side(canvas_w * scale, even), _side(canvas_h * scale, even), even)
    content_w = min(out_w, _side(width * scale, even))
    content_h = min(out_h, _side(height * scale, even))
    if isinstance(spec, ImageRules):
        return FitPlan(
            kind=kind,
            width=out_w,
            height=out_h,
            content_width=content_w,
            content_height=content_h,
            rules_fixed=tuple(codes),
            image_format=_image_format(spec),
            rotation=0,
        )
    assert isinstance(spec, VideoRules)
    return FitPlan(
        kind=kind,
        width=out_w,
        height=out_h,
        content_width=content_w,
        content_height=content_h,
        rules_fixed=tuple(codes),
        fps=_fps(spec, facts),
        max_bit_rate=_bit_rate(spec, facts),
        rotation=int(facts.get("rotation") or 0),
    )


def _canvas(spec: PictureRules, width: int, height: int, preferred: Ratio | None) -> tuple[float, float]:
    """The padded picture's sides: the nearest ratio the platform takes (its preferred one if it
    has one), reached by adding bars, never by cutting."""
    ratio = width / height
    target = ratio
    if preferred is not None:
        target = preferred.value
    else:
        low = spec.min_ratio.value * (1 - spec.ratio_tolerance) if spec.min_ratio else None
        high = spec.max_ratio.value * (1 + spec.ratio_tolerance) if spec.max_ratio else None
        if low is not None and ratio < low:
            target = spec.min_ratio.value if spec.min_ratio else low
        elif high is not None and ratio > high:
            target = spec.max_ratio.value if spec.max_ratio else high
    if target > ratio:
        return height * target, float(height)
    return float(width), width / target


def _scale(spec: PictureRules, width: float, height: float) -> float:
    """The factor that brings ``width`` x ``height`` within the platform's sides and pixels
    (down first; up only to reach a minimum it names)."""
    long_side, short_side = (max(width, height), min(width, height)) if spec.any_orientation else (width, height)
    factor = 1.0
    for limit, side in ((spec.max_width, long_side), (spec.max_height, short_side)):
        if limit is not None and side * factor > limit:
            factor = limit / side
    if spec.max_pixels is not None and width * height * factor * factor > spec.max_pixels:
        factor = math.sqrt(spec.max_pixels / (width * height))
    if spec.max_side_sum is not None and (width + height) * factor > spec.max_side_sum:
        factor = spec.max_side_sum / (width + height)
    for limit, side in ((spec.min_width, long_side), (spec.min_height, short_side)):
        if limit is not None and side * factor < limit:
            factor = max(factor, limit / side)
    return factor


def _within_ratio(spec: PictureRules, width: int, height: int, even: bool) -> tuple[int, int]:
    """Sides rounded to whole (even, for video) pixels can land a hair outside the ratio range:
    add to the padded side until they are inside (a pixel or two of bar)."""
    step = 2 if even else 1
    low = spec.min_ratio.value * (1 - spec.ratio_tolerance) if spec.min_ratio else None
    high = spec.max_ratio.value * (1 + spec.ratio_tolerance) if spec.max_ratio else None
    for _ in range(8):
        if high is not None and width / height > high:
            height += step
        elif low is not None and width / height < low:
            width += step
        else:
            break
    return width, height


def _side(value: float, even: bool) -> int:
    side = max(2, math.floor(value + 1e-6))
    return side - side % 2 if even else side


def _image_format(spec: ImageRules) -> str:
    if spec.formats is None or "JPEG" in spec.formats:
        return "JPEG"
    return "PNG"


def _fps(spec: VideoRules, facts: Mapping[str, Any]) -> float | None:
    rate = facts.get("frameRate")
    if not isinstance(rate, int | float):
        return None
    if spec.max_fps is not None and rate > spec.max_fps:
        return float(spec.max_fps)
    if spec.min_fps is not None and rate < spec.min_fps:
        return float(math.ceil(spec.min_fps))
    return None


def _bit_rate(spec: VideoRules, facts: Mapping[str, Any]) -> int | None:
    caps = [DEFAULT_VIDEO_BIT_RATE]
    if spec.max_bitrate is not None:
        caps.append(int(spec.max_bitrate * 0.8))
    seconds = facts.get("durationSeconds")
    if spec.max_bytes is not None and isinstance(seconds, int | float) and seconds > 0:
        caps.append(int(spec.max_bytes * 8 * 0.85 / seconds))
    return min(caps)


# --- making a variant ----------------------------------------------------------------------


def fit_command(plan: FitPlan, output_path: str) -> tuple[list[str], Path]:
    """The child process that makes the variant of ``plan`` at ``output_path`` (the original on its
    standard input): its arguments and the directory it runs in. The bench runs it as
    :func:`fit_file` does, to read its CPU time and peak memory."""
    return [sys.executable, "-m", "media.fit", plan.as_json(), output_path], _SOURCE_ROOT


def fit_limits() -> Limits:
    """The fit child's CPU budget and wall-clock backstop (``MEDIA_FIT_*_SECONDS``)."""
    return Limits(
        what="the fit",
        cpu_seconds=settings.MEDIA_FIT_CPU_SECONDS,
        wall_seconds=settings.MEDIA_FIT_WALL_SECONDS,
        cpu_setting="MEDIA_FIT_CPU_SECONDS",
        wall_setting="MEDIA_FIT_WALL_SECONDS",
    )


def fit_file(plan: FitPlan, *, source_path: str, output_path: str) -> None:
    """Run ``media.fit`` on the local file at ``source_path``, writing ``output_path``. Raises
    ``ValueError`` with the reason when it fails or is stopped by its CPU limit, its wall-clock
    backstop or its memory cap (:func:`fit_limits`)."""
    command, cwd = fit_command(plan, output_path)
    with open(source_path, "rb") as source:
        run_child(command, stdin=source, cwd=cwd, limits=fit_limits())


def variants_request(*, workspace_id: str, wanted: list[tuple[str, str, str]]) -> None:
    """Make sure a variant exists for each (original URL, platform, post type) of ``wanted``
    (images and videos of this workspace), queued for ``media.fit`` after the caller's
    transaction commits. A variant already there, whatever its state, is left as it is."""
    if not wanted:
        return
    originals = {
        row.public_url: row
        for row in MediaFile.objects.filter(
            workspace_id=workspace_id, public_url__in={u for u, _, _ in wanted}, kind__in=FITTED_KINDS
        ).only("id", "public_url")
    }
    rows = [
        MediaVariant(
            workspace_id=workspace_id,
            original_id=originals[url].id,
            platform=platform,
            post_type=post_type,
            queued_at=timezone.now(),
        )
        for url, platform, post_type in dict.fromkeys(wanted)
        if url in originals
    ]
    MediaVariant.objects.bulk_create(rows, ignore_conflicts=True)
    queued = list(
        MediaVariant.objects.filter(
            original_id__in=[r.original_id for r in rows], status=VariantStatus.QUEUED
        ).values_list("id", flat=True)
    )
    if queued:
        transaction.on_commit(partial(enqueue_each, FIT_MEDIA, queued), robust=True)


@dataclass(frozen=True)
class VariantInfo:
    original_url: str
    status: str
    url: str | None
    kind: str
    mime_type: str
    size: int | None
    rules_fixed: list[str]
    error: str
    queued_at: dt.datetime | None


def variants_of(*, workspace_id: str, urls: list[str], platform: str, post_type: str) -> dict[str, VariantInfo]:
    """The variants of these originals for ``platform`` and ``post_type``, by original URL (an
    original with none is left out)."""
    rows = MediaVariant.objects.filter(
        workspace_id=workspace_id, original__public_url__in=set(urls), platform=platform, post_type=post_type
    ).select_related("original", "output")
    return {row.original.public_url: _info(row) for row in rows}


def _info(row: MediaVariant) -> VariantInfo:
    output = row.output
    return VariantInfo(
        original_url=row.original.public_url,
        status=row.status,
        url=output.public_url if output is not None and row.status == VariantStatus.READY else None,
        kind=output.kind if output is not None else row.original.kind,
        mime_type=output.mime_type if output is not None else row.original.mime_type,
        size=output.size if output is not None else row.original.size,
        rules_fixed=list(row.rules_fixed or []),
        error=row.error,
        queued_at=row.queued_at,
    )


def variants_nudge(*, variant_ids: list[str], older_than: dt.timedelta) -> int:
    """Queue ``media.fit`` again for these variants still queued after ``older_than`` (a lost
    message); the fit re-checks its row, so a duplicate is harmless."""
    now = timezone.now()
    stale = list(
        MediaVariant.objects.filter(
            id__in=variant_ids, status=VariantStatus.QUEUED, queued_at__lt=now - older_than
        ).values_list("id", flat=True)
    )
    if stale:
        MediaVariant.objects.filter(id__in=stale).update(queued_at=now)
        transaction.on_commit(partial(enqueue_each, FIT_MEDIA, stale), robust=True)
    return len(stale)


def variant_ids_of(*, workspace_id: str, urls: list[str], platform: str, post_type: str) -> list[str]:
    return list(
        MediaVariant.objects.filter(
            workspace_id=workspace_id, original__public_url__in=set(urls), platform=platform, post_type=post_type
        ).values_list("id", flat=True)
    )


def media_fit(*, variant_id: str) -> str:
    """Make one variant: probe the original if it is not yet, plan the fit from the platform's
    rules, run ``media.fit``, probe and check the result, store it and record it (``ready``,
    ``unchanged`` when nothing needs fitting, or ``failed`` with the reason), emitting
    ``media.processed`` or ``media.failed``. Idempotent: a variant no longer queued is left as it
    is, and of two runs at once only the first to finish writes (a conditional UPDATE); the
    other's file is deleted. Returns the status."""
    row = MediaVariant.objects.filter(id=variant_id).select_related("original").first()
    if row is None:
        return "gone"
    if row.status != VariantStatus.QUEUED:
        return row.status
    original = row.original
    if original.probe_status not in (ProbeStatus.READY, ProbeStatus.UNUSABLE):
        media_probe(media_file_id=original.id)
        original.refresh_from_db()
    if original.probe_status == ProbeStatus.UNUSABLE:
        return _fail(row, f"{MEDIA_UNUSABLE}: {original.probe_error or 'the file cannot be read'}")
    if original.probe_status != ProbeStatus.READY or original.probe is None:
        return row.status  # not stored yet, or not readable right now: left for a later run
    platform, post_type = Platform(row.platform), PostType(row.post_type)
    try:
        plan = fit_plan(platform, post_type, original.kind, size=original.size, facts=original.probe)
    except Unfittable as error:
        return _fail(row, str(error))
    if plan is None:
        return _finish(row, status=VariantStatus.UNCHANGED)
    storage = get_media_storage()
    with tempfile.TemporaryDirectory(prefix="fit-") as work_dir:
        source_path = str(Path(work_dir) / "original")
        suffix = ".mp4" if plan.kind == MediaKind.VIDEO else (".png" if plan.image_format == "PNG" else ".jpg")
        output_path = str(Path(work_dir) / f"fitted{suffix}")
        try:
            with storage.open(original.key) as stored, open(source_path, "wb") as copy:
                shutil.copyfileobj(stored, copy)
        except OSError:
            logger.warning("fit of %s skipped: original not readable", row.id)
            return row.status
        try:
            fit_file(plan, source_path=source_path, output_path=output_path)
            facts = probe_file(kind=plan.kind, path=output_path)
        except ValueError as error:
            return _fail(row, str(error))
        size = Path(output_path).stat().st_size
        still = check_file(rules_for(platform, post_type), plan.kind, size=size, facts=facts)
        if still:
            found = "; ".join(f"{b.code}: {b.requirement}, the fitted file {b.found}" for b in still)
            return _fail(row, f"the fitted file still breaks a rule ({found})")
        stem = Path(original.file_name).stem or "media"
        file_name = f"{stem}-{platform.value.lower()}-{post_type.value.lower()}{suffix}"
        mime_type = {".mp4": "video/mp4", ".png": "image/png"}.get(suffix, "image/jpeg")
        key = new_key(workspace_id=str(row.workspace_id), file_name=file_name)
        with open(output_path, "rb") as fitted:
            storage.save(key, fitted, content_type=mime_type)
    return _store(row, plan, key=key, file_name=file_name, mime_type=mime_type, size=size, facts=facts)


def _store(
    row: MediaVariant, plan: FitPlan, *, key: str, file_name: str, mime_type: str, size: int, facts: dict[str, Any]
) -> str:
    storage = get_media_storage()
    now = timezone.now()
    with transaction.atomic():
        output = MediaFile.objects.create(
            workspace_id=row.workspace_id,
            key=key,
            public_url=storage.public_url(key),
            file_name=file_name,
            mime_type=mime_type,
            kind=plan.kind,
            source=MediaSource.FIT,
            size=size,
            uploaded_at=now,
            probe_status=ProbeStatus.READY,
            probe=facts,
        )
        written = MediaVariant.objects.filter(id=row.id, status=VariantStatus.QUEUED).update(
            status=VariantStatus.READY, output=output, rules_fixed=list(plan.rules_fixed), finished_at=now
        )
        if not written:
            transaction.set_rollback(True)
    if not written:
        storage.delete(key)
        return _current(row.id)
    row.refresh_from_db()
    _emit(row, "media.processed")
    return VariantStatus.READY


def _finish(row: MediaVariant, *, status: str) -> str:
    written = MediaVariant.objects.filter(id=row.id, status=VariantStatus.QUEUED).update(
        status=status, finished_at=timezone.now()
    )
    return status if written else _current(row.id)


def media_fit_failed(*, variant_id: str, reason: str) -> str:
    row = MediaVariant.objects.filter(id=variant_id).select_related("original").first()
    return "gone" if row is None else _fail(row, reason)


def _fail(row: MediaVariant, reason: str) -> str:
    with transaction.atomic():
        written = MediaVariant.objects.filter(id=row.id, status=VariantStatus.QUEUED).update(
            status=VariantStatus.FAILED, error=reason[:_REASON_MAX_LENGTH], finished_at=timezone.now()
        )
        if written:
            row.refresh_from_db()
            _emit(row, "media.failed")
    return VariantStatus.FAILED if written else _current(row.id)


def _emit(row: MediaVariant, name: str) -> None:
    output = row.output if row.output_id else None
    emit_event(
        workspace_id=str(row.workspace_id),
        name=name,
        data={
            "media": {
                "variantId": row.id,
                "originalUrl": row.original.public_url,
                "platform": row.platform,
                "postType": row.post_type,
                "url": output.public_url if output is not None else None,
                "rulesFixed": list(row.rules_fixed or []),
                "errorCode": MEDIA_FIT_FAILED if name == "media.failed" else None,
                "error": row.error or None,
            }
        },
    )


def _current(variant_id: str) -> str:
    status = MediaVariant.objects.filter(id=variant_id).values_list("status", flat=True).first()
    return "gone" if status is None else str(status)


def variants_by_original(*, urls: list[str]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(original URL, platform, post type) → how its variant is listed on an entry
    (``mediaVariants``), with the original's kind under ``kind``; one query for any number of
    URLs (public URLs carry their workspace, as ``media_previews``)."""
    if not urls:
        return {}
    rows = MediaVariant.objects.filter(original__public_url__in=set(urls)).select_related("original", "output")
    listed = {}
    for row in rows:
        info = _info(row)
        listed[(info.original_url, row.platform, row.post_type)] = {
            "originalUrl": info.original_url,
            "url": info.url,
            "status": info.status,
            "rulesFixed": info.rules_fixed,
            "error": info.error or None,
            "kind": row.original.kind,
        }
    return listed
