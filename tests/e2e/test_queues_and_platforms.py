"""Posting queues and ``GET /platforms`` end to end (issue 18 parts 3 and 4), with real web, sandbox,
worker and beat processes, over HTTP only.

- Queues: set on two accounts and read back, their next free slots converted from the queue's
  wall-clock times, concurrent ``queue: true`` creates against the real web process (gunicorn
  workers and threads) each given a slot of its own, and a queued post published by beat's
  dispatcher and the worker at its slot, never before it.
- ``GET /platforms``: for every platform, what the catalogue says agrees with what ``/validate``
  does: a text exactly at the limit (counted as the catalogue says it is counted) passes and one
  more refuses it, and the thread and firstComment flags and limits hold.

One module, so one stack: a slot has minute resolution, so a post queued now goes out at the next
whole minute, up to ~65 s away. That wait is what is tested (the post must go out at its slot through
beat and the worker), so it is not shortened; instead the post is queued as soon as the stack is up
(a module-scoped autouse fixture) and the module's other tests run while its slot approaches. The
test of its publication polls its state until it is published, bounded by a deadline."""

from __future__ import annotations

import datetime as dt
import functools
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple
from zoneinfo import ZoneInfo

import pytest
import requests

from posts.payloads import CONNECTION_FIELDS, PLATFORM_VALUES
from posts.queues import DAYS
from tests.e2e.harness import E2EStack, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SLOT_ZONE = "Asia/Kathmandu"  # UTC+05:45: the slot is given in local wall-clock time and converted
SLOT_MARGIN_SECONDS = 5.0  # time to set the queue and create the post before the slot comes
PUBLISH_GRACE_SECONDS = 90.0  # after the slot: beat's next dispatch and the worker's call
SLOT_TEXT = "Queue e2e: published at its slot"


def parse(instant: str) -> dt.datetime:
    return dt.datetime.fromisoformat(instant.replace("Z", "+00:00"))


# --- the post queued at the next whole minute -----------------------------------------------------


class SlotPost(NamedTuple):
    post_id: str
    slot: dt.datetime
    account: dict[str, Any]


def _next_whole_minute(margin: float) -> dt.datetime:
    soonest = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=margin)
    return (soonest + dt.timedelta(minutes=1)).replace(second=0, microsecond=0)


def _queue_at_next_minute(stack: E2EStack, account: dict[str, Any]) -> SlotPost:
    """Give the account one slot, at the next whole minute at least SLOT_MARGIN_SECONDS away, and
    create a queued post, which must take it. Should the machine stall past the slot before the
    create claims it (the queue then answers that slot a week later), that post is deleted and the
    next minute is taken: the test never depends on how fast these calls are."""
    for _ in range(3):
        slot = _next_whole_minute(SLOT_MARGIN_SECONDS)
        local = slot.astimezone(ZoneInfo(SLOT_ZONE))
        queue = {"timezone": SLOT_ZONE, "slots": [{"day": DAYS[local.weekday()], "time": local.strftime("%H:%M")}]}
        put = stack.api("PUT", f"/social-accounts/{account['id']}/queue", json=queue)
        assert put.status_code == 200 and put.json() == queue, put.text
        created = stack.create_text_post(account, SLOT_TEXT, queue=True)
        assert created.status_code == 201, created.text
        body = created.json()
        assert (body["status"], body["isScheduled"]) == ("SCHEDULED", True)
        if parse(body["scheduledAt"]) == slot:
            return SlotPost(str(body["postId"]), slot, account)
        assert stack.api("DELETE", f"/social-posts/{body['postId']}").status_code == 200
    raise AssertionError("the queued post never took the next minute's slot")


@pytest.fixture(scope="module", autouse=True)
def slot_post(e2e: E2EStack) -> SlotPost:
    """Queued before the module's first test, so its slot comes while the others run."""
    return _queue_at_next_minute(e2e, e2e.connect_account("MASTODON"))


