"""A published post's media edited through the pipeline against the simulators over real HTTP:
the Mastodon simulator processes a new video before it can be attached, so the edit's first call
uploads it and answers ``done=False`` (nothing changed on the status yet), the action waits with
the upload's state and, asked again, attaches it without uploading twice; run twice, nothing more
is sent. A Telegram text message gets a photo through editMessageMedia, its text kept as the caption."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests
from django.utils import timezone

from accounts.services import account_credentials
from platforms.base import Platform
from platforms.sandbox.store import SandboxStore
from posts.models import ActionStatus, PostTargetAction
from posts.pipeline import after_publishing
from posts.pipeline.publisher import publish_targets
from tests.factories.media import MediaFileFactory
from tests.pipeline.helpers import connect_account, events_of, make_post, targets_of
from tests.platforms.conftest import sim_requests

pytestmark = pytest.mark.django_db(transaction=True)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _served(workspace: Any, media_server: str, name: str, kind: str, mime: str) -> str:
    """An uploaded file of the workspace whose public URL the simulators can fetch."""
    row = MediaFileFactory(
        workspace=workspace,
        kind=kind,
        file_name=name,
        mime_type=mime,
        public_url=f"{media_server}/{name}",
        uploaded=True,
        size=(FIXTURES / name).stat().st_size,
    )
    return str(row.public_url)


def _action(post_id: str) -> PostTargetAction:
    return PostTargetAction.objects.get(target__post_id=post_id)


def test_a_mastodon_video_edit_waits_for_processing_then_attaches_it_once(
    api: Any, workspace: Any, sandbox: str, media_server: str
) -> None:
    account = connect_account(workspace, Platform.MASTODON)
    post = make_post(workspace, [account], text="The words stay, a video comes")
    assert publish_targets([t.id for t in targets_of(post)]) == 1
    [target] = targets_of(post)
    video = _served(workspace, media_server, "sample.mp4", "video", "video/mp4")

    answer = api.patch(
        f"/api/v1/social-posts/{post.id}",
        {"contentType": "VIDEO", "mediaUrls": [video], "mediaAltTexts": ["A short clip"]},
        format="json",
    )
    assert answer.status_code == 200, answer.json()
    [entry] = answer.json()["editReport"]["entries"]
    assert (entry["outcome"], entry["fields"]) == ("QUEUED", ["media"])
    action_id = _action(post.id).id

    assert after_publishing.run_actions([action_id]) == 1
    waiting = _action(post.id)
    assert (waiting.status, waiting.attempts, waiting.sending) == (ActionStatus.PENDING, 0, "")
    [media_id] = waiting.state["media_ids"]
    assert [e for e in sim_requests(sandbox, "mastodon") if e.get("edit")] == []  # the status is untouched
    assert events_of(post.id, "post.updated") == []

    # The simulator finishes processing (its clock, not a sleep), and the action falls due.
    SandboxStore("mastodon").update("media", media_id, ready_at=0)
    PostTargetAction.objects.filter(id=action_id).update(due_at=timezone.now())
    assert after_publishing.run_actions([action_id]) == 1
    assert after_publishing.run_actions([action_id]) == 0  # run twice: nothing more is sent

    assert _action(post.id).status == ActionStatus.DONE
    uploads = [e for e in sim_requests(sandbox, "mastodon", "/api/v2/media") if e["method"] == "POST"]
    [edit] = [e for e in sim_requests(sandbox, "mastodon") if e.get("edit")]
    assert len(uploads) == 1 and edit["status"] == 200 and edit["mediaIds"] == [media_id]
    status = requests.get(
        f"{sandbox}/mastodon/api/v1/statuses/{target.platform_post_id}",
        headers={"Authorization": f"Bearer {account_credentials(account=account).access_token}"},
        timeout=10,
    ).json()
    assert [(m["id"], m["type"], m["description"]) for m in status["media_attachments"]] == [
        (media_id, "video", "A short clip")
    ]
    assert status["edited_at"] and "The words stay, a video comes" in status["content"]
    record = api.get(f"/api/v1/social-posts/{post.id}").json()
    assert record["contentType"] == "VIDEO" and record["platforms"][0]["mediaUrls"] == [video]
    [event] = events_of(post.id, "post.updated")
    assert [(e["status"], e["fields"]) for e in event["data"]["entries"]] == [("DONE", ["media"])]


def test_a_telegram_text_message_gets_a_photo_with_its_text_as_the_caption(
    api: Any, workspace: Any, sandbox: str, media_server: str
) -> None:
    account = connect_account(workspace, Platform.TELEGRAM)
    post = make_post(workspace, [account], text="Now with a picture")
    assert publish_targets([t.id for t in targets_of(post)]) == 1
    photo = _served(workspace, media_server, "sample.jpg", "image", "image/jpeg")
    answer = api.patch(f"/api/v1/social-posts/{post.id}", {"contentType": "IMAGE", "mediaUrls": [photo]}, format="json")
    assert answer.status_code == 200, answer.json()
    action_id = _action(post.id).id
    assert after_publishing.run_actions([action_id]) == 1
    assert after_publishing.run_actions([action_id]) == 0
    assert _action(post.id).status == ActionStatus.DONE
    [edit] = [e for e in sim_requests(sandbox, "telegram") if e.get("edit")]
    assert edit["path"].endswith("/editMessageMedia") and edit["status"] == 200
    assert (edit["media"], edit["text"]) == ("photo", "Now with a picture")
