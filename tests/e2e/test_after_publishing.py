"""After publishing, end to end with real web, sandbox, worker and beat processes: a post published on
all twelve platforms (a video on eleven, an image on Google Business, which takes no video) is edited,
its media are edited where the platform changes them in place (the video becomes a photo on Mastodon
and Telegram, Google Business's photo is replaced; the others answer SKIPPED with the reason, a photo
too small for Google Business is refused with nothing queued), then it is removed from its platforms,
with the worker killed with SIGKILL mid-edit and mid-delete.

Each platform ends in the documented state (docs/contract.md, "After publishing"): the platforms
whose API edits take the new text (and YouTube and Pinterest the new title), the others are SKIPPED
with the reason; the platforms whose API deletes no longer have the post, Instagram and TikTok are
SKIPPED; our record stays with its status. Every simulator saw each edit and each delete once:

- the kill lands mid-call by construction (a ``timeout`` fault holds the simulator's answer after it
  acted; the test waits until the call is logged and the action is SENDING, then kills);
- after the kill the action that may have reached the platform is looked up before anything is sent
  again (``PlatformClient.fetch_post``): the edit held on MASTODON is found already made, so it ends
  DONE with no second edit (the simulator's page shows the new text); the delete held on BLUESKY
  finds the post gone, so it ends DONE with no second delete.

The events ``post.updated`` and ``post.unpublished`` name every entry's outcome.

This test needs the simulators' edit and delete endpoints (the platform clients' branch of issue
32): their request-log entries are read as ``{"edit": true | "delete": true, "remoteId", "status"}``."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from crosspost import Client

from tests.e2e.harness import (
    TWELVE_PLATFORMS,
    E2EStack,
    create_post,
    get_post,
    start_stack,
    twelve_platform_posts,
    upload_files,
    wait_for,
)

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

HELD_SECONDS = 30.0
ENV = {
    "PLATFORM_HTTP_TIMEOUT": str(HELD_SECONDS),  # the worker is still waiting when it is killed
    "PUBLISH_LEASE_SECONDS": str(HELD_SECONDS + 5),  # nobody takes the call over before the kill
    "PUBLISH_LOST_TASK_SECONDS": "5",
    "PUBLISH_SWEEP_INTERVAL_SECONDS": "2",
}
ALL = list(TWELVE_PLATFORMS)
EDITS = {"MASTODON", "FACEBOOK", "LINKEDIN", "YOUTUBE", "PINTEREST", "TELEGRAM", "GOOGLE_BUSINESS"}
MEDIA_EDITS = {"MASTODON", "TELEGRAM", "GOOGLE_BUSINESS"}
DELETES = set(ALL) - {"INSTAGRAM", "TIKTOK"}
HELD_EDIT, HELD_DELETE = "MASTODON", "BLUESKY"


@pytest.fixture(scope="module")
def stack() -> Iterator[E2EStack]:
    with start_stack(**ENV) as started:
        yield started


def _publish_everywhere(stack: E2EStack) -> tuple[list[str], dict[str, str]]:
    """The post on all twelve platforms (two posts: the video on eleven, the photo on Google
    Business), published; their ids, and the files they were made with."""
    accounts = {platform: stack.connect_account(platform) for platform in ALL}
    media = upload_files(stack)
    bodies = twelve_platform_posts(stack, accounts, media, "After publishing e2e: the first text")
    post_ids = [str(create_post(stack, body)["postId"]) for body in bodies]
    for post_id in post_ids:
        wait_for(lambda post_id=post_id: _post(stack, post_id)["status"] == "COMPLETED", timeout=180, what="published")
    return post_ids, media


def _post(stack: E2EStack, post_id: str) -> dict[str, Any]:
    return get_post(stack, post_id)


def _entries(stack: E2EStack, post_ids: list[str]) -> dict[str, dict[str, Any]]:
    return {entry["platform"]: entry for post_id in post_ids for entry in _post(stack, post_id)["platforms"]}


def _calls(stack: E2EStack, platform: str, kind: str) -> list[dict[str, Any]]:
    return [entry for entry in stack.sandbox_requests(platform) if entry.get(kind)]


def _hold(stack: E2EStack, platform: str, method: str) -> None:
    fault = requests.post(
        f"{stack.sandbox_url}/sandbox/_control/{platform.lower()}/faults",
        json={"kind": "timeout", "path": "", "method": method, "seconds": HELD_SECONDS},
        timeout=30,
    )
    assert fault.status_code == 201, fault.text


def _action_states(stack: E2EStack, kind: str, request_ids: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
    """Each platform's action of ``kind`` (of the requests ``request_ids`` when given): its status
    and start of sending."""
    query = (
        "SELECT t.platform, a.status, a.sending FROM posts_posttargetaction a "
        "JOIN posts_posttarget t ON t.id = a.target_id WHERE a.kind = %s"
    )
    params: tuple[Any, ...] = (kind,)
    if request_ids:
        query += " AND a.request_id = ANY(%s)"
        params = (kind, list(request_ids))
    rows = stack.sql(query, params)
    return {str(platform): (str(status), str(sending)) for platform, status, sending in rows}


def _kill_while_held(stack: E2EStack, platform: str, kind: str) -> None:
    """Wait until ``platform``'s call is logged by the simulator (it acted, its answer is held) and
    its action is SENDING with its start recorded, and until every other action of ``kind`` has
    its outcome (so the kill interrupts the held call alone: a call on a platform without a lookup
    that the kill interrupted would be sent again, as documented), then kill the worker and start
    a new one."""
    log_kind = "edit" if kind == "EDIT" else "delete"
    wait_for(lambda: _calls(stack, platform, log_kind), timeout=120, what=f"the held {log_kind} on {platform}")

    def others_settled() -> bool:
        states = _action_states(stack, kind)
        return all(status in ("DONE", "FAILED", "SKIPPED") for p, (status, _) in states.items() if p != platform)

    wait_for(others_settled, timeout=HELD_SECONDS / 2, interval=0.2, what=f"every {kind} but {platform}'s to end")
    status, started = _action_states(stack, kind)[platform]
    assert status == "SENDING" and started
    stack.kill_worker()
    stack.start_worker()


def _settled(stack: E2EStack, kind: str, request_ids: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
    def done() -> dict[str, tuple[str, str]] | None:
        states = _action_states(stack, kind, request_ids)
        return states if all(status in ("DONE", "FAILED", "SKIPPED") for status, _ in states.values()) else None

    return dict(wait_for(done, timeout=240, interval=0.5, what=f"every {kind} to settle"))


def _events(stack: E2EStack, name: str, post_id: str) -> list[dict[str, Any]]:
    rows = stack.sql(
        "SELECT payload FROM webhooks_event WHERE name = %s AND payload::jsonb -> 'data' -> 'post' ->> 'id' = %s",
        (name, post_id),
    )
    return [json.loads(row[0])["data"] for row in rows]


def _media_edit(stack: E2EStack, post_ids: list[str], media: dict[str, str]) -> None:
    """The media edited through the SDK: the video post's become a photo on MASTODON and TELEGRAM
    (the others cannot change a published post's media: SKIPPED with the reason), Google Business's
    photo is replaced (and a photo below its 10 kB minimum refused first, nothing queued). Each
    simulator gets one more edit, carrying the new photo."""
    video_post, image_post = post_ids
    sdk = Client(stack.api_key, base_url=f"{stack.web_url}/api/v1")
    too_small = upload_files(stack, (("sample.png", "image/png"),))["sample.png"]
    [(actions_before,)] = stack.sql("SELECT count(*) FROM posts_posttargetaction")
    refused = stack.api("PATCH", f"/social-posts/{image_post}", json={"mediaUrls": [too_small]})
    assert refused.status_code == 400, refused.text
    [message] = refused.json()["message"]
    assert message.startswith("mediaUrls: GOOGLE_BUSINESS takes") and too_small in message
    assert stack.sql("SELECT count(*) FROM posts_posttargetaction") == [(actions_before,)]  # nothing queued
    photo = upload_files(stack, (("sample.jpg", "image/jpeg"),))["sample.jpg"]
    other_photo = upload_files(stack, (("sample.jpg", "image/jpeg"),))["sample.jpg"]
    requests_made = []
    for post_id, body in (
        (video_post, {"content_type": "IMAGE", "media_urls": [photo], "media_alt_texts": ["The new picture"]}),
        (image_post, {"media_urls": [other_photo]}),
    ):
        answer = sdk.edit_post(post_id, **body)
        for item in answer["editReport"]["entries"]:
            expected = "QUEUED" if item["platform"] in MEDIA_EDITS else "SKIPPED"
            assert (item["outcome"], item["fields"]) == (expected, ["media"]), item
            assert expected == "QUEUED" or item["reason"], item
        requests_made.append(str(answer["editReport"]["requestId"]))
    edits = _settled(stack, "EDIT", tuple(requests_made))
    assert {p: s for p, (s, _) in edits.items()} == {p: ("DONE" if p in MEDIA_EDITS else "SKIPPED") for p in ALL}
    for platform in ALL:
        calls = _calls(stack, platform, "edit")
        assert len(calls) == (2 if platform in MEDIA_EDITS else 1 if platform in EDITS else 0), (platform, calls)
    mastodon, telegram, google = (_calls(stack, p, "edit")[-1] for p in ("MASTODON", "TELEGRAM", "GOOGLE_BUSINESS"))
    assert len(mastodon["mediaIds"]) == 1 and mastodon["status"] == 200
    assert (telegram["path"].rsplit("/", 1)[-1], telegram["media"]) == ("editMessageMedia", "photo")
    assert google["media"] == [other_photo]
    entries = _entries(stack, post_ids)
    for platform in MEDIA_EDITS:
        assert entries[platform]["edits"][-1]["status"] == "DONE" and "contentType" not in entries[platform]
    assert entries["MASTODON"]["mediaUrls"] == [photo] and entries["MASTODON"]["mediaAltTexts"] == ["The new picture"]
    assert entries["GOOGLE_BUSINESS"]["mediaUrls"] == [other_photo]
    for platform in set(ALL) - MEDIA_EDITS:  # still the video their platforms show
        assert (entries[platform]["contentType"], entries[platform]["mediaUrls"]) == (
            "VIDEO",
            [media["sample-reel.mp4"]],
        )
    # Mastodon's public page of the status lists its one attachment: now a photo, the new text kept.
    page = requests.get(f"{stack.sandbox_url}{urlsplit(entries['MASTODON']['postUrl']).path}", timeout=30).text
    assert re.findall(r"/original/upload\.(\w+)", page) == ["jpg"]
    assert html.escape("After publishing e2e: the corrected text") in page
    for post_id, request_id in zip(post_ids, requests_made, strict=True):
        [event] = [e for e in _events(stack, "post.updated", post_id) if e["requestId"] == request_id]
        assert {e["platform"]: (e["status"], e["fields"]) for e in event["entries"]} == {
            entry["platform"]: (edits[entry["platform"]][0], ["media"]) for entry in _post(stack, post_id)["platforms"]
        }


def test_a_post_on_twelve_platforms_is_edited_then_unpublished_once_each_despite_kills(stack: E2EStack) -> None:
    post_ids, media = _publish_everywhere(stack)
    before = _entries(stack, post_ids)
    assert sorted(before) == sorted(ALL)

    # --- edit, the worker killed while MASTODON holds its answer -----------------------------
    _hold(stack, HELD_EDIT, "PUT")
    new_text = "After publishing e2e: the corrected text"
    for post_id in post_ids:
        edited = stack.api(
            "PATCH",
            f"/social-posts/{post_id}",
            json={"text": new_text, "platformTitles": [{"platform": "YOUTUBE", "title": "E2E, corrected"}]},
        )
        assert edited.status_code == 200, edited.text
        for item in edited.json()["editReport"]["entries"]:
            assert item["outcome"] == ("QUEUED" if item["platform"] in EDITS else "SKIPPED"), item
    _kill_while_held(stack, HELD_EDIT, "EDIT")
    edits = _settled(stack, "EDIT")
    assert {p: s for p, (s, _) in edits.items()} == {p: ("DONE" if p in EDITS else "SKIPPED") for p in ALL}
    for platform in ALL:  # the held edit included: the lookup after the kill found it made
        calls = _calls(stack, platform, "edit")
        assert len(calls) == (1 if platform in EDITS else 0), (platform, calls)
    after_edit = _entries(stack, post_ids)
    for platform in EDITS:
        assert after_edit[platform]["edits"][-1]["status"] == "DONE"
        assert after_edit[platform]["text"] is None  # the entry now has the post's (new) text
    # The post's public page, served by the simulator (its link names the service's public address).
    page_url = f"{stack.sandbox_url}{urlsplit(after_edit[HELD_EDIT]['postUrl']).path}"
    page = requests.get(page_url, timeout=30)
    assert page.status_code == 200, (page_url, page.text[:300])
    assert html.escape(new_text) in page.text  # the simulator has the new text
    assert after_edit["YOUTUBE"]["youtubeVideoTitle"] == "E2E, corrected"
    for post_id in post_ids:
        [event] = _events(stack, "post.updated", post_id)
        assert {e["platform"]: e["status"] for e in event["entries"]} == {
            entry["platform"]: edits[entry["platform"]][0] for entry in _post(stack, post_id)["platforms"]
        }

    # --- the media, where the platform changes them in place ----------------------------------
    _media_edit(stack, post_ids, media)

    # --- unpublish, the worker killed while BLUESKY holds its answer --------------------------
    _hold(stack, HELD_DELETE, "POST")
    for post_id in post_ids:
        removed = stack.api("POST", f"/social-posts/{post_id}/unpublish", json={})
        assert removed.status_code == 200, removed.text
    _kill_while_held(stack, HELD_DELETE, "DELETE")
    deletes = _settled(stack, "DELETE")
    assert {p: s for p, (s, _) in deletes.items()} == {p: ("DONE" if p in DELETES else "SKIPPED") for p in ALL}
    for platform in ALL:  # the held delete included: the lookup after the kill found the post gone
        calls = _calls(stack, platform, "delete")
        done = [c for c in calls if 200 <= int(c.get("status", 0)) < 300 and not c.get("alreadyGone")]
        assert len(done) == (1 if platform in DELETES else 0), (platform, calls)
        assert len(calls) == len(done), (platform, calls)  # sent once
    final = _entries(stack, post_ids)
    for platform in ALL:
        entry = final[platform]
        assert entry["status"] == "PUBLISHED" and entry["platformPostId"] == before[platform]["platformPostId"]
        assert bool(entry["unpublishedAt"]) == (platform in DELETES)
    for post_id in post_ids:
        record = _post(stack, post_id)
        assert record["status"] == "COMPLETED" and record["unpublishedAt"]
        [event] = _events(stack, "post.unpublished", post_id)
        assert {e["platform"]: e["status"] for e in event["entries"]} == {
            entry["platform"]: deletes[entry["platform"]][0] for entry in record["platforms"]
        }
