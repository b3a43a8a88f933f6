"""Posting queues (issue 18): PUT/GET /social-accounts/{id}/queue, GET …/queue/next and
``queue: true`` on create."""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.db import connection
from rest_framework.test import APIClient

from accounts.models import PostingQueue, SocialAccount
from posts.models import Post, PostStatus
from posts.recurrence.rules import to_instant
from posts.services import creation
from tests.factories.accounts import SocialAccountFactory
from tests.factories.posts import PostFactory, PostTargetFactory
from workspaces.models import Workspace

# A Wednesday; Europe/Berlin is on CET (UTC+1).
NOW = dt.datetime(2026, 3, 4, 12, 0, tzinfo=dt.UTC)
BERLIN = {"timezone": "Europe/Berlin", "slots": [{"day": "FRI", "time": "17:00"}, {"day": "MON", "time": "09:30"}]}
POSTS = "/api/v1/social-posts"


def url(account_id: str, tail: str = "") -> str:
    return f"/api/v1/social-accounts/{account_id}/queue{tail}"


def instant(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture
def frozen() -> Iterator[None]:
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def masto(workspace: Workspace) -> SocialAccount:
    return SocialAccountFactory(workspace=workspace, platform="MASTODON")


def queued_body(account: SocialAccount, **extra: Any) -> dict[str, Any]:
    return {
        "contentType": "TEXT",
        "text": "From the queue",
        "timezone": "UTC",
        "platforms": [account.platform],
        f"{account.platform.lower()}ConnectionIds": [account.id],
        "queue": True,
        **extra,
    }


# --- the queue resource ----------------------------------------------------------------------


def test_put_stores_the_queue_and_get_reads_it(api: APIClient, masto: SocialAccount) -> None:
    assert api.get(url(masto.id)).json() == {"timezone": None, "slots": []}
    response = api.put(url(masto.id), BERLIN, format="json")
    stored = {"timezone": "Europe/Berlin", "slots": [{"day": "MON", "time": "09:30"}, {"day": "FRI", "time": "17:00"}]}
    assert response.status_code == 200
    assert response.json() == stored
    assert api.get(url(masto.id)).json() == stored
    replaced = {"timezone": "America/New_York", "slots": [{"day": "SUN", "time": "00:00"}]}
    assert api.put(url(masto.id), replaced, format="json").json() == replaced
    assert api.get(url(masto.id)).json() == replaced
    assert api.put(url(masto.id), {"timezone": "UTC", "slots": []}, format="json").json() == {
        "timezone": "UTC",
        "slots": [],
    }
    assert PostingQueue.objects.get(account=masto).slots.count() == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"timezone": "Europe/Berlin", "slots": [{"day": "MONDAY", "time": "09:30"}]}, "day"),
        ({"timezone": "Europe/Berlin", "slots": [{"day": "MON", "time": "25:00"}]}, "time"),
        ({"timezone": "Europe/Berlin", "slots": [{"day": "MON", "time": "9:30"}]}, "time"),
        ({"timezone": "Europe/Berlin", "slots": [{"day": "MON", "time": "09:30:00"}]}, "time"),
        ({"timezone": "Europe/Berlin", "slots": [{"day": "MON", "time": 930}]}, "time"),
        ({"timezone": "Europe/Berlin", "slots": [{"day": "MON"}]}, "time"),
        ({"timezone": "Mars/Olympus", "slots": []}, "timezone"),
        ({"timezone": 5, "slots": []}, "timezone"),
        ({"slots": []}, "timezone"),
        ({"timezone": "UTC"}, "slots"),
        ({"timezone": "UTC", "slots": "MON 09:30"}, "slots"),
        ({"timezone": "UTC", "slots": ["MON 09:30"]}, "slots"),
        ([], None),
        ("x", None),
    ],
)
def test_put_refuses_bad_input_naming_the_field(api: APIClient, masto: SocialAccount, body: Any, field: str) -> None:
    response = api.put(url(masto.id), body, format="json")
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "validation_error"
    if field:
        assert any(field in message for message in response.json()["message"]), response.json()
    assert not PostingQueue.objects.exists()


