"""A corpus of media files made by the tests themselves: images with Pillow (and pillow-heif for
HEIC), short videos with PyAV, and broken or hostile files."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import av
from PIL import Image
from pillow_heif import register_heif_opener

register_heif_opener()

EXIF_ORIENTATION = 0x0112


def image(size: tuple[int, int], fmt: str = "JPEG", mode: str = "RGB", *, orientation: int | None = None) -> bytes:
    colour: object = 120 if mode in ("L", "P") else (200, 40, 40, 128)[: len(mode)]
    picture = Image.new(mode, size, colour)  # type: ignore[arg-type]
    out = io.BytesIO()
    options: dict[str, object] = {}
    if orientation is not None:
        exif = Image.Exif()
        exif[EXIF_ORIENTATION] = orientation
        options["exif"] = exif
    picture.save(out, format=fmt, **options)
    return out.getvalue()


def animated_gif(frames: int, size: tuple[int, int] = (40, 30), frame_ms: int = 100) -> bytes:
    pictures = [Image.new("RGB", size, (index * 40 % 256, 255 - index * 30 % 256, 90)) for index in range(frames)]
    out = io.BytesIO()
    pictures[0].save(out, format="GIF", save_all=True, append_images=pictures[1:], duration=frame_ms, loop=0)
    return out.getvalue()


def video(
    path: Path,
    *,
    codec: str = "libx264",
    size: tuple[int, int] = (160, 90),
    fps: int = 25,
    frames: int = 25,
    audio: bool = False,
    rotation: int = 0,
    container: str = "mp4",
    faststart: bool = False,
) -> bytes:
    """A short video of ``frames`` frames (a moving gradient) written to ``path``; its bytes."""
    width, height = size
    options = {"movflags": "faststart"} if faststart else {}
    with av.open(str(path), "w", format=container, options=options) as output:
        stream = output.add_stream(codec, rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.thread_count = 1
        if rotation:
            stream.set_display_rotation(rotation)
        sound = output.add_stream("aac", rate=48000, layout="mono") if audio else None
        for index in range(frames):
            picture = Image.new("RGB", size, (index * 9 % 256, 80, 160))
            frame = av.VideoFrame.from_image(picture).reformat(format="yuv420p")
            frame.pts = index
            output.mux(stream.encode(frame))
        output.mux(stream.encode(None))
        if sound is not None:
            samples = 48000 * frames // fps
            for start in range(0, samples, 1024):
                chunk = av.AudioFrame(format="fltp", layout="mono", samples=1024)
                chunk.sample_rate = 48000
                for plane in chunk.planes:
                    plane.update(bytes(plane.buffer_size))
                chunk.pts = start
                output.mux(sound.encode(chunk))
            output.mux(sound.encode(None))
    return path.read_bytes()


def decompression_bomb_png(side: int = 100_000) -> bytes:
    """A valid PNG header claiming ``side`` x ``side`` grey pixels (10 gigapixels by default),
    with a few hundred bytes of data: what a decoder that trusts the header would try to hold."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    rows = zlib.compress(b"\x00" * (side + 1) * 4)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def generated(tmp_path: Path) -> list[tuple[str, str, str, bytes]]:
    """(name, kind, mime type, bytes) of the corpus the rules and fits are tried on: images of
    many sizes, ratios and formats (a HEIC, an animated GIF), short videos of a few codecs,
    ratios and lengths; videos are written under ``tmp_path``."""
    return [
        ("square.jpg", "image", "image/jpeg", image((600, 600))),
        ("portrait45.jpg", "image", "image/jpeg", image((400, 500))),
        ("tall916.jpg", "image", "image/jpeg", image((360, 640))),
        ("panorama.jpg", "image", "image/jpeg", image((2000, 200))),
        ("tiny.png", "image", "image/png", image((100, 80), "PNG")),
        ("photo.webp", "image", "image/webp", image((640, 480), "WEBP")),
        ("phone.heic", "image", "image/jpeg", image((640, 480), "HEIF")),
        ("rotated.jpg", "image", "image/jpeg", image((500, 400), orientation=6)),
        ("animated.gif", "image", "image/png", animated_gif(4)),
        ("clip169.mp4", "video", "video/mp4", video(tmp_path / "a.mp4", size=(320, 180), fps=24, frames=24)),
        (
            "reel.mp4",
            "video",
            "video/mp4",
            video(tmp_path / "b.mp4", size=(180, 320), fps=25, frames=100, audio=True),
        ),
        ("mpeg4.mp4", "video", "video/mp4", video(tmp_path / "c.mp4", codec="mpeg4", fps=30, frames=30)),
        ("slow.mp4", "video", "video/mp4", video(tmp_path / "d.mp4", size=(96, 96), fps=10, frames=50)),
    ]
