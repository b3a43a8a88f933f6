"""Make a platform's variant of an image or a video in a child process of its own, as the probe
reads one: ``python -m media.fit '<plan json>' OUT_PATH < original``.

Pillow (with pillow-heif) and PyAV decode hostile bytes in C, and a re-encode holds frames in
memory, so this never runs inside a worker: the process caps its own address space and CPU
time (``media.children.limit_own_cpu``: the parent's ``MEDIA_FIT_CPU_SECONDS``) before it loads
either library; the parent (``media.fitting``) kills it at its wall-clock backstop. The plan (made by
``media.fitting.fit_plan`` from the platform's rules) says the canvas and the picture inside
it: the picture is scaled to ``contentWidth`` x ``contentHeight`` and centred on a black canvas
of ``width`` x ``height`` (the padding, when the ratio changes). An image is written as JPEG or
PNG (its first frame, turned upright by its EXIF orientation); a video as H.264/AAC MP4 at
``fps`` frames per second (None: its own rate) and at most ``maxBitRate`` bits per second. Exits
1 with a one-line reason for anything it cannot do. No Django here."""

from __future__ import annotations

import itertools
import json
import resource
import sys
from fractions import Fraction
from typing import IO, Any

from media.children import limit_own_cpu

MEMORY_LIMIT_BYTES = 1536 * 1024 * 1024
CPU_LIMIT_SECONDS = 240  # when run by hand; the parent passes MEDIA_FIT_CPU_SECONDS
MAX_PIXELS = 64 * 1024 * 1024
IMAGE_FORMATS = ("JPEG", "PNG", "WEBP", "GIF", "HEIF")
AUDIO_BIT_RATE = 128_000
AUDIO_SAMPLE_RATE = 48_000


class Failed(Exception):
    """The variant cannot be made; the message is the reason, safe to show the client."""


def _limit_resources() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    limit_own_cpu(CPU_LIMIT_SECONDS)