def test_put_refuses_more_slots_than_the_maximum(api: APIClient, masto: SocialAccount, settings: Any) -> None:
    limit = settings.POSTING_QUEUE_MAX_SLOTS  # documented as the list's maxItems
    slots = [
        {"day": day, "time": f"{hour:02d}:00"} for day in ("MON", "TUE", "WED", "THU", "FRI") for hour in range(24)
    ]
    response = api.put(url(masto.id), {"timezone": "UTC", "slots": slots[: limit + 1]}, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == [f"slots: Ensure this field has no more than {limit} elements."]
    assert api.put(url(masto.id), {"timezone": "UTC", "slots": slots[:limit]}, format="json").status_code == 200


def test_a_slot_given_twice_is_one_slot(api: APIClient, masto: SocialAccount) -> None:
    slots = [{"day": "MON", "time": "09:30"}, {"day": "TUE", "time": "10:00"}, {"day": "MON", "time": "09:30"}]
    response = api.put(url(masto.id), {"timezone": "UTC", "slots": slots}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["slots"] == slots[:2]


def test_permissions_and_other_workspaces(
    client_for: Callable[..., APIClient], masto: SocialAccount, other_workspace: Workspace, anon: APIClient
) -> None:
    assert client_for("viewer").get(url(masto.id)).status_code == 200
    assert client_for("viewer").get(url(masto.id, "/next")).status_code == 200
    for role in ("editor", "contributor", "viewer"):
        response = client_for(role).put(url(masto.id), BERLIN, format="json")
        assert response.status_code == 403
        body = response.json()
        assert (body["code"], body["requiredPermission"], body["role"]) == (
            "permission_denied",
            "accounts.manage",
            role,
        )
    for path in (url(masto.id), url(masto.id, "/next")):
        assert anon.get(path).status_code == 401
    stranger = SocialAccountFactory(workspace=other_workspace)
    admin = client_for("admin")
    for response in (
        admin.get(url(stranger.id)),
        admin.put(url(stranger.id), BERLIN, format="json"),
        admin.get(url(stranger.id, "/next")),
        admin.get(url("acc_nothing")),
    ):
        assert response.status_code == 404
        assert response.json()["message"] == "Account not found"
    assert not PostingQueue.objects.exists()


def test_put_is_idempotent_with_a_key(api: APIClient, masto: SocialAccount) -> None:
    first = api.put(url(masto.id), BERLIN, format="json", HTTP_IDEMPOTENCY_KEY="q-1")
    again = api.put(url(masto.id), BERLIN, format="json", HTTP_IDEMPOTENCY_KEY="q-1")
    assert again.status_code == 200 and again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    other = api.put(url(masto.id), {"timezone": "UTC", "slots": []}, format="json", HTTP_IDEMPOTENCY_KEY="q-1")
    assert other.status_code == 422
    assert api.get(url(masto.id)).json()["timezone"] == "Europe/Berlin"


def test_every_answer_carries_the_rate_limit_headers(api: APIClient, masto: SocialAccount) -> None:
    for response in (
        api.get(url(masto.id)),
        api.put(url(masto.id), BERLIN, format="json"),
        api.get(url(masto.id, "/next")),
    ):
        assert response["RateLimit-Limit"] and response["RateLimit-Remaining"]


# --- next free slots ---------------------------------------------------------------------------


def test_next_slots_skip_taken_ones(api: APIClient, masto: SocialAccount, workspace: Workspace, frozen: None) -> None:
    assert api.get(url(masto.id, "/next")).json() == {"slots": []}
    api.put(url(masto.id), BERLIN, format="json")
    # Fri 6 March 17:00 CET, Mon 9 March 09:30 CET, Fri 13 March 17:00 CET, ...
    expected = [
        "2026-03-06T16:00:00.000Z",
        "2026-03-09T08:30:00.000Z",
        "2026-03-13T16:00:00.000Z",
        "2026-03-16T08:30:00.000Z",
    ]
    assert api.get(url(masto.id, "/next?count=4")).json() == {"slots": expected}
    assert len(api.get(url(masto.id, "/next")).json()["slots"]) == 10

    def post_at(moment: str | None, status: str) -> None:
        post = PostFactory(workspace=workspace, status=status, scheduled_at=instant(moment) if moment else None)
        PostTargetFactory(post=post, platform="MASTODON", account=masto)

    post_at(expected[0], PostStatus.SCHEDULED)  # taken
    post_at(expected[1], PostStatus.DRAFT)  # a dated draft takes its slot
    post_at(expected[2], PostStatus.FAILED)  # a failed post does not
    post_at(None, PostStatus.DRAFT)  # nor does an undated draft
    other_account = SocialAccountFactory(workspace=workspace, platform="BLUESKY")
    post = PostFactory(workspace=workspace, status=PostStatus.SCHEDULED, scheduled_at=instant(expected[3]))
    PostTargetFactory(post=post, platform="BLUESKY", account=other_account)  # another account's post
    assert api.get(url(masto.id, "/next?count=2")).json() == {"slots": expected[2:4]}


@pytest.mark.parametrize("query", ["count=0", "count=51", "count=x", "count=1.5", "other=1", "count=1&count=2"])
def test_next_refuses_a_bad_query(api: APIClient, masto: SocialAccount, query: str) -> None:
    response = api.get(url(masto.id, f"/next?{query}"))
    assert response.status_code == 400
    name = query.split("=")[0]
    assert any(name in message for message in response.json()["message"]), response.json()


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        # Spring forward, Sunday 29 March 2026: 02:00 CET → 03:00 CEST; 02:30 does not exist and
        # falls at the change itself (03:00 CEST = 01:00Z), as recurring series do.
        ("2026-03-22", ["2026-03-22T01:30:00.000Z", "2026-03-29T01:00:00.000Z", "2026-04-05T00:30:00.000Z"]),
        # Fall back, Sunday 25 October 2026: 03:00 CEST → 02:00 CET; 02:30 happens twice: the first.
        ("2026-10-18", ["2026-10-18T00:30:00.000Z", "2026-10-25T00:30:00.000Z", "2026-11-01T01:30:00.000Z"]),
    ],
)
def test_slots_keep_their_wall_clock_time_across_dst(
    api: APIClient, masto: SocialAccount, day: str, expected: list[str]
) -> None:
    api.put(url(masto.id), {"timezone": "Europe/Berlin", "slots": [{"day": "SUN", "time": "02:30"}]}, format="json")
    with time_machine.travel(dt.datetime.fromisoformat(f"{day}T00:00:00+00:00"), tick=False):
        answered = api.get(url(masto.id, "/next?count=3")).json()["slots"]
    assert answered == expected
    # The very helper the recurring series place their occurrences with.
    sunday = instant(expected[1]).astimezone(ZoneInfo("Europe/Berlin")).date()
    assert to_instant(dt.datetime.combine(sunday, dt.time(2, 30)), ZoneInfo("Europe/Berlin")) == instant(expected[1])


