"""Factories of the posts app: connected accounts (made-up tokens), uploaded media rows, posts
and their platform entries."""

from __future__ import annotations

from typing import Any

import factory

from accounts.models import SocialAccount
from media.models import MediaFile
from posts.models import Post, PostStatus, PostTarget, TargetStatus
from tests.factories import WorkspaceFactory
from tests.factories.accounts import SocialAccountFactory
from tests.factories.media import MediaFileFactory
from workspaces.models import Workspace

_MEDIA_KINDS = {
    "image": ("photo.jpg", "image/jpeg"),
    "video": ("clip.mp4", "video/mp4"),
    "document": ("deck.pdf", "application/pdf"),
}


def account(workspace: Workspace, platform: str = "MASTODON", **kwargs: Any) -> SocialAccount:
    if platform == "FACEBOOK":
        kwargs.setdefault("page_id", f"page{SocialAccount.objects.count() + 1000}")
    return SocialAccountFactory(workspace=workspace, platform=platform, **kwargs)  # type: ignore[no-any-return]


def uploaded(workspace: Workspace, kind: str = "image") -> str:
    """The publicUrl of an uploaded file of ``kind`` in ``workspace``."""
    file_name, mime_type = _MEDIA_KINDS[kind]
    media: MediaFile = MediaFileFactory(
        workspace=workspace, kind=kind, file_name=file_name, mime_type=mime_type, uploaded=True
    )
    return media.public_url


class PostFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Post

    workspace = factory.SubFactory(WorkspaceFactory)
    status = PostStatus.DRAFT
    content_type = "TEXT"
    text = "Hello"
    timezone = "UTC"


class PostTargetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PostTarget

    post = factory.SubFactory(PostFactory)
    platform = "MASTODON"
    account = factory.LazyAttribute(lambda t: account(t.post.workspace, t.platform))
    account_name = factory.LazyAttribute(lambda t: t.account.display_name)
    status = TargetStatus.PENDING
    text = factory.LazyAttribute(lambda t: t.post.text)
