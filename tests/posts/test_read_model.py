"""The list's read model (posts.read_model): stored records answer only while the rows they were
rendered from are unchanged, whoever changes them and however (the ORM, the pipeline's own SQL, a
preview made later, an entry added or removed), and the body stays the bytes a fresh rendering
gives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from rest_framework.renderers import JSONRenderer

from media.models import MediaFile, PreviewStatus
from posts import read_model
from posts.models import Post, PostRecord, PostTarget
from posts.rendering import post_record
from posts.selectors import PageEntry, PostPage
from tests.factories.posts import PostFactory, PostTargetFactory, uploaded

URL = "/api/v1/social-posts"


def fresh_body(workspace: Any) -> bytes:
    """The list body rendered from the model instances as they are now (no read model)."""
    posts = list(Post.objects.filter(workspace=workspace).order_by("-created_at", "-id"))
    return JSONRenderer().render({"posts": [post_record(p) for p in posts], "total": len(posts), "hasMore": False})


@pytest.fixture
def posts(workspace: Any) -> dict[str, Any]:
    image = uploaded(workspace, "image")
    with_media = PostFactory(workspace=workspace, media_urls=[image], content_type="IMAGE", text="media")
    PostTargetFactory(post=with_media, platform="MASTODON")
    plain = PostFactory(workspace=workspace, text="plain")
    PostTargetFactory(post=plain, platform="BLUESKY")
    PostTargetFactory(post=plain, platform="MASTODON")
    return {"image": image, "with_media": with_media, "plain": plain}


def _sql(statement: str, params: list[Any]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


CHANGES: dict[str, Callable[[dict[str, Any]], object]] = {
    # The pipeline writes entries with its own SQL, updated_at untouched.
    "an entry's status by SQL": lambda p: _sql(
        "UPDATE posts_posttarget SET status = 'FAILED', error_code = 'x', error_message = 'm' WHERE post_id = %s",
        [p["plain"].id],
    ),
    "the post's text by SQL": lambda p: _sql("UPDATE posts_post SET text = 'changed' WHERE id = %s", [p["plain"].id]),
    "the post through the ORM": lambda p: Post.objects.filter(pk=p["plain"].pk).update(timezone="Europe/Berlin"),
    "an entry added": lambda p: PostTargetFactory(post=p["with_media"], platform="BLUESKY"),
    "an entry removed": lambda p: PostTarget.objects.filter(post=p["plain"], platform="BLUESKY").delete(),
    "a preview made later": lambda p: MediaFile.objects.filter(public_url=p["image"]).update(
        preview_status=PreviewStatus.READY, preview_key="previews/x.webp"
    ),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_changed_row_is_rendered_again(api: Any, workspace: Any, posts: dict[str, Any], change: str) -> None:
    first = api.get(URL)
    assert first.content == fresh_body(workspace)
    assert PostRecord.objects.count() == 2  # both stored by the first list
    CHANGES[change](posts)
    after = api.get(URL)
    assert after.content == fresh_body(workspace)
    assert after.content != first.content


def test_a_current_record_is_answered_as_stored(api: Any, posts: dict[str, Any]) -> None:
    """The stored body is what the list answers while its stamp matches (proof that the read path
    reads the read model): a body edited in place, same stamp, comes back as edited."""
    api.get(URL)
    record = PostRecord.objects.get(post_id=posts["plain"].id)
    PostRecord.objects.filter(pk=record.pk).update(body=record.body.replace('"plain"', '"stored"'))
    assert '"text":"stored"' in api.get(URL).content.decode()


def test_another_renderer_renders_again(api: Any, workspace: Any, posts: dict[str, Any], monkeypatch: Any) -> None:
    api.get(URL)
    PostRecord.objects.update(body="{}")  # what another release stored under its own name
    monkeypatch.setattr(read_model, "renderer", lambda: "another-release")
    assert api.get(URL).content == fresh_body(workspace)
    assert all(stamp.startswith("another-release:") for stamp in PostRecord.objects.values_list("stamp", flat=True))


def test_a_deleted_post_takes_its_record_along(api: Any, posts: dict[str, Any]) -> None:
    api.get(URL)
    posts["plain"].delete()
    assert list(PostRecord.objects.values_list("post_id", flat=True)) == [posts["with_media"].id]


def test_a_post_deleted_after_the_page_was_read_is_left_out(workspace: Any, posts: dict[str, Any]) -> None:
    gone = PageEntry(post_id="post_gone", stamp="s", body=None)
    kept = PageEntry(post_id=posts["plain"].id, stamp="s", body=None)
    bodies = read_model.page_bodies(PostPage(entries=[gone, kept], total=2, has_more=False), workspace_id=workspace.id)
    assert bodies == [JSONRenderer().render(post_record(posts["plain"]))]


def test_records_of_other_workspaces_are_never_answered(api: Any, posts: dict[str, Any]) -> None:
    """page_bodies renders only the workspace's own posts, whatever ids it is given."""
    other: Post = PostFactory(text="other workspace")
    entry = PageEntry(post_id=other.id, stamp="s", body=None)
    page = PostPage(entries=[entry], total=1, has_more=False)
    assert read_model.page_bodies(page, workspace_id=posts["plain"].workspace_id) == []
