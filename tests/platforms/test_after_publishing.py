"""After publishing, every platform alike, over real HTTP: the real client edits and deletes a
post on its simulator exactly as the capability table says it can (and raises NotSupported where
it says it cannot), a read of the post afterwards sees the change (an edited text, a 404 and no
listing for a deleted post), a second delete of a post already gone still returns normally, the
simulator saw each changing call once, refusals and lost answers map onto the taxonomy, and a
revoked token fails afterwards with the platform's auth error."""

from __future__ import annotations

import datetime as dt
import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import pytest
import requests

from platforms._meta_common import GRAPH_VERSION
from platforms.base import (
    AuthError,
    Credentials,
    EditRequest,
    ErrorCode,
    NotSupported,
    Permanent,
    Platform,
    Transient,
    UnknownOutcome,
)
from platforms.capabilities import CAPABILITIES
from platforms.linkedin import API_VERSION as LINKEDIN_VERSION
from tests.e2e.harness import wait_for
from tests.platforms.conftest import Harness, media_item, sim_requests

CLIENT_TIMEOUT = 2.0
HELD_FOR = 3.0


@dataclass(frozen=True)
class Spec:
    """One platform's side of these tests. ``read``: the path (under the sandbox base) and query
    of a direct read of one post, for the account's credentials and the post id; ``text_of``
    finds the post's text in that read's answer. ``edit_call`` and ``delete_call``: the method
    and a path part of the calls that edit and delete (for arming a fault on exactly them)."""

    read: Callable[[Credentials, str], tuple[str, dict[str, str]]]
    text_of: Callable[[Any], str] = lambda body: ""
    edit_call: tuple[str, str] = ("", "")
    delete_call: tuple[str, str] = ("DELETE", "")
    bearer: bool = True
    headers: dict[str, str] = field(default_factory=dict)
    html: bool = False  # the read is the post's web page: ``text_of`` gets its HTML
    gone: Callable[[requests.Response], bool] = lambda read: read.status_code == 404
    # What the read shows of the post's media (file names, or alt texts where the platform keeps
    # them); None where the read shows none (the simulator's log says what the edit sent).
    media_of: Callable[[Any], list[str]] | None = None


def _graph_missing(read: requests.Response) -> bool:
    """Graph answers a read of an object that no longer exists with code 100, subcode 33."""
    error = read.json().get("error") or {}
    return read.status_code == 400 and (error.get("code"), error.get("error_subcode")) == (100, 33)


def _mastodon_text(body: Any) -> str:
    from platforms.mastodon import html_to_text

    return html_to_text(str(body["content"]))


