"""End to end: connecting an account imports its history; a post published through the service
is tracked, and a sync fills its figures; the sync cooldown answers correctly."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.e2e.harness import E2EStack, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]


def _window() -> str:
    now = dt.datetime.now(dt.UTC)
    start = (now - dt.timedelta(days=179)).strftime("%Y-%m-%dT%H:%M:%SZ")
    end = (now + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"from={start}&to={end}"


def _tracked(e2e: E2EStack) -> list[dict]:
    response = e2e.api("GET", f"/analytics/posts?{_window()}&limit=100&sortBy=PUBLISHED_AT")
    assert response.status_code == 200, response.text
    return list(response.json()["posts"])


def test_connect_import_publish_sync(e2e: E2EStack) -> None:
    account = e2e.connect_account("PINTEREST")
    # the simulated account has two pins inside 180 days and one older: the import brings two
    history = wait_for(lambda: len(_tracked(e2e)) == 2 and _tracked(e2e), timeout=60, what="history import")
    assert all(row["postId"] is None and row["postPlatformId"] is None for row in history)
    assert all(row["metrics"]["views"] is not None for row in history)

    boards = e2e.api("GET", f"/social-accounts/{account['id']}/pinterest-boards").json()["boards"]
    upload = e2e.api("POST", "/upload-urls", json={"files": [{"fileName": "a.jpg", "mimeType": "image/jpeg"}]}).json()
    item = upload["urls"][0]
    from pathlib import Path

    import requests

    image = (Path(__file__).resolve().parents[1] / "fixtures" / "sample.jpg").read_bytes()
    assert requests.put(item["uploadUrl"], data=image, headers={"Content-Type": "image/jpeg"}, timeout=30).ok
    created = e2e.api(
        "POST",
        "/social-posts",
        json={
            "platforms": ["PINTEREST"],
            "contentType": "IMAGE",
            "timezone": "UTC",
            "text": "Fresh from the e2e test",
            "mediaUrls": [item["publicUrl"]],
            "pinterestConnectionIds": [account["id"]],
            "pinterestConfigs": [{"connectionId": account["id"], "boardId": boards[0]["id"], "title": "E2E"}],
        },
    )
    assert created.status_code == 201, created.text
    post_id = created.json()["postId"]
    wait_for(
        lambda: e2e.api("GET", f"/social-posts/{post_id}").json()["status"] == "COMPLETED", timeout=60, what="publish"
    )
    ours = wait_for(
        lambda: [r for r in _tracked(e2e) if r["postId"] == post_id], timeout=30, what="tracked from publication"
    )[0]
    assert ours["postPlatformId"] is not None

    first = e2e.api("POST", "/analytics/sync", json={})
    assert first.status_code == 202
    assert first.json() == {"queued": True, "message": "Refresh queued", "cooldownSecondsRemaining": None}
    ours = wait_for(
        lambda: [r for r in _tracked(e2e) if r["postId"] == post_id and r["metrics"]["views"] is not None],
        timeout=60,
        what="figures after sync",
    )[0]
    assert ours["platform"] == "PINTEREST" and ours["metrics"]["likes"] is not None
    status = wait_for(
        lambda: (s := e2e.api("GET", "/analytics/sync-status").json())["syncInProgress"] is False and s,
        timeout=60,
        what="sync finished",
    )
    assert [(a["accountId"], a["status"]) for a in status["accounts"]] == [(account["id"], "IDLE")]
    assert status["lastSyncedAt"] is not None and status["accounts"][0]["lastSyncedAt"] is not None

    # Inside the 10-minute cooldown: 202 again, nothing queued, the seconds remaining.
    again = e2e.api("POST", "/analytics/sync", json={})
    assert again.status_code == 202
    body = again.json()
    assert body["queued"] is False and 0 < body["cooldownSecondsRemaining"] <= 600
    assert (
        body["message"] == f"A refresh was requested recently; try again in {body['cooldownSecondsRemaining']} seconds"
    )
    overview = e2e.api("GET", f"/analytics/overview?{_window()}").json()
    assert overview["postsCount"]["value"] == 3
    assert overview["views"]["value"] == sum(r["metrics"]["views"] or 0 for r in _tracked(e2e))
