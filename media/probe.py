"""What an uploaded file is (dimensions, format, duration, codecs...), read in a child process of
its own: ``python -m media.probe image|video < file > probe.json``.

Pillow (with pillow-heif for HEIC) and PyAV (FFmpeg inside its wheels) parse hostile bytes in C,
so a probe never runs inside a worker: this process caps its own address space and CPU time
before it loads either library (``media.children.limit_own_cpu``: the parent's
``MEDIA_PROBE_CPU_SECONDS``), refuses an image of more than ``MAX_PIXELS`` before decoding it,
reads at most ``MAX_FRAMES`` frames of an animation and ``MAX_PACKETS`` packets of a video, and
exits 1 with a one-line reason for anything it cannot read. The parent (``media.probing``) kills
it at its wall-clock backstop. No Django here:
the child starts quickly and imports nothing it does not need.

Videos are opened with FFmpeg's MP4/QuickTime demuxer only (the two video types an upload may
declare), with external references off and no protocol but the file itself, so no crafted file
makes FFmpeg read a playlist, another file or the network. Every packet is demuxed but only the
first video frame is decoded (for its rotation), so a file cut short is found (fewer packets
than its index promises) without the cost of decoding it."""

from __future__ import annotations

import json
import resource
import sys
import warnings
from fractions import Fraction
from typing import IO, Any

from media.children import limit_own_cpu

MEMORY_LIMIT_BYTES = 1024 * 1024 * 1024
CPU_LIMIT_SECONDS = 30  # when run by hand; the parent passes MEDIA_PROBE_CPU_SECONDS
OPEN_TIMEOUT_SECONDS = 30.0  # PyAV's timeout on opening the file
MAX_PIXELS = 64 * 1024 * 1024  # a 48 MP phone photo fits; a decompression bomb does not
MAX_FRAMES = 5000  # of an animated image
MAX_PACKETS = 200_000  # of a video: over an hour of 30 fps video with its audio
IMAGE_FORMATS = ("JPEG", "PNG", "WEBP", "GIF", "HEIF")
_ROTATE_SWAPS_SIDES = (90, 270)
_QUICKTIME_BRAND = "qt"
# EXIF orientations 5 to 8 turn the picture a quarter: its displayed sides are swapped.
_EXIF_ORIENTATION = 0x0112
_QUARTER_TURN_ORIENTATIONS = (5, 6, 7, 8)


class Unreadable(Exception):
    """The file cannot be probed; the message is the reason, safe to show the client."""


def _limit_resources() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    limit_own_cpu(CPU_LIMIT_SECONDS)


def probe_image(data: IO[bytes]) -> dict[str, Any]:
    """Format, sides (as stored and as displayed after the EXIF orientation), colour mode,
    frame count and, for an animation, its length. The pixels are decoded (a JPEG at 1/8
    scale), so a truncated file is refused."""
    from PIL import Image, UnidentifiedImageError  # noqa: PLC0415 (loaded only once the limits are in place)
    from pillow_heif import register_heif_opener  # noqa: PLC0415

    register_heif_opener()
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(data, formats=IMAGE_FORMATS) as image:
                return _image_facts(image)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise Unreadable(f"the image has more than {MAX_PIXELS} pixels") from None
    except UnidentifiedImageError:
        raise Unreadable(f"not an image of a supported format ({', '.join(IMAGE_FORMATS)})") from None
    except (OSError, SyntaxError, ValueError, EOFError) as error:
        raise Unreadable(f"the image cannot be decoded ({_first_line(error)})") from None


