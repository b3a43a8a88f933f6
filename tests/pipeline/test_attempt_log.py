"""One log line per attempt outcome of a platform publish: the post, the entry, its platform, the
attempt's number, the outcome and the wait before the next attempt ("attempt failed, retrying in
N s"), as fields of a structured line."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from platforms.base import Permanent, Platform, Transient
from posts.models import TargetStatus
from posts.pipeline.publisher import BACKOFF_SECONDS, publish_targets
from tests.pipeline.helpers import ScriptedClient, done, fake_account, make_due, make_post, targets_of

pytestmark = pytest.mark.django_db(transaction=True)


def _attempt_lines(caplog: Any) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "posts.pipeline.attempts"]


def test_a_retried_then_published_entry_leaves_one_line_per_attempt(workspace, use_client, caplog):
    caplog.set_level(logging.INFO, logger="posts.pipeline.attempts")
    use_client(ScriptedClient(Platform.MASTODON, [Transient("503 from the instance"), done("remote-9")]))
    post = make_post(workspace, [fake_account(workspace, Platform.MASTODON)])
    target = targets_of(post)[0]

    publish_targets([target.id])
    make_due(target)
    publish_targets([target.id])

    target.refresh_from_db()
    assert target.status == TargetStatus.PUBLISHED
    failed, published = _attempt_lines(caplog)
    first_wait = BACKOFF_SECONDS[0]
    assert failed.levelno == logging.WARNING
    assert failed.getMessage().startswith("publish attempt failed, retrying in ")
    assert (failed.post_id, failed.entry_id, failed.platform) == (post.id, target.id, "MASTODON")
    assert (failed.attempt, failed.outcome, failed.error_code) == (1, "retrying", "platform_unavailable")
    assert first_wait * 0.8 - 0.1 <= failed.retry_in_s <= first_wait * 1.2 + 0.1  # the backoff, with its jitter
    assert f"retrying in {failed.retry_in_s:g} s" in failed.getMessage()
    assert f"entry {target.id} of post {post.id} on MASTODON, attempt 1 (platform_unavailable)" in failed.getMessage()
    assert published.levelno == logging.INFO
    assert (published.entry_id, published.attempt, published.outcome) == (target.id, 2, "published")
    assert (published.retry_in_s, published.error_code) == (None, "")


def test_a_final_failure_is_one_warning_line_with_its_error_code(workspace, use_client, caplog):
    caplog.set_level(logging.INFO, logger="posts.pipeline.attempts")
    use_client(ScriptedClient(Platform.BLUESKY, [Permanent("Text too long", error_code="validation_failed")]))
    post = make_post(workspace, [fake_account(workspace, Platform.BLUESKY)])
    target = targets_of(post)[0]

    publish_targets([target.id])

    (line,) = _attempt_lines(caplog)
    assert line.levelno == logging.WARNING
    assert (line.post_id, line.entry_id, line.platform, line.attempt) == (post.id, target.id, "BLUESKY", 1)
    assert (line.outcome, line.error_code, line.retry_in_s) == ("failed", "validation_failed", None)
    assert line.getMessage().startswith("publish attempt failed for good: ")
