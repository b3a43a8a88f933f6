"""The branded connect pages in a real browser (issue 31): the logo, uploaded through the media
upload URLs and served from storage, shows; a light accent colour keeps its button text
readable; and axe-core finds no accessibility violation on the branded chooser, the credentials
form and the error page."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import requests
from PIL import Image

from accounts.branding import branding_set
from accounts.connect import connect_link_create
from audit.actors import system_actor
from media.services import UploadRequest, upload_urls_create
from tests.browser.test_connect_page import CHROMIUM, CHROMIUM_ARGS
from workspaces.models import Workspace

TEST_ACTOR = system_actor("tests")

AXE = Path(__file__).parent / "vendor" / "axe-core-4.14.1" / "axe.min.js"
AXE_SRI = "sha256-KTSJmUUM3yhJqOcLeRL8LahahJ2jnA0NU5T1HUqe2Vw="  # axe-core 4.14.1's sri-history.json
# WCAG 2.1 A and AA, and axe's best practices (landmarks, headings, regions).
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]}}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        shutil.which(CHROMIUM) is None, reason="no chromium on this machine (apt-get install chromium to run this test)"
    ),
]


def _axe_source() -> str:
    data = AXE.read_bytes()
    assert "sha256-" + base64.b64encode(hashlib.sha256(data).digest()).decode() == AXE_SRI, "axe.min.js was altered"
    return data.decode()


def _uploaded_logo(workspace: Workspace) -> str:
    """A PNG logo uploaded the way a client uploads media: an upload URL, then one PUT to it."""
    buffer = io.BytesIO()
    Image.new("RGB", (240, 80), (255, 215, 0)).save(buffer, format="PNG")
    [ticket] = upload_urls_create(
        workspace_id=workspace.id, files=[UploadRequest(file_name="acme-logo.png", mime_type="image/png")]
    )
    put = requests.put(ticket.upload_url, data=buffer.getvalue(), headers={"Content-Type": "image/png"}, timeout=30)
    assert put.status_code == 200, put.text
    return ticket.public_url


def _violations(page: Any, axe: str) -> list[dict[str, Any]]:
    page.add_script_tag(content=axe)
    result = page.evaluate("options => axe.run(document, options)", AXE_OPTIONS)
    return [
        {"id": v["id"], "impact": v["impact"], "nodes": [n["html"] for n in v["nodes"]]} for v in result["violations"]
    ]


def test_the_branded_pages_show_the_branding_and_pass_axe(
    site: str, workspace: Workspace, settings: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    settings.STORAGE = "local"
    settings.MEDIA_ROOT = str(tmp_path / "media")
    logo_url = _uploaded_logo(workspace)
    branding_set(
        actor=TEST_ACTOR,
        workspace_id=workspace.id,
        display_name="Acme Scheduler",
        logo_url=logo_url,
        accent_color="#ffd700",  # light: the button text must turn black
        support_url="https://help.acme.example/connect",
        platforms=["MASTODON", "BLUESKY", "TELEGRAM"],
    )
    url = connect_link_create(workspace_id=workspace.id).url
    axe = _axe_source()
    found: dict[str, list[dict[str, Any]]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True).new_page()
            page.goto(url)
            assert page.title() == "Connect your accounts · Acme Scheduler"
            logo = page.get_by_role("banner").get_by_role("img", name="Acme Scheduler")
            assert logo.evaluate("img => img.complete && img.naturalWidth") == 240  # served from storage
            links = page.get_by_role("navigation", name="Platforms").get_by_role("link")
            assert links.all_inner_texts() == ["Bluesky", "Mastodon", "Telegram"]
            help_link = page.get_by_role("contentinfo").get_by_role("link")
            assert help_link.get_attribute("href") == "https://help.acme.example/connect"
            found["chooser"] = _violations(page, axe)

            page.goto(f"{url}/BLUESKY?manual=1")
            button = page.get_by_role("button", name="Connect Bluesky")
            colours = button.evaluate("b => [getComputedStyle(b).backgroundColor, getComputedStyle(b).color]")
            assert colours == ["rgb(255, 215, 0)", "rgb(0, 0, 0)"]
            found["credentials form"] = _violations(page, axe)

            page.goto(f"{url}/TIKTOK")  # not offered: the branded error page
            assert page.get_by_role("heading", level=1).inner_text() == "Not offered"
            found["error page"] = _violations(page, axe)
        finally:
            browser.close()
    assert found == {"chooser": [], "credentials form": [], "error page": []}, json.dumps(found, indent=1)
