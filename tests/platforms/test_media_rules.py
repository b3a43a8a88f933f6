"""The media rules table against the simulators: for each platform, post type and rule that a
small file can test, a generated file just inside the limit and one just outside it, read the way
the simulators read what they receive (``platforms.sandbox.media_checks``): the first breaks no
rule of that code, the second breaks it. Then a few refusals end to end, over HTTP, through the
real platform clients and the simulators."""

from __future__ import annotations

import functools
import hashlib
import io
import math
import threading
from collections.abc import Iterator
from functools import cache
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import av
import pytest
from PIL import Image

from platforms.base import ErrorCode, Permanent, Platform, PublishRequest
from platforms.media_rules import (
    MEDIA_RULES,
    ImageRules,
    MediaRules,
    PostType,
    VideoRules,
    check_file,
    post_type_of,
)
from platforms.registry import get_client
from platforms.sandbox import media_checks
from platforms.sandbox.store import SandboxStore
from tests.conftest import _QuietHandler
from tests.platforms.conftest import connect_sandbox_account, drive, media_item

MAX_GENERATED_SIDE = 2000  # larger limits (4096 px...) are not generated: too slow for a test


@cache
def image_bytes(width: int, height: int, fmt: str = "JPEG") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 90, 40)).save(out, format=fmt)
    return out.getvalue()


