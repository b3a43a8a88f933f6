"""mediaFit auto on the post side: which variants a post needs (``media.fitting`` makes them),
for its own media and for each of its thread items' media, on every entry that fits. Shared by
create, the changes that rebuild entries and the occurrences of a recurring series, and by the
publisher and the record, which look the same variants up."""

from __future__ import annotations

from media.fitting import variants_request
from media.selectors import media_kinds
from platforms.base import Platform
from platforms.media_rules import PostType, post_type_of
from posts.models import ContentType, Post, PostTarget


def thread_item_type(kinds: list[str]) -> str:
    """The content type a thread item with media of these kinds is published as (TEXT with none)."""
    if not kinds:
        return ContentType.TEXT
    if len(kinds) > 1:
        return ContentType.CAROUSEL
    return {"image": ContentType.IMAGE, "video": ContentType.VIDEO}.get(kinds[0], ContentType.DOCUMENT)


def thread_item_post_type(platform: Platform, kinds: list[str]) -> PostType:
    """The post type whose rules a thread item's media is checked and fitted by (items take no
    options of their own)."""
    return post_type_of(platform, content_type=thread_item_type(kinds), options={}, kinds=kinds)


def post_fits(post: Post, targets: list[PostTarget], kinds: dict[str, str]) -> list[tuple[str, str, str]]:
    """(original URL, platform, post type) of every variant the fitted entries among ``targets``
    send: the post's media under the entry's post type, and each thread item's media under the
    item's. ``kinds``: URL → kind of every URL the post names ("" where unknown)."""
    urls = list(post.media_urls or [])
    items = [list(item.get("mediaUrls") or []) for item in post.thread or []]
    wanted: list[tuple[str, str, str]] = []
    for target in targets:
        if not target.media_fit:
            continue
        platform = Platform(target.platform)
        if urls:
            post_type = post_type_of(
                platform,
                content_type=post.content_type,
                options=target.config or {},
                kinds=[kinds.get(url, "") for url in urls],
            )
            wanted += [(url, target.platform, post_type.value) for url in urls]
        for item_urls in items:
            item_type = thread_item_post_type(platform, [kinds.get(url, "") for url in item_urls])
            wanted += [(url, target.platform, item_type.value) for url in item_urls]
    return list(dict.fromkeys(wanted))


def media_urls_of(post: Post) -> list[str]:
    """Every URL of the post's media and of its thread items' media, each once."""
    thread = [url for item in post.thread or [] for url in item.get("mediaUrls") or []]
    return list(dict.fromkeys([*(post.media_urls or []), *thread]))


def request_fits(post: Post, targets: list[PostTarget]) -> None:
    """Queue (on the media queue, once the caller's transaction commits) a variant of each file
    of ``post`` (its own and its thread items') for each fitted entry's platform and post type,
    so it is ready before the scheduled time; one that exists already is shared."""
    if not any(t.media_fit for t in targets):
        return
    urls = media_urls_of(post)
    if not urls:
        return
    kinds = dict(zip(urls, media_kinds(workspace_id=str(post.workspace_id), urls=urls), strict=True))
    variants_request(workspace_id=str(post.workspace_id), wanted=post_fits(post, targets, kinds))