def fit_image(data: IO[bytes], plan: dict[str, Any], out_path: str) -> None:
    from PIL import Image, ImageOps  # noqa: PLC0415 (loaded only once the limits are in place)
    from pillow_heif import register_heif_opener  # noqa: PLC0415

    register_heif_opener()
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        with Image.open(data, formats=IMAGE_FORMATS) as source:
            source.seek(0)  # an animation: its first frame
            upright = ImageOps.exif_transpose(source.convert("RGBA") if source.mode in ("P", "LA") else source)
            picture = upright.convert("RGBA")
    except (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError) as error:
        raise Failed(f"the image cannot be decoded ({_first_line(error)})") from None
    picture = picture.resize((plan["contentWidth"], plan["contentHeight"]), Image.Resampling.LANCZOS)
    canvas = Image.new("RGB", (plan["width"], plan["height"]), (0, 0, 0))
    offset = ((plan["width"] - picture.width) // 2, (plan["height"] - picture.height) // 2)
    canvas.paste(picture, offset, picture)
    if plan["format"] == "PNG":
        canvas.save(out_path, format="PNG", optimize=True)
    else:
        canvas.save(out_path, format="JPEG", quality=int(plan.get("jpegQuality") or 88), optimize=True)


def fit_video(data: IO[bytes], plan: dict[str, Any], out_path: str) -> None:
    import av  # noqa: PLC0415 (loaded only once the limits are in place)

    try:
        source = av.open(
            data, mode="r", format="mov", options={"protocol_whitelist": "file", "enable_drefs": "0"}, timeout=30
        )
    except (av.FFmpegError, ValueError, OSError):
        raise Failed("not a readable MP4 or QuickTime file") from None
    try:
        with av.open(out_path, mode="w", format="mp4", options={"movflags": "faststart"}) as output:
            _reencode(av, source, output, plan)
    except av.FFmpegError as error:
        raise Failed(f"the video cannot be re-encoded ({_first_line(error)})") from None
    finally:
        source.close()


def _reencode(av: Any, source: Any, output: Any, plan: dict[str, Any]) -> None:
    if not source.streams.video:
        raise Failed("the file has no video track")
    video_in = source.streams.video[0]
    video_in.codec_context.thread_count = 1
    audio_in = source.streams.audio[0] if source.streams.audio else None
    rate = plan.get("fps") or video_in.average_rate or video_in.guessed_rate or 30
    fps = round(float(rate))
    video_out = output.add_stream("libx264", rate=fps)
    video_out.width, video_out.height, video_out.pix_fmt = plan["width"], plan["height"], "yuv420p"
    video_out.codec_context.thread_count = 1
    options = {"preset": "veryfast", "crf": "23", "profile": "high"}
    if plan.get("maxBitRate"):
        cap = int(plan["maxBitRate"])
        options.update({"maxrate": str(cap), "bufsize": str(cap * 2)})
    video_out.codec_context.options = options
    audio_out = None
    resampler = None
    if audio_in is not None:
        audio_out = output.add_stream("aac", rate=AUDIO_SAMPLE_RATE, layout="stereo")
        audio_out.bit_rate = AUDIO_BIT_RATE
        resampler = av.AudioResampler(format="fltp", layout="stereo", rate=AUDIO_SAMPLE_RATE)
    graph = _graph(av, video_in, plan, fps)
    counter = [0]
    streams = [s for s in (video_in, audio_in) if s is not None]
    for packet in source.demux(*streams):
        if packet.stream.index == video_in.index:
            for frame in packet.decode():
                graph.push(frame)
                _drain(av, graph, video_out, output, counter)
        elif audio_out is not None and resampler is not None:
            for frame in packet.decode():
                frame.pts = None
                for chunk in resampler.resample(frame):
                    output.mux(audio_out.encode(chunk))
    graph.push(None)
    _drain(av, graph, video_out, output, counter)
    output.mux(video_out.encode(None))
    if audio_out is not None and resampler is not None:
        for chunk in resampler.resample(None):
            output.mux(audio_out.encode(chunk))
        output.mux(audio_out.encode(None))


def _graph(av: Any, video_in: Any, plan: dict[str, Any], fps: int) -> Any:
    """scale (to the picture's size, the rotation applied first), pad (centred, black) and fps."""
    graph = av.filter.Graph()
    chain = [graph.add_buffer(template=video_in)]
    rotation = int(plan.get("rotation") or 0) % 360
    if rotation == 90:
        chain.append(graph.add("transpose", "cclock"))
    elif rotation == 270:
        chain.append(graph.add("transpose", "clock"))
    elif rotation == 180:
        chain.append(graph.add("transpose", "clock"))
        chain.append(graph.add("transpose", "clock"))
    chain.append(graph.add("scale", f"{plan['contentWidth']}:{plan['contentHeight']}"))
    chain.append(graph.add("pad", f"{plan['width']}:{plan['height']}:(ow-iw)/2:(oh-ih)/2:black"))
    chain.append(graph.add("fps", str(fps)))
    chain.append(graph.add("format", "yuv420p"))
    chain.append(graph.add("buffersink"))
    for left, right in itertools.pairwise(chain):
        left.link_to(right)
    graph.configure()
    return graph


def _drain(av: Any, graph: Any, stream: Any, output: Any, counter: list[int]) -> None:
    while True:
        try:
            frame = graph.pull()
        except (av.BlockingIOError, av.EOFError):
            return
        frame.pts, frame.time_base = counter[0], Fraction(1, int(stream.codec_context.framerate or 30))
        counter[0] += 1
        output.mux(stream.encode(frame))


def _first_line(error: BaseException) -> str:
    return (str(error).splitlines() or [type(error).__name__])[0][:160]


FITS = {"image": fit_image, "video": fit_video}


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: python -m media.fit '<plan json>' OUT_PATH < file", file=sys.stderr)
        return 2
    try:
        plan = json.loads(sys.argv[1])
        fit = FITS[plan["kind"]]
    except (ValueError, KeyError, TypeError):
        print("the fit plan is not readable", file=sys.stderr)
        return 2
    _limit_resources()
    try:
        fit(sys.stdin.buffer, plan, sys.argv[2])
    except Failed as error:
        print(str(error), file=sys.stderr)
        return 1
    except MemoryError:
        print("the file needs more memory than the fit's limit", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
