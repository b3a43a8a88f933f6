"""The publish hot path's cost, pinned before the platform step was shared with first comments,
edits and deletes: a batch of targets costs the same statements whatever its size, and the step
mechanism adds no per-target round trip."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from platforms.base import Credentials, Platform, PlatformClient, PublishRequest, PublishResult
from posts.pipeline.publisher import publish_targets
from tests.pipeline.helpers import fake_account, make_post, targets_of

pytestmark = pytest.mark.django_db(transaction=True)


class InstantClient(PlatformClient):
    def __init__(self, platform: Platform) -> None:
        self.platform = platform

    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        return PublishResult(
            done=True, platform_post_id=f"r-{request.target_id}", url=f"https://x.test/{request.target_id}"
        )


def _batch_queries(workspace: Any, size: int, tag: str) -> list[str]:
    accounts = [fake_account(workspace, Platform.BLUESKY, f"{tag}{i}") for i in range(size)]
    post = make_post(workspace, accounts, text=f"counted {tag}")
    ids = [t.id for t in targets_of(post)]
    with CaptureQueriesContext(connection) as queries:
        assert publish_targets(ids) == size
    return [q["sql"] for q in queries.captured_queries]


def test_a_publish_batch_costs_what_it_cost_before_the_step_was_shared(workspace, use_client, settings):
    """Measured on the pipeline before the step refactor: the claim, the read of the targets with
    their posts and accounts, then per answer written on its own one transaction (the post's row
    lock, the fenced write, the entries read back, tracking) and, for the answer that finishes the
    post, its final status and event. A change here is a change to the hot path's cost."""
    settings.PUBLISH_ATTEMPT_THREADS = 1  # one answer at a time: the count does not depend on timing
    use_client(InstantClient(Platform.BLUESKY))
    assert len(_batch_queries(workspace, 1, "s")) == 11
    assert len(_batch_queries(workspace, 3, "l")) == 23
