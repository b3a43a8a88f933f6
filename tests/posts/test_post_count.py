"""The workspace's post count kept by triggers (``PostCount``, posts migration 0010): the
unfiltered list's ``total`` is read from it, so it must equal a count of the workspace's posts after
every way posts are written (one by one, in bulk, raw SQL across workspaces, deletes of one and of
many), and a deleted workspace leaves no count behind."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.models import Sum

from posts.models import POST_COUNT_SHARDS, Post, PostCount
from tests.concurrency import raised, run_concurrently
from tests.factories.posts import PostFactory
from workspaces.models import Workspace

URL = "/api/v1/social-posts"


def counted(workspace: Any) -> int:
    return int(PostCount.objects.filter(workspace=workspace).aggregate(n=Sum("posts"))["n"] or 0)


def assert_counts_match(*workspaces: Any) -> None:
    for workspace in workspaces:
        assert counted(workspace) == Post.objects.filter(workspace=workspace).count()
        assert PostCount.objects.filter(workspace=workspace).count() <= POST_COUNT_SHARDS


def test_every_write_keeps_the_count_and_the_list_total_exact(api: Any, workspace: Any, other_workspace: Any) -> None:
    assert api.get(URL).json()["total"] == 0
    assert counted(workspace) == 0
    one = PostFactory(workspace=workspace)
    Post.objects.bulk_create([PostFactory.build(workspace=workspace) for _ in range(5)])
    with connection.cursor() as cursor:  # one raw statement across two workspaces
        cursor.execute(
            "INSERT INTO posts_post (id, workspace_id, status, content_type, text, timezone, media_urls,"
            " media_alt_texts, thumbnail_url, late_policy, thread, first_comment, created_at, updated_at)"
            " SELECT 'post_raw_' || ws || g, ws, 'DRAFT', 'TEXT', '', 'UTC', '[]', '[]', '', 'publish', '[]', '{}',"
            " now(), now() FROM unnest(%s::text[]) ws, generate_series(1, 3) g",
            [[workspace.id, other_workspace.id]],
        )
    assert_counts_match(workspace, other_workspace)
    assert api.get(URL).json()["total"] == 9

    one.delete()
    Post.objects.filter(workspace=workspace, id__startswith="post_raw_").delete()
    assert_counts_match(workspace, other_workspace)
    body = api.get(URL, {"limit": 2}).json()
    assert (body["total"], body["hasMore"], len(body["posts"])) == (5, True, 2)
    assert api.get(URL, {"limit": 2, "offset": 4}).json()["hasMore"] is False

    Post.objects.filter(workspace=workspace).delete()
    assert_counts_match(workspace, other_workspace)
    assert api.get(URL).json() == {"posts": [], "total": 0, "hasMore": False}


def test_a_filtered_total_still_counts_what_matches(api: Any, workspace: Any) -> None:
    PostFactory(workspace=workspace, status="DRAFT")
    PostFactory(workspace=workspace, status="FAILED")
    assert api.get(URL).json()["total"] == 2
    assert api.get(URL, {"statuses": "FAILED"}).json()["total"] == 1


def test_a_deleted_workspace_leaves_no_count(workspace: Any) -> None:
    PostFactory(workspace=workspace)
    workspace_id = workspace.id
    Workspace.objects.filter(id=workspace_id).delete()
    assert not PostCount.objects.filter(workspace_id=workspace_id).exists()
    assert not Post.objects.filter(workspace_id=workspace_id).exists()


@pytest.mark.django_db(transaction=True)
def test_concurrent_creates_in_one_workspace_are_all_counted(workspace: Any) -> None:
    """Eight threads, each on its own connection, create posts in one workspace at once: whether
    they pick the same shard (and wait) or not, every post is counted once."""
    results = run_concurrently([lambda: [PostFactory(workspace=workspace) for _ in range(5)]] * 8)
    assert raised(results) == []
    assert counted(workspace) == Post.objects.filter(workspace=workspace).count() == 40
