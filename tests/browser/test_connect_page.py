"""A real browser clicks through the hosted connect page: Debian's chromium, driven by
Playwright's sync API, against the live server and the MASTODON simulator."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.conf import settings

from accounts.connect import connect_link_create
from accounts.models import SocialAccount
from workspaces.models import Workspace

# Debian's chromium (``apt-get install chromium``; `.ci/run` installs it where it may).
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        shutil.which(CHROMIUM) is None, reason="no chromium on this machine (apt-get install chromium to run this test)"
    ),
]


def test_click_through_the_connect_page_on_a_phone(site: str, workspace: Workspace) -> None:
    from playwright.sync_api import sync_playwright

    url = connect_link_create(workspace_id=workspace.id).url
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shots = [SCREENSHOTS / "connect-choose.png", SCREENSHOTS / "connect-success.png"]
    for shot in shots:  # a file left by an earlier run must not pass for this run's screenshot
        shot.unlink(missing_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
            page = context.new_page()
            page.goto(url)
            assert page.title() == "Connect your accounts"
            assert page.get_by_role("heading", level=1).inner_text() == "Connect your accounts"
            links = page.get_by_role("navigation", name="Platforms").get_by_role("link")
            assert links.count() == 12
            page.screenshot(path=str(SCREENSHOTS / "connect-choose.png"), full_page=True)

            page.get_by_role("link", name="Mastodon", exact=True).click()
            page.wait_for_url(f"{site}/connect/callback/MASTODON?*")

            assert page.get_by_role("heading", level=1).inner_text() == "Mastodon connected"
            assert page.get_by_role("status").is_visible()
            page.screenshot(path=str(SCREENSHOTS / "connect-success.png"), full_page=True)
            shown = page.locator("[data-account-id]")
            assert shown.count() == 1
            shown_id, shown_text = shown.get_attribute("data-account-id"), shown.inner_text()

            page.get_by_role("link", name="Connect another account").click()
            assert page.get_by_role("heading", level=1).inner_text() == "Connect your accounts"
        finally:
            browser.close()
    # The ORM is used only outside Playwright's event loop.
    account = SocialAccount.objects.get(workspace=workspace)
    assert (shown_id, account.platform, account.status) == (account.id, "MASTODON", "active")
    assert shown_text.startswith(account.display_name)
    for shot in shots:
        assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n"), shot
        assert shot.stat().st_size > 10_000, shot  # a rendered page, not an empty image