def test_a_queued_post_is_published_at_its_slot_through_beat_and_the_worker(e2e: E2EStack, slot_post: SlotPost) -> None:
    post_id, slot, _ = slot_post

    def published() -> dict[str, Any] | None:
        record = e2e.api("GET", f"/social-posts/{post_id}").json()
        return record if record["status"] in ("COMPLETED", "PARTIAL_FAILURE", "FAILED") else None

    left = (slot - dt.datetime.now(dt.UTC)).total_seconds()
    record = wait_for(
        published, timeout=max(left, 0) + PUBLISH_GRACE_SECONDS, interval=0.5, what="the queued post published"
    )
    assert record["status"] == "COMPLETED", record
    assert parse(record["scheduledAt"]) == slot
    [entry] = record["platforms"]
    assert entry["status"] == "PUBLISHED" and parse(entry["publishedAt"]) >= slot
    sends = [
        call
        for call in e2e.sandbox_requests("MASTODON")
        if call.get("publish") and call.get("text") == SLOT_TEXT and 200 <= int(call["status"]) < 300
    ]
    # sent once, to the platform, and not before its slot
    assert [call["remoteId"] for call in sends] == [entry["platformPostId"]]
    assert sends[0]["at"] >= slot.timestamp()


# --- queues: read back, next slots, concurrent claims ---------------------------------------------

QUEUE_ZONE = "Europe/Berlin"
QUEUE_TIMES = ("20:00", "08:00", "16:00", "12:00")  # sent unordered; never inside a DST gap
CONCURRENT_CREATES = 8


def _day_order(slot: dict[str, str]) -> tuple[int, str]:
    return DAYS.index(slot["day"]), slot["time"]


def test_queues_read_back_and_concurrent_queued_creates_never_share_a_slot(e2e: E2EStack) -> None:
    a, b = e2e.connect_account("MASTODON"), e2e.connect_account("BLUESKY")
    zone = ZoneInfo(QUEUE_ZONE)
    # Slots two to four local days ahead: every one is far in the future whenever the test runs.
    today = dt.datetime.now(zone).date()
    days = [today + dt.timedelta(days=n) for n in (2, 3, 4)]
    slots = [{"day": DAYS[day.weekday()], "time": time} for day in days for time in QUEUE_TIMES]
    stored = {"timezone": QUEUE_ZONE, "slots": sorted(slots, key=_day_order)}
    for account in (a, b):
        url = f"/social-accounts/{account['id']}/queue"
        put = e2e.api("PUT", url, json={"timezone": QUEUE_ZONE, "slots": [*reversed(slots), slots[0]]})
        assert put.status_code == 200 and put.json() == stored, put.text  # ordered, the repeated slot once
        assert e2e.api("GET", url).json() == stored
    expected = sorted(
        dt.datetime.combine(day, dt.time.fromisoformat(time), tzinfo=zone).astimezone(dt.UTC)
        for day in days
        for time in QUEUE_TIMES
    )
    for account in (a, b):
        upcoming = e2e.api("GET", f"/social-accounts/{account['id']}/queue/next", params={"count": len(expected)})
        assert upcoming.status_code == 200, upcoming.text
        assert [parse(s) for s in upcoming.json()["slots"]] == expected

    start = threading.Barrier(CONCURRENT_CREATES)
    body = {
        "contentType": "TEXT",
        "timezone": QUEUE_ZONE,
        "text": "Queue e2e: one of several at once",
        "queue": True,
        "platforms": ["MASTODON", "BLUESKY"],
        "mastodonConnectionIds": [a["id"]],
        "blueskyConnectionIds": [b["id"]],
    }
    headers = {"Authorization": f"Bearer {e2e.api_key}"}

    def create(_: int) -> requests.Response:
        start.wait(timeout=60)  # every request is sent at once
        return requests.post(f"{e2e.web_url}/api/v1/social-posts", json=body, headers=headers, timeout=60)

    with ThreadPoolExecutor(CONCURRENT_CREATES) as pool:
        responses = list(pool.map(create, range(CONCURRENT_CREATES)))
    assert [r.status_code for r in responses] == [201] * CONCURRENT_CREATES, [r.text for r in responses]
    taken = sorted(parse(r.json()["scheduledAt"]) for r in responses)
    assert taken == expected[:CONCURRENT_CREATES]  # each its own slot, the earliest ones, none twice
    assert all(r.json()["isScheduled"] for r in responses)
    shared = e2e.sql(
        "SELECT t.account_id, p.scheduled_at FROM posts_posttarget t JOIN posts_post p ON p.id = t.post_id "
        "WHERE t.account_id = ANY(%s) GROUP BY 1, 2 HAVING count(*) > 1",
        ([a["id"], b["id"]],),
    )
    assert shared == []
    for account in (a, b):
        left = e2e.api("GET", f"/social-accounts/{account['id']}/queue/next", params={"count": 4}).json()
        assert [parse(s) for s in left["slots"]] == expected[CONCURRENT_CREATES:]


