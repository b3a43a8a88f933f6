"""Document previews: a PDF's first page becomes its WebP preview; PowerPoint and Word files get
none, and a post lists only the previews that exist (never a null in ``previewUrls``). A broken
or hostile PDF fails its preview cleanly, within a time limit."""

from __future__ import annotations

import io
from typing import Any

import pypdfium2 as pdfium
import pytest
from PIL import Image

import media.previews
from media.models import MediaFile
from media.storage import get_media_storage
from media.tasks import make_preview
from tests.factories.media import MediaFileFactory
from tests.factories.posts import account

pytestmark = pytest.mark.django_db

PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def pdf_bytes(*pages: tuple[float, float]) -> bytes:
    document = pdfium.PdfDocument.new()
    for width, height in pages:
        document.new_page(width, height)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def stored_document(workspace: Any, data: bytes, *, mime_type: str = "application/pdf", name: str = "deck.pdf") -> Any:
    row = MediaFileFactory(workspace=workspace, kind="document", file_name=name, mime_type=mime_type, uploaded=True)
    get_media_storage().save(row.key, io.BytesIO(data), content_type=mime_type)
    return row


def preview_size(row: MediaFile) -> tuple[int, int]:
    row.refresh_from_db()
    with get_media_storage().open(row.preview_key) as stored, Image.open(io.BytesIO(stored.read())) as image:
        assert image.format == "WEBP"
        return image.size


@pytest.mark.parametrize(
    ("pages", "expected"),
    [
        ([(595, 842), (842, 595)], (509, 720)),  # A4 portrait first: only page 1 counts
        ([(960, 540)], (720, 405)),  # a 16:9 slide
    ],
)
def test_a_pdf_previews_its_first_page(workspace: Any, pages: list[tuple[float, float]], expected: Any) -> None:
    row = stored_document(workspace, pdf_bytes(*pages))
    assert make_preview(row.id) == "ready"
    assert make_preview(row.id) == "ready"  # a second run changes nothing
    assert preview_size(row) == expected


@pytest.mark.parametrize(("mime_type", "name"), [(PPTX, "deck.pptx"), (DOCX, "memo.docx")])
def test_powerpoint_and_word_files_get_no_preview(workspace: Any, mime_type: str, name: str) -> None:
    row = stored_document(workspace, b"PK\x03\x04 an office zip", mime_type=mime_type, name=name)
    assert make_preview(row.id) == "n/a"
    row.refresh_from_db()
    assert (row.preview_status, row.preview_key) == ("n/a", "")


@pytest.mark.parametrize(
    "data",
    [
        b"%PDF-1.7\n this is not a PDF at all",
        pdf_bytes((595, 842))[:200],  # truncated
        b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF",  # no pages
    ],
    ids=["garbage", "truncated", "no-pages"],
)
def test_a_broken_pdf_fails_its_preview_cleanly(workspace: Any, data: bytes) -> None:
    row = stored_document(workspace, data)
    assert make_preview(row.id) == "failed"
    row.refresh_from_db()
    assert (row.preview_status, row.preview_key) == ("failed", "")


def test_a_pdf_that_outlasts_the_time_limit_fails_its_preview(workspace: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(media.previews, "PAGE_TIMEOUT_SECONDS", 0.001)  # no renderer starts that fast
    row = stored_document(workspace, pdf_bytes((595, 842)))
    assert make_preview(row.id) == "failed"


def test_the_renderer_runs_with_capped_memory_and_cpu() -> None:
    from media import pdf_page

    assert pdf_page.MEMORY_LIMIT_BYTES <= 1024**3 and pdf_page.CPU_LIMIT_SECONDS <= 30
    with pytest.raises(ValueError):
        pdf_page.render_first_page(b"%PDF-1.7 nothing")


def test_a_document_post_lists_its_pdf_preview_and_never_a_null(api: Any, workspace: Any) -> None:
    linkedin = account(workspace, "LINKEDIN")
    pdf = stored_document(workspace, pdf_bytes((960, 540)))
    deck = stored_document(workspace, b"PK\x03\x04", mime_type=PPTX, name="deck.pptx")
    url = "/api/v1/social-posts"
    ids = []
    for document in (pdf, deck):
        created = api.post(
            url,
            {
                "contentType": "DOCUMENT",
                "text": "Our deck",
                "timezone": "UTC",
                "platforms": ["LINKEDIN"],
                "linkedinConnectionIds": [linkedin.id],
                "mediaUrls": [document.public_url],
                "linkedinConfigs": [{"connectionId": linkedin.id, "documentTitle": "Deck"}],
                "saveAsDraft": True,
            },
            format="json",
        )
        assert created.status_code == 201, created.json()
        ids.append(created.json()["postId"])

    def previews(post_id: str) -> tuple[Any, Any]:
        record = api.get(f"{url}/{post_id}").json()
        return record["previewUrls"], record["platforms"][0]["previewUrls"]

    assert previews(ids[0]) == ([], [])  # none made yet: left out, not null
    assert make_preview(pdf.id) == "ready"
    pdf.refresh_from_db()
    expected = get_media_storage().public_url(pdf.preview_key)
    assert previews(ids[0]) == ([expected], [expected])

    assert make_preview(deck.id) == "n/a"
    assert previews(ids[1]) == ([], [])