SPECS: dict[Platform, Spec] = {
    Platform.FACEBOOK: Spec(
        lambda creds, post_id: (f"/facebook/{GRAPH_VERSION}/{post_id}", {}),
        lambda body: str(body["message"]),
        edit_call=("POST", "_"),
        delete_call=("DELETE", "_"),
        gone=_graph_missing,
    ),
    Platform.THREADS: Spec(
        lambda creds, post_id: (f"/threads/v1.0/{post_id}", {}),
        lambda body: str(body["text"]),
        delete_call=("DELETE", "/v1.0/"),
        gone=_graph_missing,
    ),
    Platform.TWITTER: Spec(
        lambda creds, post_id: (f"/twitter/2/tweets/{post_id}", {}),
        lambda body: str(body["data"]["text"]),
        delete_call=("DELETE", "/2/tweets/"),
        gone=lambda read: read.status_code == 200 and read.json()["errors"][0]["title"] == "Not Found Error",
    ),
    Platform.BLUESKY: Spec(
        lambda creds, post_id: (
            "/bluesky/xrpc/com.atproto.repo.getRecord",
            {"repo": creds.external_id, "collection": "app.bsky.feed.post", "rkey": post_id.rsplit("/", 1)[-1]},
        ),
        lambda body: str(body["value"]["text"]),
        delete_call=("POST", "com.atproto.repo.deleteRecord"),
        gone=lambda read: read.status_code == 400 and read.json()["error"] == "RecordNotFound",
    ),
    Platform.LINKEDIN: Spec(
        lambda creds, post_id: (f"/linkedin/rest/posts/{quote(post_id, safe='')}", {}),
        lambda body: str(body["commentary"]),
        edit_call=("POST", "/rest/posts/urn"),
        delete_call=("DELETE", "/rest/posts/urn"),
        headers={"LinkedIn-Version": LINKEDIN_VERSION},
    ),
    Platform.PINTEREST: Spec(
        lambda creds, post_id: (f"/pinterest/pins/{post_id}", {}),
        lambda body: str(body["description"]),
        edit_call=("PATCH", "/pins/"),
        delete_call=("DELETE", "/pins/"),
    ),
    Platform.YOUTUBE: Spec(
        lambda creds, post_id: ("/youtube/youtube/v3/videos", {"part": "snippet", "id": post_id}),
        lambda body: str(body["items"][0]["snippet"]["description"]),
        edit_call=("PUT", "/youtube/v3/videos"),
        delete_call=("DELETE", "/youtube/v3/videos"),
        gone=lambda read: read.status_code == 200 and read.json()["items"] == [],  # videos.list of a gone id
    ),
    Platform.GOOGLE_BUSINESS: Spec(
        lambda creds, post_id: (f"/google_business/v4/{post_id}", {}),
        lambda body: str(body["summary"]),
        edit_call=("PATCH", "/localPosts/"),
        delete_call=("DELETE", "/localPosts/"),
        media_of=lambda body: [str(m["sourceUrl"]).rsplit("/", 1)[-1] for m in body.get("media") or []],
    ),
    Platform.TELEGRAM: Spec(
        # the Bot API reads no message: the post's t.me page (a channel's: /c/<id without -100>/<message>)
        lambda creds, post_id: (f"/telegram/c/{creds.external_id.removeprefix('-100')}/{post_id}", {}),
        lambda page: html.unescape(re.findall(r"</header><p>([^<]*)</p>", page)[0]),
        edit_call=("POST", "/editMessage"),
        delete_call=("POST", "/deleteMessage"),
        bearer=False,
        html=True,
    ),
    Platform.MASTODON: Spec(
        lambda creds, post_id: (f"/mastodon/api/v1/statuses/{post_id}", {}),
        _mastodon_text,
        edit_call=("PUT", "/api/v1/statuses/"),
        delete_call=("DELETE", "/api/v1/statuses/"),
        media_of=lambda body: [f"{m['type']}: {m['description']}" for m in body["media_attachments"]],
    ),
}


def _spec(harness: Harness) -> Spec:
    return SPECS[harness.case.platform]


def _read(harness: Harness, post_id: str) -> requests.Response:
    spec = _spec(harness)
    path, params = spec.read(harness.creds, post_id)
    headers = {"Authorization": f"Bearer {harness.creds.access_token}"} if spec.bearer else {}
    headers.update(spec.headers)
    return requests.get(f"{harness.sandbox}{path}", params=params, headers=headers, timeout=10)


def _text(harness: Harness, post_id: str) -> str:
    read = _read(harness, post_id)
    assert read.status_code == 200, read.text
    spec = _spec(harness)
    return spec.text_of(read.text if spec.html else read.json())


def _calls(harness: Harness, kind: str) -> list[dict[str, Any]]:
    """The calls the simulator received that edited (``kind`` "edit"), deleted ("delete") or
    revoked ("revoke") something."""
    return [entry for entry in sim_requests(harness.sandbox, harness.slug) if entry.get(kind)]


def _edit(harness: Harness, post_id: str, text: str) -> Any:
    request = EditRequest(target_id="tgt_edit", platform_post_id=post_id, text=text, options=dict(harness.case.options))
    result = harness.client.edit(harness.creds, request)
    while not result.done:
        result = harness.client.edit(harness.creds, EditRequest(**{**request.__dict__, "state": result.state}))
    return result


def _edits(platform: Platform) -> bool:
    return "text" in CAPABILITIES[platform].edit_fields


def _media_edit(harness: Harness, post_id: str, text: str, *names: str) -> EditRequest:
    return EditRequest(
        target_id="tgt_media",
        platform_post_id=post_id,
        text=text,
        media=tuple(media_item(f"{harness.media_server}/{name}", alt=f"the new {name}") for name in names),
        options=dict(harness.case.options),
        content_type=harness.case.content_type,
    )


# --- edit --------------------------------------------------------------------------------------


def test_edit_changes_what_a_read_returns_or_is_not_supported(harness: Harness) -> None:
    post = harness.publish("the first words")
    if not _edits(harness.case.platform):
        with pytest.raises(NotSupported):
            _edit(harness, post.platform_post_id, "other words")
        assert _calls(harness, "edit") == []
        return
    result = _edit(harness, post.platform_post_id, "the corrected words")
    assert result.done
    assert _text(harness, post.platform_post_id) == "the corrected words"
    (edit,) = _calls(harness, "edit")
    assert edit["status"] < 300 and edit["remoteId"] == post.platform_post_id