# --- GET /platforms against /validate -------------------------------------------------------------

# Texts of an exact length as each counting counts it, made so that another counting would not
# agree: code points that are half as many graphemes, graphemes of several code points, characters
# X weighs 2.
_COMBINING = "e\u0301"  # 2 code points, 1 grapheme
_THUMB = "\U0001f44d\U0001f3fd"  # 1 grapheme, 2 code points, 8 UTF-8 bytes
_FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # 1 grapheme, 25 UTF-8 bytes
_WIDE = "\u4e2d"  # X weighs it 2


def text_of(counting: str, length: int) -> str:
    if counting == "graphemes":
        return _THUMB * length
    if counting == "x_weighted":
        return _WIDE * (length // 2) + "a" * (length % 2)
    assert counting == "chars", counting
    return _COMBINING * (length // 2) + "a" * (length % 2)


@pytest.fixture(scope="module")
def catalogue(e2e: E2EStack) -> dict[str, dict[str, Any]]:
    response = e2e.api("GET", "/platforms")
    assert response.status_code == 200, response.text
    return {entry["platform"]: entry for entry in response.json()["platforms"]}


@pytest.fixture(scope="module")
def every_account(e2e: E2EStack) -> dict[str, dict[str, Any]]:
    return {platform: e2e.connect_account(platform) for platform in PLATFORM_VALUES}


@pytest.fixture(scope="module")
def video_url(e2e: E2EStack) -> str:
    response = e2e.api("POST", "/upload-urls", json={"files": [{"fileName": "clip.mp4", "mimeType": "video/mp4"}]})
    assert response.status_code in (200, 201), response.text
    [item] = response.json()["urls"]
    put = requests.put(
        item["uploadUrl"], data=(FIXTURES / "sample-reel.mp4").read_bytes(), headers={"Content-Type": "video/mp4"}
    )
    assert put.status_code in (200, 201, 204), put.text
    return str(item["publicUrl"])


class Checker:
    """``/validate`` payloads for one platform that break no rule but the one under test."""

    def __init__(self, stack: E2EStack, platform: str, account: dict[str, Any], video_url: str) -> None:
        self.stack, self.platform, self.account, self.video_url = stack, platform, account, video_url

    def payload(self, *, media: bool, text: str = "hello", **extra: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "contentType": "VIDEO" if media else "TEXT",
            "timezone": "UTC",
            "text": text,
            "platforms": [self.platform],
            CONNECTION_FIELDS[self.platform]: [self.account["id"]],
            **({"mediaUrls": [self.video_url]} if media else {}),
        }
        if self.platform == "TIKTOK":
            body["tiktokConfigs"] = [{"connectionId": self.account["id"], "privacyLevel": "SELF_ONLY"}]
        if self.platform == "PINTEREST":
            body["pinterestConfigs"] = [{"connectionId": self.account["id"], "boardId": self.board}]
        return {**body, **extra}

    @functools.cached_property
    def board(self) -> str:
        boards = self.stack.api("GET", f"/social-accounts/{self.account['id']}/pinterest-boards").json()
        return str((boards["boards"] if isinstance(boards, dict) else boards)[0]["id"])

    def issues(self, payload: dict[str, Any]) -> list[tuple[str | None, str | None, str]]:
        response = self.stack.api("POST", "/social-posts/validate", json=payload)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["valid"] is (not body["issues"])
        return [(i["platform"], i.get("field"), i["message"]) for i in body["issues"]]


def test_the_catalogue_lists_every_platform_and_needs_a_key(e2e: E2EStack, catalogue: dict[str, Any]) -> None:
    assert list(catalogue) == PLATFORM_VALUES
    assert requests.get(f"{e2e.web_url}/api/v1/platforms", timeout=30).status_code == 401


@pytest.mark.parametrize("platform", PLATFORM_VALUES)
def test_the_catalogue_agrees_with_what_validate_accepts(
    e2e: E2EStack,
    catalogue: dict[str, dict[str, Any]],
    every_account: dict[str, dict[str, Any]],
    video_url: str,
    platform: str,
) -> None:
    entry = catalogue[platform]
    check = Checker(e2e, platform, every_account[platform], video_url)
    text = entry["text"]
    # A platform that takes no TEXT post is checked with a video post.
    media = "TEXT" not in entry["contentTypes"]
    assert not media or "VIDEO" in entry["contentTypes"], entry
    if media:
        text_post = check.issues(check.payload(media=False))
        assert (platform, None, f"{platform} does not accept TEXT posts") in text_post
        assert ((platform, None, f"{platform} requires media") in text_post) is entry["media"]["required"]
    # Text: at the limit it passes, one more is refused naming the platform and the length; with
    # media, the limit with media.
    cases = [(media, text["limitWithMedia"] if media and text["limitWithMedia"] else text["limit"])]
    if not media and text["limitWithMedia"] is not None:
        assert "VIDEO" in entry["contentTypes"], entry
        cases.append((True, text["limitWithMedia"]))
    for with_media, limit in cases:
        assert check.issues(check.payload(media=with_media, text=text_of(text["counting"], limit))) == []
        over = check.issues(check.payload(media=with_media, text=text_of(text["counting"], limit + 1)))
        assert over == [(platform, "text", f"{platform} text is {limit + 1} characters; the limit is {limit}")]
    if text["byteLimit"] is not None:
        # within the counted limit (one grapheme each) but not within the bytes
        per = len(_FAMILY.encode())
        fits = _FAMILY * (text["byteLimit"] // per)
        assert check.issues(check.payload(media=media, text=fits)) == []
        too_big = fits + _FAMILY
        assert check.issues(check.payload(media=media, text=too_big)) == [
            (
                platform,
                "text",
                f"{platform} text is {len(too_big.encode())} bytes in UTF-8; the limit is {text['byteLimit']}",
            )
        ]

    # Thread: accepted up to maxItems where supported, refused naming the platform elsewhere.
    thread = entry["thread"]
    if thread["supported"]:
        items = [{"text": f"reply {n}"} for n in range(thread["maxItems"])]
        assert check.issues(check.payload(media=media, thread=items)) == []
        too_many = check.issues(check.payload(media=media, thread=[*items, {"text": "one more"}]))
        assert [field for _, field, _ in too_many] == ["thread"]
    else:
        assert thread["maxItems"] is None
        refused = check.issues(check.payload(media=media, thread=[{"text": "reply"}]))
        assert len(refused) == 1 and refused[0][:2] == (platform, "thread")
        assert refused[0][2].startswith(f"thread: {platform} does not publish threads")

    # First comment: up to textLimit (counted as the platform's text) where supported, else refused.
    comment = entry["firstComment"]
    if comment["supported"]:
        limit = comment["textLimit"]
        at = text_of(text["counting"], limit)
        assert check.issues(check.payload(media=media, firstComment={"text": at})) == []
        one_more = text_of(text["counting"], limit + 1)
        assert check.issues(check.payload(media=media, firstComment={"text": one_more})) == [
            (
                platform,
                "firstComment",
                f"firstComment: {platform} comment is {limit + 1} characters; the limit is {limit}",
            )
        ]
        own = [{"platform": platform, "text": one_more}]
        assert check.issues(check.payload(media=media, platformFirstComments=own)) == [
            (
                platform,
                "platformFirstComments",
                f"platformFirstComments: {platform} comment is {limit + 1} characters; the limit is {limit}",
            )
        ]
    else:
        assert comment["textLimit"] is None
        refused = check.issues(check.payload(media=media, firstComment={"text": "first"}))
        assert len(refused) == 1 and refused[0][:2] == (platform, "firstComment")
        assert refused[0][2].startswith(f"firstComment: {platform} has no comment API")
