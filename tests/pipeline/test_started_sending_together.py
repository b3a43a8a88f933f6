"""The calls of a batch that leave at the same moment record their start in one statement
(``claims.claims_started_sending``, run as one ``work.Together`` errand): each claim is still
fenced by its own lease, and each call gets its own answer."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from platforms.base import Platform
from posts.models import PostTarget
from posts.pipeline.claims import BOOK_KEY, SENDING_KEY, claim_targets, claims_started_sending
from tests.pipeline.helpers import fake_account, make_post, targets_of

pytestmark = pytest.mark.django_db(transaction=True)


def test_three_starts_in_one_statement_a_taken_over_claim_answered_false(workspace):
    accounts = [fake_account(workspace, Platform.MASTODON, f"s{i}") for i in range(3)]
    post = make_post(workspace, accounts, text="three at once")
    ids = [target.id for target in targets_of(post)]
    claims = claim_targets(ids, now=timezone.now(), lease=dt.timedelta(seconds=180))
    assert len(claims) == 3
    # The second was taken over meanwhile (a sweeper, another worker): its lease is another now.
    taken = claims[1]
    PostTarget.objects.filter(id=taken.target_id).update(lease_until=taken.lease_until + dt.timedelta(seconds=1))
    stale = [*claims[:1], dataclasses.replace(taken), *claims[2:]]

    with CaptureQueriesContext(connection) as queries:
        answers = claims_started_sending(stale)

    assert answers == [True, False, True]
    assert len(queries.captured_queries) == 1
    books = {t.id: (t.remote_state or {}).get(BOOK_KEY, {}) for t in PostTarget.objects.filter(id__in=ids)}
    assert books[claims[0].target_id][SENDING_KEY] == claims[0].lease_until.isoformat()
    assert books[claims[2].target_id][SENDING_KEY] == claims[2].lease_until.isoformat()
    assert SENDING_KEY not in books[taken.target_id]
    assert claims_started_sending([]) == []