def test_refused_edit_is_permanent_with_the_platforms_words(harness: Harness) -> None:
    if not _edits(harness.case.platform):
        pytest.skip("the platform does not edit")
    post = harness.publish("fine words")
    with pytest.raises(Permanent) as refused:
        _edit(harness, post.platform_post_id, "not these #sandbox-fail")
    assert refused.value.message and not refused.value.message.startswith("HTTP ")
    assert _text(harness, post.platform_post_id) == "fine words"


def test_timeout_after_sending_an_edit_is_unknown_outcome(harness: Harness, settings: Any) -> None:
    if not _edits(harness.case.platform):
        pytest.skip("the platform does not edit")
    post = harness.publish("slow edit")
    settings.PLATFORM_HTTP_TIMEOUT = CLIENT_TIMEOUT
    method, path = _spec(harness).edit_call
    harness.arm("timeout", path=path, method=method, seconds=HELD_FOR)
    with pytest.raises(UnknownOutcome):
        _edit(harness, post.platform_post_id, "edited late")
    wait_for(
        lambda: [e for e in _calls(harness, "edit") if e.get("fault") == "timeout"], timeout=30, what="the held edit"
    )


def test_media_edit_replaces_the_media_or_is_refused_before_anything_is_sent(harness: Harness) -> None:
    """Where the capability table says a published post's media change (MASTODON, TELEGRAM,
    GOOGLE_BUSINESS: each case publishes text only, so the edit adds a photo), the read shows the
    new photo and the text kept; elsewhere the client refuses before any call."""
    platform = harness.case.platform
    post = harness.publish("the words that stay")
    request = _media_edit(harness, post.platform_post_id, "the words that stay", "sample.jpg")
    if "media" not in CAPABILITIES[platform].edit_fields:
        with pytest.raises((NotSupported, Permanent)) as refused:
            harness.client.edit(harness.creds, request)
        if isinstance(refused.value, Permanent):
            assert refused.value.error_code == ErrorCode.INVALID_REQUEST and "media" in refused.value.message
        assert _calls(harness, "edit") == []
        return
    result = harness.client.edit(harness.creds, request)
    while not result.done:
        result = harness.client.edit(harness.creds, EditRequest(**{**request.__dict__, "state": result.state}))
    assert _text(harness, post.platform_post_id) == "the words that stay"
    (edit,) = _calls(harness, "edit")
    assert edit["status"] < 300 and edit["remoteId"] == post.platform_post_id
    spec = _spec(harness)
    if spec.media_of is not None:
        read = _read(harness, post.platform_post_id)
        shown = spec.media_of(read.json())
        assert shown in (["sample.jpg"], ["image: the new sample.jpg"]), shown
    else:  # Telegram: the Bot API reads no message; its log names what replaced the media
        assert edit["media"] == "photo"


def test_a_refused_media_edit_is_permanent_with_the_platforms_words(harness: Harness) -> None:
    if "media" not in CAPABILITIES[harness.case.platform].edit_fields:
        pytest.skip("the platform does not edit media")
    post = harness.publish("keep these words")
    with pytest.raises(Permanent) as refused:
        harness.client.edit(
            harness.creds, _media_edit(harness, post.platform_post_id, "keep these words", "sample.pdf")
        )
    assert refused.value.message and not refused.value.message.startswith("HTTP ")
    assert _text(harness, post.platform_post_id) == "keep these words"


def test_a_server_error_on_a_media_edit_is_transient_and_the_retry_replaces_the_media(harness: Harness) -> None:
    if "media" not in CAPABILITIES[harness.case.platform].edit_fields:
        pytest.skip("the platform does not edit media")
    post = harness.publish("media after a hiccup")
    request = _media_edit(harness, post.platform_post_id, "media after a hiccup", "sample.jpg")
    method, path = _spec(harness).edit_call
    harness.arm("server_error", path=path, method=method)
    with pytest.raises(Transient):
        harness.client.edit(harness.creds, request)
    result = harness.client.edit(harness.creds, request)
    assert result.done
    refused = [e for e in sim_requests(harness.sandbox, harness.slug, path) if e["status"] >= 500]
    assert len(refused) == 1 and refused[0]["method"] == method  # the armed fault answered the first
    (done,) = _calls(harness, "edit")
    assert done["status"] < 300


