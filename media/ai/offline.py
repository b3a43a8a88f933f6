"""The embedded default provider: draws a deterministic picture from the prompt with Pillow.
Same prompt and ratio → identical PNG bytes (no timestamps or random state are involved)."""

from __future__ import annotations

import hashlib
import io
import textwrap

from PIL import Image, ImageDraw, ImageFont

from media.ai.interface import GeneratedImage, pixel_size

_SHAPES = 12


class OfflineRenderer:
    def generate(self, *, prompt: str, aspect_ratio: str) -> GeneratedImage:
        width, height = pixel_size(aspect_ratio)
        seed = hashlib.sha256(f"{aspect_ratio}\n{prompt}".encode()).digest()
        stream = _ByteStream(seed)
        image = Image.new("RGB", (width, height))
        draw = ImageDraw.Draw(image)
        top, bottom = stream.color(), stream.color()
        for y in range(height):
            t = y / max(1, height - 1)
            draw.line(
                [(0, y), (width, y)], fill=tuple(round(a + (b - a) * t) for a, b in zip(top, bottom, strict=True))
            )
        for _ in range(_SHAPES):
            x0, y0 = stream.below(width), stream.below(height)
            size = 40 + stream.below(max(41, min(width, height) // 3))
            box = (x0, y0, x0 + size, y0 + size)
            if stream.below(2):
                draw.ellipse(box, fill=stream.color(), outline=stream.color(), width=3)
            else:
                draw.rectangle(box, fill=stream.color(), outline=stream.color(), width=3)
        self._caption(draw, prompt, width, height)
        out = io.BytesIO()
        image.save(out, format="PNG", optimize=False)
        return GeneratedImage(data=out.getvalue(), mime_type="image/png", width=width, height=height)

    @staticmethod
    def _caption(draw: ImageDraw.ImageDraw, prompt: str, width: int, height: int) -> None:
        font = ImageFont.load_default(size=28)
        lines = textwrap.wrap(" ".join(prompt.split()), width=max(10, width // 18))[:4]
        if not lines:
            return
        band_top = height - 24 - 36 * len(lines)
        draw.rectangle((0, band_top - 12, width, height), fill=(0, 0, 0))
        for index, line in enumerate(lines):
            draw.text((24, band_top + 36 * index), line, fill=(255, 255, 255), font=font)


class _ByteStream:
    """Deterministic numbers from a seed (a SHA-256 chain), independent of ``random``'s state."""

    def __init__(self, seed: bytes) -> None:
        self.block = seed
        self.position = 0

    def byte(self) -> int:
        if self.position >= len(self.block):
            self.block, self.position = hashlib.sha256(self.block).digest(), 0
        value = self.block[self.position]
        self.position += 1
        return value

    def below(self, limit: int) -> int:
        return ((self.byte() << 8) | self.byte()) % limit

    def color(self) -> tuple[int, int, int]:
        return self.byte(), self.byte(), self.byte()
