"""Issue 29, the posts items, written from what the published CLI and agent server send and read:
publish accepts a SCHEDULED post (now, or rescheduled), exactly once against the dispatcher;
``queuedPlatforms`` only for a post going out now; alt texts resent with the targets but without
``mediaUrls``; an entry's ``text`` is its override (null when it uses the post's text), which a
change of the post's text then reaches; entries carry ``mediaAltTexts``, ``createdAt`` and
``updatedAt``."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from core.fields import format_instant
from posts.models import Post, PostStatus, PostTarget
from posts.pipeline.dispatcher import dispatch_due
from posts.rendering import post_record
from tests.concurrency import raised, run_concurrently
from tests.factories import MembershipFactory
from tests.factories.posts import PostFactory, PostTargetFactory, account, uploaded
from tests.posts.conftest import events, future, iso
from workspaces.services import api_key_create

URL = "/api/v1/social-posts"


@pytest.fixture
def masto(workspace: Any) -> Any:
    return account(workspace, "MASTODON", display_name="Masto")


def scheduled(api: Any, masto: Any, when: dt.datetime, **extra: Any) -> dict[str, Any]:
    """A post created as the CLI's `posts create --schedule` sends it: the 201 body."""
    body = {
        "contentType": "TEXT",
        "timezone": "UTC",
        "text": "Hello",
        "platforms": ["MASTODON"],
        "mastodonConnectionIds": [masto.id],
        "scheduledAt": iso(when),
        **extra,
    }
    response = api.post(URL, body, format="json")
    assert response.status_code == 201, response.json()
    return dict(response.json())


# --- item 1: publish a SCHEDULED post ----------------------------------------------------------


def test_publishing_a_scheduled_post_without_a_time_sends_it_now(
    api: Any, workspace: Any, masto: Any, enqueued: list, commit: Any
) -> None:
    created = scheduled(api, masto, future(120))
    response = commit(lambda: api.post(f"{URL}/{created['postId']}/publish", {}, format="json"))
    assert response.status_code == 201, response.json()
    assert response.json() == {
        "postId": created["postId"],
        "queuedPlatforms": ["MASTODON"],
        "isScheduled": False,
        "scheduledAt": None,
    }
    post = Post.objects.get(id=created["postId"])
    assert (post.status, post.scheduled_at) == (PostStatus.PENDING, None)
    assert enqueued == [post.targets.get().id]
    assert len(events(workspace.id, "post.scheduled")) == 1  # the create's only


def test_publishing_a_scheduled_post_with_a_time_reschedules_it(
    api: Any, workspace: Any, masto: Any, enqueued: list, commit: Any
) -> None:
    created = scheduled(api, masto, future(120))
    later = future(300)
    response = commit(
        lambda: api.post(f"{URL}/{created['postId']}/publish", {"scheduledAt": iso(later)}, format="json")
    )
    assert response.status_code == 201, response.json()
    assert response.json() == {
        "postId": created["postId"],
        "queuedPlatforms": [],
        "isScheduled": True,
        "scheduledAt": iso(later),
    }
    post = Post.objects.get(id=created["postId"])
    assert (post.status, post.scheduled_at) == (PostStatus.SCHEDULED, later) and enqueued == []
    first, again = events(workspace.id, "post.scheduled")
    assert first["data"]["post"]["scheduledAt"] == created["scheduledAt"]
    assert again["data"]["post"] == post_record(post) and again["data"]["post"]["scheduledAt"] == iso(later)


@pytest.mark.parametrize("status", ["PENDING", "PUBLISHING", "COMPLETED", "PARTIAL_FAILURE", "FAILED"])
def test_publishing_a_post_in_any_other_state_is_refused_naming_it(api: Any, workspace: Any, status: str) -> None:
    post = PostFactory(workspace=workspace, status=status)
    PostTargetFactory(post=post)
    response = api.post(f"{URL}/{post.id}/publish", {}, format="json")
    assert response.json() == {
        "statusCode": 400,
        "error": "Bad Request",
        "message": f"Post is not a draft or scheduled post (its status is {status})",
        "code": "post_not_draft",
    }
    assert Post.objects.get(id=post.id).status == status


