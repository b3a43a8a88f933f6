"""The probe against a corpus the tests make: images of many sizes and formats (a HEIC, an
animated GIF, a JPEG turned by its EXIF orientation), short videos of several codecs, ratios,
containers and rotations, and broken or hostile files, each read by the real child process."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from media.probing import probe_file
from tests.media import corpus


def probed(tmp_path: Path, kind: str, data: bytes) -> dict[str, Any]:
    path = tmp_path / "upload"
    path.write_bytes(data)
    return probe_file(kind=kind, path=str(path))


def refusal(tmp_path: Path, kind: str, data: bytes) -> str:
    with pytest.raises(ValueError) as error:
        probed(tmp_path, kind, data)
    return str(error.value)


STILL = {"frameCount": 1, "animated": False, "durationSeconds": None, "orientation": 1}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (corpus.image((1600, 800)), {"format": "JPEG", "width": 1600, "height": 800, "colorMode": "RGB"}),
        (corpus.image((1080, 1350), "JPEG", "L"), {"format": "JPEG", "width": 1080, "height": 1350, "colorMode": "L"}),
        (corpus.image((64, 64), "JPEG", "CMYK"), {"format": "JPEG", "width": 64, "height": 64, "colorMode": "CMYK"}),
        (corpus.image((1, 1), "PNG"), {"format": "PNG", "width": 1, "height": 1, "colorMode": "RGB"}),
        (corpus.image((300, 200), "PNG", "RGBA"), {"format": "PNG", "width": 300, "height": 200, "colorMode": "RGBA"}),
        (corpus.image((90, 160), "PNG", "P"), {"format": "PNG", "width": 90, "height": 160, "colorMode": "P"}),
        (corpus.image((500, 500), "WEBP"), {"format": "WEBP", "width": 500, "height": 500, "colorMode": "RGB"}),
        (corpus.image((120, 80), "HEIF"), {"format": "HEIF", "width": 120, "height": 80, "colorMode": "RGB"}),
        (corpus.image((6000, 4000)), {"format": "JPEG", "width": 6000, "height": 4000, "colorMode": "RGB"}),
    ],
    ids=[
        "jpeg-2to1",
        "jpeg-grey-4to5",
        "jpeg-cmyk",
        "png-1px",
        "png-alpha",
        "png-palette-9to16",
        "webp",
        "heic",
        "jpeg-24mp",
    ],
)
def test_still_images_are_read(tmp_path, data, expected):
    facts = probed(tmp_path, "image", data)
    assert facts == {
        "type": "image",
        **STILL,
        **expected,
        "displayWidth": expected["width"],
        "displayHeight": expected["height"],
    }


@pytest.mark.parametrize(
    ("orientation", "display"), [(1, (1600, 900)), (3, (1600, 900)), (6, (900, 1600)), (8, (900, 1600))]
)
def test_the_exif_orientation_turns_the_displayed_sides(tmp_path, orientation, display):
    facts = probed(tmp_path, "image", corpus.image((1600, 900), orientation=orientation))
    assert (facts["width"], facts["height"]) == (1600, 900)
    assert (facts["orientation"], facts["displayWidth"], facts["displayHeight"]) == (orientation, *display)


def test_an_animated_gif_counts_its_frames_and_length(tmp_path):
    facts = probed(tmp_path, "image", corpus.animated_gif(frames=6, frame_ms=120))
    assert facts["format"] == "GIF"
    assert (facts["frameCount"], facts["animated"], facts["durationSeconds"]) == (6, True, 0.72)
    assert (facts["displayWidth"], facts["displayHeight"]) == (40, 30)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"codec": "libx264", "audio": True}, {"videoCodec": "h264", "audioCodec": "aac", "hasAudio": True}),
        ({"codec": "libx265"}, {"videoCodec": "hevc", "audioCodec": None, "hasAudio": False}),
        ({"codec": "mpeg4", "size": (128, 160)}, {"videoCodec": "mpeg4", "width": 128, "height": 160}),
        ({"codec": "libvpx-vp9", "size": (96, 96)}, {"videoCodec": "vp9", "width": 96, "height": 96}),
        (
            {"size": (90, 160), "fps": 30, "frames": 60},
            {"frameRate": 30.0, "frameCount": 60, "width": 90, "height": 160},
        ),
        ({"container": "mov"}, {"container": "quicktime"}),
    ],
    ids=["h264-aac-16to9", "hevc", "mpeg4-4to5", "vp9-square", "9to16-30fps", "quicktime"],
)
def test_videos_are_read(tmp_path, options, expected):
    facts = probed(tmp_path, "video", corpus.video(tmp_path / "made", **options))
    base = {
        "type": "video",
        "container": "mp4",
        "videoCodec": "h264",
        "audioCodec": None,
        "hasAudio": False,
        "frameRate": 25.0,
        "width": 160,
        "height": 90,
        "rotation": 0,
        "frameCount": 25,
    }
    expected = {**base, **expected}
    assert {key: facts[key] for key in expected} == expected
    assert (facts["displayWidth"], facts["displayHeight"]) == (expected["width"], expected["height"])
    assert facts["durationSeconds"] == pytest.approx(expected["frameCount"] / expected["frameRate"], abs=0.01)
    assert facts["bitRate"] > 0


@pytest.mark.parametrize(("rotation", "display"), [(90, (90, 160)), (180, (160, 90)), (270, (90, 160))])
def test_a_rotated_video_reports_its_displayed_sides(tmp_path, rotation, display):
    facts = probed(tmp_path, "video", corpus.video(tmp_path / "made", rotation=rotation))
    assert (facts["width"], facts["height"], facts["rotation"]) == (160, 90, rotation)
    assert (facts["displayWidth"], facts["displayHeight"]) == display


def test_truncated_images_are_refused(tmp_path):
    whole = corpus.image((800, 600), "PNG", "RGB")
    assert "cannot be decoded" in refusal(tmp_path, "image", whole[: len(whole) // 2])
    jpeg = corpus.image((1600, 1200))
    assert "cannot be decoded" in refusal(tmp_path, "image", jpeg[: len(jpeg) // 2])


def test_truncated_videos_are_refused(tmp_path):
    index_last = corpus.video(tmp_path / "a.mp4", frames=50)
    assert refusal(tmp_path, "video", index_last[: len(index_last) // 2]) == "not a readable MP4 or QuickTime file"
    index_first = corpus.video(tmp_path / "b.mp4", frames=50, faststart=True)
    reason = refusal(tmp_path, "video", index_first[: len(index_first) * 2 // 3])
    assert reason.startswith("the file is truncated (") and reason.endswith(" of 50 video frames present)")


def test_a_decompression_bomb_is_refused_before_it_is_decoded(tmp_path):
    assert refusal(tmp_path, "image", corpus.decompression_bomb_png()) == "the image has more than 67108864 pixels"


@pytest.mark.parametrize("kind", ["image", "video"])
def test_random_bytes_are_refused(tmp_path, kind):
    reason = refusal(tmp_path, kind, os.urandom(64 * 1024))
    assert reason in (
        "not an image of a supported format (JPEG, PNG, WEBP, GIF, HEIF)",
        "not a readable MP4 or QuickTime file",
    )


def test_a_file_of_the_other_kind_is_refused(tmp_path):
    assert refusal(tmp_path, "video", corpus.image((100, 100), "PNG")) == "not a readable MP4 or QuickTime file"
    video = corpus.video(tmp_path / "made")
    assert refusal(tmp_path, "image", video).startswith("not an image of a supported format")


def test_a_playlist_naming_other_files_is_not_followed(tmp_path):
    playlist = b"#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n"
    assert refusal(tmp_path, "video", playlist) == "not a readable MP4 or QuickTime file"