def test_two_slots_on_one_instant_are_one_slot(api: APIClient, masto: SocialAccount) -> None:
    slots = [{"day": "SUN", "time": "02:30"}, {"day": "SUN", "time": "03:00"}]
    api.put(url(masto.id), {"timezone": "Europe/Berlin", "slots": slots}, format="json")
    with time_machine.travel(dt.datetime(2026, 3, 28, tzinfo=dt.UTC), tick=False):
        answered = api.get(url(masto.id, "/next?count=3")).json()["slots"]
    assert answered == ["2026-03-29T01:00:00.000Z", "2026-04-05T00:30:00.000Z", "2026-04-05T01:00:00.000Z"]


# --- queue: true on create -----------------------------------------------------------------------


def test_a_queued_post_takes_the_earliest_free_slot(
    api: APIClient, masto: SocialAccount, workspace: Workspace, frozen: None
) -> None:
    api.put(url(masto.id), BERLIN, format="json")
    taken = PostFactory(workspace=workspace, status=PostStatus.SCHEDULED, scheduled_at=instant("2026-03-06T16:00:00Z"))
    PostTargetFactory(post=taken, platform="MASTODON", account=masto)
    first = api.post(POSTS, queued_body(masto), format="json")
    assert first.status_code == 201, first.json()
    assert first.json() == {
        "postId": first.json()["postId"],
        "status": "SCHEDULED",
        "queuedPlatforms": [],  # only a post going out now lists them
        "skippedPlatforms": [],
        "isScheduled": True,
        "scheduledAt": "2026-03-09T08:30:00.000Z",
    }
    second = api.post(POSTS, queued_body(masto), format="json")
    assert second.json()["scheduledAt"] == "2026-03-13T16:00:00.000Z"
    assert Post.objects.get(id=second.json()["postId"]).status == PostStatus.SCHEDULED
    assert api.get(url(masto.id, "/next?count=1")).json() == {"slots": ["2026-03-16T08:30:00.000Z"]}
    # Deleting a queued post frees its slot.
    assert api.delete(f"{POSTS}/{first.json()['postId']}").status_code == 200
    assert api.post(POSTS, queued_body(masto), format="json").json()["scheduledAt"] == "2026-03-09T08:30:00.000Z"


