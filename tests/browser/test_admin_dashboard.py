"""Staff in a real browser: Debian's chromium logs into the admin on a live server, opens the
dashboard over seeded data, and sees it styled (every stylesheet answers 200) with the figures
the database holds. The screenshot is kept under var/screenshots/ for a human look."""

from __future__ import annotations

import shutil

import pytest
from django.contrib.auth import get_user_model

from tests.browser.test_connect_page import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS
from tests.factories import WorkspaceFactory
from tests.ops.seed import expected_figures, seed

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        shutil.which(CHROMIUM) is None, reason="no chromium on this machine (apt-get install chromium to run this test)"
    ),
]

PASSWORD = "staff-password-for-the-browser-test"


def test_staff_log_in_and_read_the_dashboard(site: str) -> None:
    from playwright.sync_api import sync_playwright

    get_user_model().objects.create_superuser("ops", "ops@example.com", PASSWORD)
    seed(WorkspaceFactory(name="Acme"), scale=2)
    seed(WorkspaceFactory(name="Globex"))
    expected = expected_figures()
    shot = SCREENSHOTS / "admin-dashboard.png"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot.unlink(missing_ok=True)  # a file left by an earlier run must not pass for this run's
    stylesheets: dict[str, int] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on(
                "response",
                lambda response: (
                    stylesheets.__setitem__(response.url, response.status)
                    if response.request.resource_type == "stylesheet"
                    else None
                ),
            )
            page.goto(f"{site}/admin/")
            page.get_by_label("Username").fill("ops")
            page.get_by_label("Password").fill(PASSWORD)
            page.get_by_role("button", name="Log in").click()
            page.wait_for_url(f"{site}/admin/")
            page.get_by_role("link", name="Dashboard").click()
            page.wait_for_url(f"{site}/admin/dashboard/")
            assert page.get_by_role("heading", name="Dashboard: all workspaces").is_visible()
            shown = {
                element.get_attribute("data-figure"): element.inner_text().strip()
                for element in page.locator("[data-figure]").all()
            }
            # The admin's own stylesheet applies (a styled page, not bare HTML): its header is dark.
            header_background = page.locator("#header").evaluate("e => getComputedStyle(e).backgroundColor")
            chart_bars = page.locator("svg.chart rect").count()
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert any(url.endswith("/static/admin/css/base.css") for url in stylesheets), stylesheets
    assert any(url.endswith("/static/core/dashboard.css") for url in stylesheets), stylesheets
    assert set(stylesheets.values()) == {200}, stylesheets
    assert header_background not in ("rgba(0, 0, 0, 0)", "transparent", "rgb(255, 255, 255)"), header_background
    assert {name: int(shown[name]) for name in expected} == expected
    assert chart_bars >= 3  # completed today, failed today, partial two days ago
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert shot.stat().st_size > 20_000
