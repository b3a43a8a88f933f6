"""The first page of a PDF as a PNG, rendered by PDFium (pypdfium2) in a child process of its own:
``python -m media.pdf_page < document.pdf > page.png``.

PDFium parses hostile files in C, so the renderer never runs inside a worker: this process caps
its own address space and CPU time before it loads the library, renders at most
``PAGE_MAX_SIDE`` pixels on the long side whatever size the page claims, and exits non-zero for
anything it cannot render. The parent (``media.previews.document_first_page``) adds a wall-clock
limit. No Django here: the child starts quickly and imports nothing it does not need."""

from __future__ import annotations

import io
import resource
import sys

PAGE_MAX_SIDE = 1440  # twice the preview's side, so the preview is downscaled, never enlarged
MEMORY_LIMIT_BYTES = 768 * 1024 * 1024
CPU_LIMIT_SECONDS = 20


def _limit_resources() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT_SECONDS, CPU_LIMIT_SECONDS))


def render_first_page(data: bytes) -> bytes:
    """PNG bytes of page 1 of the PDF ``data``, its long side at most ``PAGE_MAX_SIDE`` pixels.
    Raises ``ValueError`` for a file PDFium cannot open or that has no page."""
    import pypdfium2 as pdfium  # noqa: PLC0415 (loaded only once the limits are in place)

    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as error:
        raise ValueError(f"not a readable PDF: {error}") from None
    try:
        if len(document) == 0:
            raise ValueError("the PDF has no page")
        page = document[0]
        width, height = page.get_size()
        if not (width > 0 and height > 0):
            raise ValueError("the first page has no area")
        scale = min(PAGE_MAX_SIDE / max(width, height), 4.0)
        if min(width, height) * scale < 1:
            raise ValueError("the first page is a sliver")
        image = page.render(scale=scale, may_draw_forms=False).to_pil()
    except pdfium.PdfiumError as error:
        raise ValueError(f"the first page cannot be rendered: {error}") from None
    finally:
        document.close()
    out = io.BytesIO()
    image.convert("RGB").save(out, format="PNG")
    return out.getvalue()


def main() -> int:
    _limit_resources()
    data = sys.stdin.buffer.read()
    try:
        png = render_first_page(data)
    except (ValueError, MemoryError) as error:
        print(str(error)[:200], file=sys.stderr)
        return 1
    sys.stdout.buffer.write(png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