def test_a_post_to_several_accounts_takes_a_slot_free_for_all(
    api: APIClient, masto: SocialAccount, workspace: Workspace, frozen: None
) -> None:
    bsky = SocialAccountFactory(workspace=workspace, platform="BLUESKY")
    api.put(url(masto.id), BERLIN, format="json")
    # The Bluesky queue shares only the Friday slot (16:00Z in UTC), and its first one is taken.
    api.put(url(bsky.id), {"timezone": "UTC", "slots": [{"day": "FRI", "time": "16:00"}]}, format="json")
    taken = PostFactory(workspace=workspace, status=PostStatus.SCHEDULED, scheduled_at=instant("2026-03-06T16:00:00Z"))
    PostTargetFactory(post=taken, platform="BLUESKY", account=bsky)
    body = queued_body(masto, platforms=["MASTODON", "BLUESKY"], blueskyConnectionIds=[bsky.id])
    response = api.post(POSTS, body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["scheduledAt"] == "2026-03-13T16:00:00.000Z"
    assert response.json()["queuedPlatforms"] == []  # scheduled: queued at its slot


def test_no_common_free_slot_is_a_400(api: APIClient, masto: SocialAccount, workspace: Workspace, frozen: None) -> None:
    bsky = SocialAccountFactory(workspace=workspace, platform="BLUESKY")
    api.put(url(masto.id), BERLIN, format="json")
    api.put(url(bsky.id), {"timezone": "UTC", "slots": [{"day": "TUE", "time": "16:00"}]}, format="json")
    body = queued_body(masto, platforms=["MASTODON", "BLUESKY"], blueskyConnectionIds=[bsky.id])
    response = api.post(POSTS, body, format="json")
    assert response.status_code == 400
    assert response.json()["message"][0].startswith("queue: no slot is free for every account")
    assert not Post.objects.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"scheduledAt": "2026-05-01T10:00:00Z"}, "queue: cannot be combined with scheduledAt"),
        ({"saveAsDraft": True}, "queue: cannot be combined with saveAsDraft"),
        (
            {"recurrence": {"frequency": "DAILY"}},
            "queue: cannot be combined with recurrence",
        ),
    ],
)
def test_queue_alone_decides_the_time(
    api: APIClient, masto: SocialAccount, frozen: None, extra: dict[str, Any], message: str
) -> None:
    api.put(url(masto.id), BERLIN, format="json")
    response = api.post(POSTS, queued_body(masto, **extra), format="json")
    assert response.status_code == 400
    assert message in response.json()["message"]
    validation = api.post(f"{POSTS}/validate", queued_body(masto, **extra), format="json").json()
    assert validation["valid"] is False
    assert {"platform": None, "message": message, "field": "queue"} in validation["issues"]
    assert not Post.objects.exists()


def test_an_account_without_queue_slots_is_a_400_naming_it(
    api: APIClient, masto: SocialAccount, workspace: Workspace
) -> None:
    message = (
        f"queue: the MASTODON account {masto.id} has no posting queue slots (PUT /social-accounts/{masto.id}/queue)"
    )
    for _ in range(2):  # no queue, then a queue without slots
        response = api.post(POSTS, queued_body(masto), format="json")
        assert response.status_code == 400
        assert response.json()["message"] == [message]
        validation = api.post(f"{POSTS}/validate", queued_body(masto), format="json").json()
        assert validation == {
            "valid": False,
            "issues": [{"platform": "MASTODON", "message": message, "field": "queue"}],
            "skippedPlatforms": [],
        }
        api.put(url(masto.id), {"timezone": "UTC", "slots": []}, format="json")
    assert not Post.objects.exists()


