"""latePolicy / maxLatenessSeconds on create, PATCH and validate: stored, answered in the record only
when set (other posts' bodies are unchanged), refused with a 400 naming the field when wrong."""

from __future__ import annotations

from typing import Any

import pytest

from posts.models import LatePolicy, Post
from posts.pipeline.dispatcher import dispatch_due
from tests.factories.posts import account
from tests.posts.conftest import future, iso

URL = "/api/v1/social-posts"


@pytest.fixture
def masto(workspace: Any) -> Any:
    return account(workspace, "MASTODON", display_name="Masto")


def body(masto: Any, **extra: Any) -> dict[str, Any]:
    return {
        "contentType": "TEXT",
        "timezone": "UTC",
        "text": "On time",
        "platforms": ["MASTODON"],
        "mastodonConnectionIds": [masto.id],
        "scheduledAt": iso(future()),
        **extra,
    }


def test_a_post_without_a_policy_has_no_late_keys(api: Any, masto: Any) -> None:
    created = api.post(URL, body(masto), format="json").json()
    record = api.get(f"{URL}/{created['postId']}").json()
    assert "latePolicy" not in record and "maxLatenessSeconds" not in record
    post = Post.objects.get()
    assert (post.late_policy, post.max_lateness_seconds) == (LatePolicy.PUBLISH, None)


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ({"latePolicy": "skip", "maxLatenessSeconds": 900}, ("skip", 900)),
        ({"latePolicy": "draft"}, ("draft", 3600)),  # LATE_POLICY_DEFAULT_SECONDS
        ({"latePolicy": "skip", "maxLatenessSeconds": None}, ("skip", 3600)),
        ({"latePolicy": "publish"}, ("publish", None)),
    ],
)
def test_create_stores_the_policy_and_the_record_answers_it(
    api: Any, masto: Any, sent: dict[str, Any], stored: tuple[str, int | None]
) -> None:
    response = api.post(URL, body(masto, **sent), format="json")
    assert response.status_code == 201, response.json()
    post = Post.objects.get()
    assert (post.late_policy, post.max_lateness_seconds) == stored
    record = api.get(f"{URL}/{post.id}").json()
    if stored[0] == "publish":
        assert "latePolicy" not in record
    else:
        assert (record["latePolicy"], record["maxLatenessSeconds"]) == stored
        assert list(record)[-2:] == ["latePolicy", "maxLatenessSeconds"]
        listed = api.get(URL).json()["posts"][0]
        assert listed == record


@pytest.mark.parametrize(
    ("sent", "message"),
    [
        ({"latePolicy": "later"}, "latePolicy: "),
        ({"latePolicy": 1}, "latePolicy"),
        ({"latePolicy": "skip", "maxLatenessSeconds": 0}, "maxLatenessSeconds: Ensure this value is greater than"),
        (
            {"latePolicy": "skip", "maxLatenessSeconds": 30 * 86_400 + 1},
            "maxLatenessSeconds: Ensure this value is less",
        ),
        ({"latePolicy": "skip", "maxLatenessSeconds": "60"}, "maxLatenessSeconds"),
        ({"maxLatenessSeconds": 60}, "maxLatenessSeconds: applies only with latePolicy skip or draft"),
        ({"latePolicy": "publish", "maxLatenessSeconds": 60}, "maxLatenessSeconds: applies only with latePolicy"),
    ],
)
def test_create_and_validate_refuse_a_wrong_policy(api: Any, masto: Any, sent: dict[str, Any], message: str) -> None:
    for path in (URL, f"{URL}/validate"):
        response = api.post(path, body(masto, **sent), format="json")
        answer = response.json()
        if path == URL:
            assert response.status_code == 400, answer
            assert any(message in m for m in answer["message"]), answer
        else:
            assert response.status_code in (200, 400), answer
            text = str(answer)
            assert message.split(":")[0] in text, answer
    assert not Post.objects.exists()


def test_patch_sets_changes_and_clears_the_policy(api: Any, masto: Any) -> None:
    post_id = api.post(URL, body(masto), format="json").json()["postId"]
    path = f"{URL}/{post_id}"
    record = api.patch(path, {"latePolicy": "skip", "maxLatenessSeconds": 120}, format="json").json()
    assert (record["latePolicy"], record["maxLatenessSeconds"]) == ("skip", 120)
    record = api.patch(path, {"maxLatenessSeconds": 240}, format="json").json()
    assert (record["latePolicy"], record["maxLatenessSeconds"]) == ("skip", 240)
    record = api.patch(path, {"latePolicy": "draft"}, format="json").json()  # its own default limit
    assert (record["latePolicy"], record["maxLatenessSeconds"]) == ("draft", 3600)
    record = api.patch(path, {"text": "Still on time"}, format="json").json()  # other changes keep it
    assert (record["latePolicy"], record["maxLatenessSeconds"]) == ("draft", 3600)
    record = api.patch(path, {"latePolicy": "publish"}, format="json").json()
    assert "latePolicy" not in record and "maxLatenessSeconds" not in record
    assert (Post.objects.get().late_policy, Post.objects.get().max_lateness_seconds) == ("publish", None)


def test_a_series_passes_its_policy_to_every_occurrence(api: Any, masto: Any) -> None:
    created = api.post(
        URL, body(masto, latePolicy="skip", maxLatenessSeconds=300, recurrence={"frequency": "DAILY"}), format="json"
    ).json()
    first = Post.objects.get(id=created["postId"])
    assert (first.late_policy, first.max_lateness_seconds) == ("skip", 300)
    # Claiming the first occurrence makes the next one, from the series' template.
    assert dispatch_due(now=first.scheduled_at) == 1
    second = Post.objects.exclude(id=first.id).get(recurring_post_id=created["recurringPostId"])
    assert (second.late_policy, second.max_lateness_seconds) == ("skip", 300)
    assert api.get(f"{URL}/{second.id}").json()["latePolicy"] == "skip"