def _image_facts(image: Any) -> dict[str, Any]:
    width, height = image.size
    if width < 1 or height < 1:
        raise Unreadable("the image has no pixels")
    image_format, mode = image.format, image.mode
    orientation = int(image.getexif().get(_EXIF_ORIENTATION) or 1)
    if orientation not in range(1, 9):
        orientation = 1
    frames = 0
    duration_ms = 0
    animated = bool(getattr(image, "is_animated", False))
    while True:  # every frame decoded: a truncated file (or frame) fails here
        if image_format == "JPEG":
            image.draft(image.mode, (max(1, width // 8), max(1, height // 8)))
        image.load()
        frames += 1
        duration_ms += int(image.info.get("duration") or 0)
        if not animated:
            break
        if frames >= MAX_FRAMES:
            raise Unreadable(f"the animation has more than {MAX_FRAMES} frames")
        try:
            image.seek(frames)
        except EOFError:
            break
    display_width, display_height = (height, width) if orientation in _QUARTER_TURN_ORIENTATIONS else (width, height)
    return {
        "type": "image",
        "format": image_format,
        "width": width,
        "height": height,
        "orientation": orientation,
        "displayWidth": display_width,
        "displayHeight": display_height,
        "colorMode": mode,
        "frameCount": frames,
        "animated": frames > 1,
        "durationSeconds": round(duration_ms / 1000, 3) if frames > 1 else None,
    }


def probe_video(data: IO[bytes]) -> dict[str, Any]:
    """Container, codecs, duration, frame rate, bit rate, sides (as coded and as displayed after
    the rotation), rotation and whether there is sound."""
    import av  # noqa: PLC0415 (loaded only once the limits are in place)

    try:
        container = av.open(
            data,
            mode="r",
            format="mov",
            options={"protocol_whitelist": "file", "enable_drefs": "0"},
            timeout=OPEN_TIMEOUT_SECONDS,
        )
    except (av.FFmpegError, ValueError, OSError):
        raise Unreadable("not a readable MP4 or QuickTime file") from None
    try:
        return _video_facts(av, container)
    except av.FFmpegError as error:
        raise Unreadable(f"the video cannot be read ({_first_line(error)})") from None
    finally:
        container.close()


def _video_facts(av: Any, container: Any) -> dict[str, Any]:
    if not container.streams.video:
        raise Unreadable("the file has no video track")
    video = container.streams.video[0]
    audio = container.streams.audio[0] if container.streams.audio else None
    video.codec_context.thread_count = 1
    width, height = video.codec_context.width, video.codec_context.height
    if not (width and height):
        raise Unreadable("the video track has no picture size")
    rotation: int | None = None
    packets: dict[int, int] = {}
    for total, packet in enumerate(container.demux(), start=1):
        if total > MAX_PACKETS:
            raise Unreadable(f"the video has more than {MAX_PACKETS} packets")
        if packet.size:
            packets[packet.stream.index] = packets.get(packet.stream.index, 0) + 1
        if rotation is None and packet.stream.index == video.index:
            for frame in video.codec_context.decode(packet):
                rotation = int(frame.rotation) % 360
                break
    if rotation is None:
        raise Unreadable("the video track has no decodable frame")
    promised = video.frames or 0
    if promised and packets.get(video.index, 0) < promised:
        raise Unreadable(f"the file is truncated ({packets.get(video.index, 0)} of {promised} video frames present)")
    frame_rate = video.average_rate or video.guessed_rate
    brand = str(container.metadata.get("major_brand", "")).strip()
    return {
        "type": "video",
        "container": "quicktime" if brand == _QUICKTIME_BRAND else "mp4",
        "videoCodec": video.codec_context.name,
        "audioCodec": audio.codec_context.name if audio is not None else None,
        "hasAudio": audio is not None and packets.get(audio.index, 0) > 0,
        "durationSeconds": _seconds(container, video),
        "frameRate": round(float(frame_rate), 3) if frame_rate else None,
        "bitRate": int(container.bit_rate) if container.bit_rate else None,
        "width": width,
        "height": height,
        "rotation": rotation,
        "displayWidth": height if rotation in _ROTATE_SWAPS_SIDES else width,
        "displayHeight": width if rotation in _ROTATE_SWAPS_SIDES else height,
        "frameCount": packets.get(video.index, 0),
    }


def _seconds(container: Any, video: Any) -> float | None:
    if container.duration:
        return round(container.duration / 1_000_000, 3)
    if video.duration and video.time_base:
        return round(float(video.duration * Fraction(video.time_base)), 3)
    return None


def _first_line(error: BaseException) -> str:
    return (str(error).splitlines() or [type(error).__name__])[0][:160]


PROBES = {"image": probe_image, "video": probe_video}


def main() -> int:
    if len(sys.argv) != 2 or sys.argv[1] not in PROBES:
        print(f"usage: python -m media.probe {'|'.join(PROBES)} < file", file=sys.stderr)
        return 2
    _limit_resources()
    try:
        facts = PROBES[sys.argv[1]](sys.stdin.buffer)
    except Unreadable as error:
        print(str(error), file=sys.stderr)
        return 1
    except MemoryError:
        print("the file needs more memory than the probe's limit", file=sys.stderr)
        return 1
    sys.stdout.write(json.dumps(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