# --- delete ------------------------------------------------------------------------------------


def test_delete_makes_reads_404_and_a_second_delete_returns_normally(harness: Harness) -> None:
    post = harness.publish("short-lived")
    if not CAPABILITIES[harness.case.platform].deletable:
        with pytest.raises(NotSupported):
            harness.client.delete(harness.creds, post.platform_post_id)
        assert _calls(harness, "delete") == []
        return
    harness.client.delete(harness.creds, post.platform_post_id)
    assert _spec(harness).gone(_read(harness, post.platform_post_id))
    harness.client.delete(harness.creds, post.platform_post_id)  # already gone: done
    first, second = _calls(harness, "delete")
    assert first["status"] < 300 and first["remoteId"] == post.platform_post_id
    assert second["remoteId"] == post.platform_post_id


def test_a_deleted_post_leaves_the_recent_posts_listing(harness: Harness) -> None:
    if not CAPABILITIES[harness.case.platform].deletable:
        pytest.skip("the platform does not delete")
    since = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    kept = harness.publish("kept", target_id="tgt_kept")
    gone = harness.publish("gone", target_id="tgt_gone")
    try:
        listed = {p.platform_post_id for p in harness.client.list_recent_posts(harness.creds, since)}
    except NotSupported:
        pytest.skip("the platform lists no recent posts")
    assert {kept.platform_post_id, gone.platform_post_id} <= listed
    harness.client.delete(harness.creds, gone.platform_post_id)
    listed = {p.platform_post_id for p in harness.client.list_recent_posts(harness.creds, since)}
    assert kept.platform_post_id in listed and gone.platform_post_id not in listed


def test_server_error_on_a_delete_is_transient_and_the_retry_deletes(harness: Harness) -> None:
    if not CAPABILITIES[harness.case.platform].deletable:
        pytest.skip("the platform does not delete")
    post = harness.publish("deleted after a hiccup")
    method, path = _spec(harness).delete_call
    harness.arm("server_error", path=path, method=method)
    with pytest.raises(Transient):
        harness.client.delete(harness.creds, post.platform_post_id)
    harness.client.delete(harness.creds, post.platform_post_id)
    assert _spec(harness).gone(_read(harness, post.platform_post_id))


# --- lookup (fetch_post) -----------------------------------------------------------------------


def test_fetch_post_reads_the_post_sees_an_edit_and_answers_none_once_deleted(harness: Harness) -> None:
    """The read that settles an interrupted edit or delete: the post's current text, the edited
    text after an edit, None after a delete; NotSupported where the platform reads no post."""
    platform, client, creds = harness.case.platform, harness.client, harness.creds
    post = harness.publish("the words to look up")
    if not CAPABILITIES[platform].post_lookup:
        with pytest.raises(NotSupported):
            client.fetch_post(creds, post.platform_post_id)
        return
    found = client.fetch_post(creds, post.platform_post_id)
    assert found is not None and found.text == "the words to look up"
    assert found.platform_post_id == post.platform_post_id
    if _edits(platform):
        _edit(harness, post.platform_post_id, "the looked-up words, edited")
        edited = client.fetch_post(creds, post.platform_post_id)
        assert edited is not None and edited.text == "the looked-up words, edited"
    if CAPABILITIES[platform].deletable:
        client.delete(creds, post.platform_post_id)
        assert client.fetch_post(creds, post.platform_post_id) is None
    # the reads changed nothing: the simulator saw only the one edit and the one delete
    assert len(_calls(harness, "edit")) == int(_edits(platform))
    assert len(_calls(harness, "delete")) == int(CAPABILITIES[platform].deletable)


# --- revoke ------------------------------------------------------------------------------------


def test_revoke_makes_the_token_fail_or_is_not_supported(harness: Harness) -> None:
    client = harness.client
    assert client.check_token(harness.creds).external_id
    if not CAPABILITIES[harness.case.platform].revocable_token:
        with pytest.raises(NotSupported):
            client.revoke_token(harness.creds)
        return
    client.revoke_token(harness.creds)
    calls = len(_calls(harness, "revoke"))
    assert calls >= 1
    with pytest.raises(AuthError) as rejected:
        client.check_token(harness.creds)
    assert rejected.value.error_code == ErrorCode.AUTH_EXPIRED
    client.revoke_token(harness.creds)  # already revoked: done
    assert len(_calls(harness, "revoke")) == 2 * calls