def test_validate_accepts_a_queued_post(api: APIClient, masto: SocialAccount, frozen: None) -> None:
    api.put(url(masto.id), BERLIN, format="json")
    response = api.post(f"{POSTS}/validate", queued_body(masto), format="json")
    assert response.json() == {"valid": True, "issues": [], "skippedPlatforms": []}
    assert not Post.objects.exists()


def test_queue_needs_the_schedule_permission(
    client_for: Callable[..., APIClient], api: APIClient, masto: SocialAccount
) -> None:
    api.put(url(masto.id), BERLIN, format="json")
    response = client_for("contributor").post(POSTS, queued_body(masto), format="json")
    assert response.status_code == 403
    assert response.json()["requiredPermission"] == "posts.schedule"
    assert client_for("editor").post(POSTS, queued_body(masto), format="json").status_code == 201


@pytest.mark.parametrize("value", ["yes", 1, None, [], {}])
def test_queue_must_be_a_boolean(api: APIClient, masto: SocialAccount, value: Any) -> None:
    response = api.post(POSTS, queued_body(masto, queue=value), format="json")
    assert response.status_code == 400
    assert any(m.startswith("queue") for m in response.json()["message"]), response.json()


def test_queue_false_changes_nothing(api: APIClient, masto: SocialAccount) -> None:
    response = api.post(POSTS, queued_body(masto, queue=False, saveAsDraft=True), format="json")
    assert response.status_code == 201
    assert response.json()["status"] == "DRAFT" and response.json()["scheduledAt"] is None


def test_a_change_takes_no_queue(api: APIClient, masto: SocialAccount) -> None:
    """Like ``recurrence``, ``queue`` is a create field: a change ignores it, as unknown keys are."""
    api.put(url(masto.id), BERLIN, format="json")
    draft = api.post(POSTS, queued_body(masto, queue=False, saveAsDraft=True), format="json").json()["postId"]
    response = api.patch(f"{POSTS}/{draft}", {"queue": True}, format="json")
    assert response.status_code == 200
    assert response.json()["status"] == "DRAFT" and response.json()["scheduledAt"] is None


def _someone_waits_for_a_lock(deadline: float) -> bool:
    """Whether another session of this database is blocked on a row lock (polled until ``deadline``)."""
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = %s",
                ["Lock"],
            )
            if cursor.fetchone()[0]:
                return True
    return False


@pytest.mark.django_db(transaction=True)
def test_concurrent_queued_creates_never_share_a_slot(
    client_for: Callable[..., APIClient], workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first create holds its transaction open after claiming its slot; the second, started
    then, must wait for it (its queue row is locked) and take the next slot, not the same one."""
    account = SocialAccountFactory(workspace=workspace, platform="MASTODON")
    first_client, second_client = client_for("admin"), client_for("admin")
    claimed, release = threading.Event(), threading.Event()
    real_go_live = creation.go_live

    def go_live_held_open(post: Any, **kwargs: Any) -> None:
        real_go_live(post, **kwargs)
        if not claimed.is_set():
            claimed.set()
            assert release.wait(timeout=60)

    monkeypatch.setattr(creation, "go_live", go_live_held_open)
    answers: dict[str, Any] = {}

    def create(name: str, client: APIClient) -> None:
        try:
            response = client.post(POSTS, queued_body(account), format="json")
            answers[name] = (response.status_code, response.json().get("scheduledAt"))
        finally:
            connection.close()

    with time_machine.travel(NOW, tick=False):
        first_client.put(url(account.id), BERLIN, format="json")
        expected = first_client.get(url(account.id, "/next?count=2")).json()["slots"]
        first = threading.Thread(target=create, args=("first", first_client))
        first.start()
        assert claimed.wait(timeout=60)
        second = threading.Thread(target=create, args=("second", second_client))
        second.start()
        blocked = _someone_waits_for_a_lock(time.monotonic() + 20)
        release.set()
        first.join()
        second.join()
    assert blocked, "the second create did not wait for the first one's queue lock"
    assert answers == {"first": (201, expected[0]), "second": (201, expected[1])}
    scheduled = sorted(Post.objects.filter(status=PostStatus.SCHEDULED).values_list("scheduled_at", flat=True))
    assert scheduled == [instant(slot) for slot in expected]
