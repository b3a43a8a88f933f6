"""Recent-posts listing and post metrics of every platform, through its real client against its
simulator: what was published is listed (and nothing before ``since``), and the figures a
platform reports are exactly those its capabilities row names."""

from __future__ import annotations

import datetime as dt

import pytest

from platforms.base import NotSupported, Platform
from platforms.capabilities import CAPABILITIES, METRICS
from tests.platforms.conftest import Harness

NO_LISTING = {Platform.TELEGRAM}  # the Bot API cannot read a chat's history


def test_recent_posts_lists_what_was_published_since(harness: Harness) -> None:
    client, creds = harness.client, harness.creds
    before = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    if harness.case.platform in NO_LISTING:
        with pytest.raises(NotSupported):
            client.list_recent_posts(creds, before)
        return
    first = harness.publish("first of two", target_id="tgt_list_1")
    second = harness.publish("second of two", target_id="tgt_list_2")
    listed = client.list_recent_posts(creds, before)
    ids = [post.platform_post_id for post in listed]
    assert {first.platform_post_id, second.platform_post_id} <= set(ids), ids
    assert len(ids) == len(set(ids)) == 2
    assert all(post.published_at >= before for post in listed)
    assert client.list_recent_posts(creds, dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5)) == []


def test_metrics_report_the_figures_the_table_names(harness: Harness) -> None:
    client, creds = harness.client, harness.creds
    reported = CAPABILITIES[harness.case.platform].metrics
    if not reported:
        with pytest.raises(NotSupported):
            client.fetch_post_metrics(creds, ["1"])
        return
    post = harness.publish("measure me", target_id="tgt_metrics")
    metrics = client.fetch_post_metrics(creds, [post.platform_post_id])
    assert set(metrics) == {post.platform_post_id}
    figures = metrics[post.platform_post_id]
    for name in METRICS:
        value = getattr(figures, name)
        if name in reported:
            assert isinstance(value, int) and value >= 0, (name, figures)
        else:
            assert value is None, (name, figures)


def test_metrics_for_many_posts_cross_every_batch_and_skip_unknown_ones(harness: Harness) -> None:
    """More ids than any platform takes in one call (X: 100), most of them unknown to the platform
    (deleted posts): the known posts' figures come back, the unknown ones are left out."""
    if not CAPABILITIES[harness.case.platform].metrics:
        return
    first = harness.publish("first measured", target_id="tgt_many_1").platform_post_id
    last = harness.publish("last measured", target_id="tgt_many_2").platform_post_id
    # Same shape as a real id of the platform (its last four characters replaced by digits, which
    # every platform's id alphabet has), minus any that happens to be one of the two published.
    candidates = [f"{first[:-4]}9{n:03d}" for n in range(1, 106)]
    unknown = [candidate for candidate in candidates if candidate not in {first, last}][:103]
    assert len(unknown) == 103
    metrics = harness.client.fetch_post_metrics(harness.creds, [first, *unknown, last])
    assert set(metrics) == {first, last}