@cache
def video_bytes(width: int, height: int, fps: int = 30, seconds: float = 1.0, codec: str = "libx264") -> bytes:
    out = io.BytesIO()
    with av.open(out, "w", format="mp4") as container:
        stream = container.add_stream(codec, rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.thread_count = 1
        if codec == "libx264":
            stream.options = {"preset": "ultrafast"}
        frame = av.VideoFrame.from_image(Image.new("RGB", (width, height), (30, 120, 200))).reformat(format="yuv420p")
        for index in range(max(1, math.ceil(seconds * fps))):
            frame.pts = index
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return out.getvalue()


def _even(value: float) -> int:
    return max(2, int(value) // 2 * 2)


def _base_sides(spec: ImageRules | VideoRules) -> tuple[int, int]:
    """Small sides within every rule of ``spec``: a ratio inside its range and at least its minimums."""
    low = spec.min_ratio.value if spec.min_ratio else None
    high = spec.max_ratio.value if spec.max_ratio else None
    ratio = 1.0 if (low or 0) <= 1.0 <= (high or math.inf) else (low if low and low > 1 else high or 1.0)
    height = max(spec.min_height or 0, (spec.min_width or 0) / ratio, 64)
    if spec.any_orientation:
        height = max(spec.min_width or 0, spec.min_height or 0, 64)
    width = height * ratio
    return _even(math.ceil(width / 2) * 2), _even(math.ceil(height / 2) * 2)


def _make(kind: str, spec: ImageRules | VideoRules, **change: Any) -> bytes:
    width, height = change.get("sides") or _base_sides(spec)
    if kind == "image":
        formats = sorted(spec.formats or {"JPEG"})  # type: ignore[union-attr]
        return image_bytes(width, height, change.get("fmt") or ("JPEG" if "JPEG" in formats else formats[0]))
    assert isinstance(spec, VideoRules)
    fps = change.get("fps") or int(max(spec.min_fps or 0, min(30, spec.max_fps or 30)))
    seconds = change.get("seconds") or max(spec.min_seconds or 0, 1.0) + 0.5
    return video_bytes(width, height, fps, seconds, change.get("codec") or "libx264")


def _ratio_pairs(spec: ImageRules | VideoRules) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    base_w, base_h = _base_sides(spec)
    height = max(base_h, 400)
    if spec.min_ratio:
        value = spec.min_ratio.value
        if value * height >= 4:
            inside = _even(math.ceil(value * height / 2) * 2 + (2 if spec.ratio_tolerance else 0))
            inside = max(inside, spec.min_width or 0)
            outside = _even(value * (1 - spec.ratio_tolerance) * height - 2)
            if inside <= MAX_GENERATED_SIDE and inside / height >= value * (1 - spec.ratio_tolerance):
                yield "min ratio", {"sides": (inside, height)}, {"sides": (outside, height)}
    if spec.max_ratio:
        value = spec.max_ratio.value
        width = max(base_w, 400)
        inside_h = _even(math.ceil(width / value / 2) * 2)
        outside_h = _even(width / (value * (1 + spec.ratio_tolerance)) - 2)
        if inside_h >= 4 and width <= MAX_GENERATED_SIDE and inside_h <= MAX_GENERATED_SIDE:
            yield "max ratio", {"sides": (width, inside_h)}, {"sides": (width, outside_h)}


def _cases(rules: MediaRules, kind: str) -> Iterator[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    spec = rules.for_kind(kind)
    assert isinstance(spec, ImageRules | VideoRules)
    for label, inside, outside in _ratio_pairs(spec):
        yield "media_aspect_ratio", label, inside, outside
    if (spec.min_width or spec.min_height) and not spec.any_orientation:
        width, height = _base_sides(spec)
        smaller = (_even(width - 2), _even(height - 2)) if width > 4 else (width, _even(height - 2))
        yield "media_resolution", "minimum sides", {"sides": (width, height)}, {"sides": smaller}
    if isinstance(spec, ImageRules) and spec.formats and "PNG" not in spec.formats:
        yield "media_format", "format", {}, {"fmt": "PNG"}
    if isinstance(spec, VideoRules):
        if spec.min_seconds and spec.min_seconds <= 5:
            yield "media_duration", "shortest", {"seconds": spec.min_seconds + 0.5}, {"seconds": spec.min_seconds - 0.4}
        if spec.max_fps:
            yield "media_frame_rate", "most frames", {"fps": int(spec.max_fps)}, {"fps": int(spec.max_fps) + 1}
        if spec.min_fps:
            yield "media_frame_rate", "fewest frames", {"fps": int(spec.min_fps)}, {"fps": int(spec.min_fps) - 1}
        if spec.video_codecs and "mpeg4" not in spec.video_codecs:
            yield "media_codec", "codec", {}, {"codec": "mpeg4"}


def _parity_cases() -> Iterator[Any]:
    for (platform, post_type), rules in MEDIA_RULES.items():
        for kind in ("image", "video"):
            if rules.for_kind(kind) is None:
                continue
            for code, label, inside, outside in _cases(rules, kind):
                case_id = f"{platform.value}-{post_type.value}-{kind}-{code}-{label}"
                yield pytest.param(platform, post_type, kind, code, inside, outside, id=case_id)


def _codes(rules: MediaRules, kind: str, data: bytes) -> set[str]:
    facts = media_checks.measure(data)
    assert facts is not None and facts["type"] == kind, facts
    return {v.code for v in check_file(rules, kind, size=len(data), facts=facts)}


@pytest.mark.parametrize(("platform", "post_type", "kind", "code", "inside", "outside"), list(_parity_cases()))
def test_a_file_just_inside_passes_and_one_just_outside_is_refused(
    platform: Platform, post_type: PostType, kind: str, code: str, inside: dict[str, Any], outside: dict[str, Any]
) -> None:
    rules = MEDIA_RULES[(platform, post_type)]
    spec = rules.for_kind(kind)
    assert isinstance(spec, ImageRules | VideoRules)
    accepted = _make(kind, spec, **inside)
    assert code not in _codes(rules, kind, accepted), (inside, media_checks.measure(accepted))
    refused = _make(kind, spec, **outside)
    assert code in _codes(rules, kind, refused), (outside, media_checks.measure(refused))
    assert media_checks.refusal(platform, post_type, refused) is not None


def test_every_platform_and_post_type_names_its_source() -> None:
    assert {platform for platform, _ in MEDIA_RULES} == set(Platform)
    for rules in MEDIA_RULES.values():
        assert rules.source and rules.selected_by, rules
        assert rules.image or rules.video or rules.document, rules
    assert len(list(_parity_cases())) >= 40  # the parity test covers the table, not a corner of it


@pytest.mark.parametrize(
    ("platform", "content_type", "options", "kinds", "expected"),
    [
        (Platform.INSTAGRAM, "IMAGE", {}, ["image"], PostType.FEED),
        (Platform.INSTAGRAM, "VIDEO", {"postType": "FEED"}, ["video"], PostType.REEL),
        (Platform.INSTAGRAM, "VIDEO", {"postType": "STORY"}, ["video"], PostType.STORY),
        (Platform.INSTAGRAM, "CAROUSEL", {}, ["image", "video"], PostType.CAROUSEL_ITEM),
        (Platform.FACEBOOK, "VIDEO", {"postType": "REEL"}, ["video"], PostType.REEL),
        (Platform.FACEBOOK, "IMAGE", {}, ["image"], PostType.FEED),
        (Platform.YOUTUBE, "VIDEO", {"postType": "SHORTS"}, ["video"], PostType.SHORT),
        (Platform.YOUTUBE, "VIDEO", {}, ["video"], PostType.FEED),
        (Platform.LINKEDIN, "DOCUMENT", {}, ["document"], PostType.DOCUMENT),
        (Platform.PINTEREST, "CAROUSEL", {}, ["image", "image"], PostType.CAROUSEL_ITEM),
        (Platform.TIKTOK, "CAROUSEL", {}, ["image", "image"], PostType.FEED),
    ],
)
def test_the_post_type_follows_the_config_options_and_media(
    platform: Platform, content_type: str, options: dict[str, Any], kinds: list[str], expected: PostType
) -> None:
    assert post_type_of(platform, content_type=content_type, options=options, kinds=kinds) == expected


# --- end to end: the real clients against the simulators ----------------------------------------


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Any]:
    """Generated files served over loopback HTTP for the simulators to fetch (as ``media_server``
    serves ``tests/fixtures``)."""
    handler = functools.partial(_QuietHandler, directory=str(tmp_path))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"

    def serve(name: str, data: bytes) -> str:
        (tmp_path / name).write_bytes(data)
        return f"{base}/{name}"

    yield serve
    server.shutdown()


def _publish(platform: Platform, content_type: str, urls: list[str], options: dict[str, Any]) -> Any:
    identity = connect_sandbox_account(platform)[0]
    client = get_client(platform)
    request = PublishRequest(
        target_id=f"t-{platform.slug}",
        content_type=content_type,
        text="media rules",
        options=options,
        media=tuple(media_item(url) for url in urls),
    )
    return drive(client, identity.credentials, request)


def test_instagram_refuses_an_image_outside_its_feed_ratio(sandbox: str, served: Any) -> None:
    tall = served("tall.jpg", image_bytes(400, 711))  # 9:16, under 4:5
    with pytest.raises(Permanent) as refused:
        _publish(Platform.INSTAGRAM, "IMAGE", [tall], {})
    assert refused.value.error_code == ErrorCode.MEDIA_REJECTED
    assert "(media_aspect_ratio)" in refused.value.message
    _publish(Platform.INSTAGRAM, "IMAGE", [served("portrait.jpg", image_bytes(400, 500))], {})  # 4:5 is taken


def test_tiktok_refuses_a_png_photo_and_takes_jpeg(sandbox: str, served: Any) -> None:
    png, jpeg = served("photo.png", image_bytes(600, 800, "PNG")), served("photo.jpg", image_bytes(600, 800))
    options = {"privacyLevel": "SELF_ONLY"}
    with pytest.raises(Permanent) as refused:
        _publish(Platform.TIKTOK, "CAROUSEL", [jpeg, png], options)
    # TikTok answers its own documented fail_reason for the status, as the real API does
    assert refused.value.error_code == ErrorCode.MEDIA_REJECTED
    assert "file_format_check_failed" in refused.value.message
    _publish(Platform.TIKTOK, "CAROUSEL", [jpeg, jpeg], options)


def test_each_simulator_logs_the_file_it_received(sandbox: str, served: Any) -> None:
    """What a platform was sent is in its request log (``media``: SHA-256 and what was measured),
    whether it pulled a URL (Instagram, TikTok) or was uploaded the bytes (YouTube, X)."""
    data = video_bytes(360, 450, fps=30, seconds=3.5)  # 4:5, within all four platforms' rules
    url = served("clip.mp4", data)
    options = {"INSTAGRAM": {}, "TIKTOK": {"privacyLevel": "SELF_ONLY"}, "YOUTUBE": {"postType": "SHORTS"}}
    for platform in (Platform.INSTAGRAM, Platform.TIKTOK, Platform.YOUTUBE, Platform.TWITTER):
        SandboxStore(platform.slug).clear_requests()
        identity = connect_sandbox_account(platform)[0]
        request = PublishRequest(
            target_id=f"t-{platform.slug}",
            content_type="VIDEO",
            text="what was sent",
            options=options.get(platform.value, {}),
            media=(media_item(url),),
        )
        state: dict[str, Any] = {}
        for _ in range(3):  # the file is sent by the first step (YouTube: the second, after opening a session)
            state = get_client(platform).publish(identity.credentials, request, state).state
            logged = [m for entry in SandboxStore(platform.slug).requests() for m in entry.get("media", [])]
            if logged:
                break
        assert logged, platform
        assert {m["sha256"] for m in logged} == {hashlib.sha256(data).hexdigest()}, platform
        assert {(m["width"], m["height"], m["videoCodec"], m["bytes"]) for m in logged} == {
            (360, 450, "h264", len(data))
        }, platform