@pytest.mark.django_db(transaction=True)
def test_a_scheduled_post_published_while_the_dispatcher_claims_it_goes_out_once(
    api: Any, masto: Any, enqueued: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dispatcher (its claim: a conditional UPDATE of SCHEDULED rows it can lock) and a publish
    of the same due post, at the same instant: whichever takes the row first, the entries are
    queued once, and a publish that comes second is refused naming the state the claim left."""
    monkeypatch.setattr("posts.pipeline.dispatcher.enqueue_targets", lambda ids, **kwargs: enqueued.extend(ids))
    for _ in range(3):
        enqueued.clear()
        when = future(60)
        post_id = scheduled(api, masto, when)["postId"]

        def publish(post_id: str = post_id) -> Any:
            return api.post(f"{URL}/{post_id}/publish", {}, format="json")

        def claim(when: dt.datetime = when) -> int:
            return dispatch_due(now=when + dt.timedelta(seconds=1))

        published, claimed = run_concurrently([publish, claim])
        assert raised([published, claimed]) == []
        target_ids = list(PostTarget.objects.filter(post_id=post_id).values_list("id", flat=True))
        assert len(target_ids) == 1 and enqueued == target_ids, (published.json(), claimed)
        assert Post.objects.get(id=post_id).status == PostStatus.PENDING
        if published.status_code == 201:
            assert claimed == 0 and published.json()["queuedPlatforms"] == ["MASTODON"]
        else:
            assert claimed == 1 and published.json()["code"] == "post_not_draft"
            assert published.json()["message"] == "Post is not a draft or scheduled post (its status is PENDING)"


# --- item 6: queuedPlatforms only for a post going out now --------------------------------------


def test_queued_platforms_list_only_a_post_going_out_now(api: Any, masto: Any, enqueued: list) -> None:
    assert scheduled(api, masto, future())["queuedPlatforms"] == []
    assert scheduled(api, masto, future(), saveAsDraft=True)["queuedPlatforms"] == []
    now = api.post(
        URL,
        {
            "contentType": "TEXT",
            "timezone": "UTC",
            "text": "now",
            "platforms": ["MASTODON"],
            "mastodonConnectionIds": [masto.id],
        },
        format="json",
    )
    assert (now.json()["status"], now.json()["queuedPlatforms"]) == ("PENDING", ["MASTODON"])
    draft = scheduled(api, masto, future(), saveAsDraft=True)
    published = api.post(f"{URL}/{draft['postId']}/publish", {"scheduledAt": iso(future(90))}, format="json")
    assert (published.json()["isScheduled"], published.json()["queuedPlatforms"]) == (True, [])


# --- item 2: alt texts resent with the targets, without mediaUrls -------------------------------


def test_alt_texts_sent_with_the_targets_but_no_media_urls_label_the_stored_media(
    api: Any, workspace: Any, masto: Any
) -> None:
    bsky = account(workspace, "BLUESKY")
    media = [uploaded(workspace), uploaded(workspace)]
    created = scheduled(api, masto, future(), contentType="IMAGE", text="two pictures", mediaUrls=media)
    path = f"{URL}/{created['postId']}"
    # As the CLI's `posts update --alt-text` sends it: the targets, their ids, the alt texts.
    change = {
        "platforms": ["MASTODON", "BLUESKY"],
        "mastodonConnectionIds": [masto.id],
        "blueskyConnectionIds": [bsky.id],
        "mediaAltTexts": ["a red door", "a blue window"],
    }
    response = api.patch(path, change, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["mediaUrls"], body["mediaAltTexts"]) == (media, ["a red door", "a blue window"])
    assert [entry["platform"] for entry in body["platforms"]] == ["MASTODON", "BLUESKY"]
    assert all(entry["mediaUrls"] == media for entry in body["platforms"])
    assert Post.objects.get().media_urls == media
    # The targets alone keep the media and their alt texts.
    kept = api.patch(path, {"platforms": ["MASTODON"], "mastodonConnectionIds": [masto.id]}, format="json")
    assert (kept.json()["mediaUrls"], kept.json()["mediaAltTexts"]) == (media, ["a red door", "a blue window"])
    # Alt texts are still checked against the stored media.
    too_many = api.patch(path, {**change, "mediaAltTexts": ["one", "two", "three"]}, format="json")
    assert too_many.status_code == 400
    assert too_many.json()["message"] == ["mediaAltTexts: must not have more items than mediaUrls"]
    # Only an explicit [] removes the media (and an IMAGE post then needs some).
    removed = api.patch(path, {**change, "mediaUrls": [], "mediaAltTexts": []}, format="json")
    assert removed.status_code == 400 and "IMAGE" in " ".join(removed.json()["message"])
    text_post = api.patch(path, {**change, "contentType": "TEXT", "mediaUrls": [], "mediaAltTexts": []}, format="json")
    assert text_post.status_code == 200, text_post.json()
    assert (text_post.json()["mediaUrls"], text_post.json()["mediaAltTexts"]) == ([], [])


# --- item 4: an entry's text is its override ----------------------------------------------------


def test_an_entrys_text_is_its_override_and_null_when_it_uses_the_posts_text(
    api: Any, workspace: Any, masto: Any
) -> None:
    bsky = account(workspace, "BLUESKY")
    created = scheduled(
        api,
        masto,
        future(),
        platforms=["MASTODON", "BLUESKY"],
        blueskyConnectionIds=[bsky.id],
        platformTexts=[{"platform": "BLUESKY", "text": "Hello, sky"}],
    )
    path = f"{URL}/{created['postId']}"
    record = api.get(path).json()
    assert {e["platform"]: e["text"] for e in record["platforms"]} == {"MASTODON": None, "BLUESKY": "Hello, sky"}
    assert api.get(URL).json()["posts"][0]["platforms"] == record["platforms"]

    # The CLI's `posts update --text`: the targets rebuilt from the record (an entry's text as its
    # override, where it has one) with the new text.
    overrides = [{"platform": e["platform"], "text": e["text"]} for e in record["platforms"] if e["text"] is not None]
    change = {
        "text": "Goodbye",
        "platforms": ["MASTODON", "BLUESKY"],
        "mastodonConnectionIds": [masto.id],
        "blueskyConnectionIds": [bsky.id],
        "platformTexts": overrides,
    }
    response = api.patch(path, change, format="json")
    assert response.status_code == 200, response.json()
    assert {e["platform"]: e["text"] for e in response.json()["platforms"]} == {
        "MASTODON": None,
        "BLUESKY": "Hello, sky",
    }
    sent = dict(PostTarget.objects.filter(post_id=created["postId"]).values_list("platform", "text"))
    assert sent == {"MASTODON": "Goodbye", "BLUESKY": "Hello, sky"}  # what each platform gets

    # The agent server's update_post: the text alone reaches the entry without an override.
    response = api.patch(path, {"text": "Once more"}, format="json")
    assert {e["platform"]: e["text"] for e in response.json()["platforms"]} == {
        "MASTODON": None,
        "BLUESKY": "Hello, sky",
    }
    sent = dict(PostTarget.objects.filter(post_id=created["postId"]).values_list("platform", "text"))
    assert sent == {"MASTODON": "Once more", "BLUESKY": "Hello, sky"}


# --- item 7: entries carry mediaAltTexts, createdAt and updatedAt -------------------------------


def test_entries_carry_the_alt_texts_and_their_own_times(api: Any, workspace: Any, masto: Any) -> None:
    media = [uploaded(workspace), uploaded(workspace)]
    created = scheduled(api, masto, future(), contentType="IMAGE", mediaUrls=media, mediaAltTexts=["a red door", ""])
    record = api.get(f"{URL}/{created['postId']}").json()
    [entry] = record["platforms"]
    target = PostTarget.objects.get(post_id=created["postId"])
    assert entry["mediaAltTexts"] == ["a red door", ""]
    assert (entry["createdAt"], entry["updatedAt"]) == (
        format_instant(target.created_at),
        format_instant(target.updated_at),
    )
    assert api.get(URL).json()["posts"][0]["platforms"] == [entry]
    assert post_record(Post.objects.get(id=created["postId"]))["platforms"] == [entry]
    PostTarget.objects.filter(id=target.id).update(updated_at=timezone.now() + dt.timedelta(minutes=5))
    assert api.get(f"{URL}/{created['postId']}").json()["platforms"][0]["updatedAt"] != entry["updatedAt"]


def test_user_id_is_the_member_who_created_the_key_on_every_way_a_post_is_made(workspace: Any) -> None:
    """Posts made by create, by bulk and by a series' first occurrence, and the series itself, all
    name the member who created the calling key, in the get, the list and the post.scheduled
    payload (the key is read from the process's key cache after the first request)."""
    member = MembershipFactory(workspace=workspace, role="editor").user
    client = APIClient()
    key = api_key_create(workspace=workspace, name="cli", role="editor", created_by_id=member.id).plaintext
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    masto = account(workspace, "MASTODON")
    created = scheduled(client, masto, future(), recurrence={"frequency": "DAILY"})
    bulk = client.post(
        f"{URL}/bulk",
        {
            "platforms": ["MASTODON"],
            "timezone": "UTC",
            "mastodonConnectionIds": [masto.id],
            "posts": [{"contentType": "TEXT", "text": "bulk", "scheduledAt": iso(future(30))}],
        },
        format="json",
    )
    assert bulk.status_code == 201, bulk.json()
    ids = [created["postId"], bulk.json()["results"][0]["postId"]]
    assert [client.get(f"{URL}/{post_id}").json()["userId"] for post_id in ids] == [str(member.id)] * 2
    assert {post["userId"] for post in client.get(URL).json()["posts"]} == {str(member.id)}
    assert {event["data"]["post"]["userId"] for event in events(workspace.id, "post.scheduled")} == {str(member.id)}
    series = client.get(f"/api/v1/recurring-posts/{created['recurringPostId']}").json()
    assert series["userId"] == str(member.id)
