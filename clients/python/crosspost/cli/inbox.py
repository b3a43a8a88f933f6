"""``crosspost comments ...``: the inbox of comments under the published posts."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from crosspost.cli.common import App, JsonOption, api, console, show

comments = App(help="Comments under the published posts (and Google Business reviews): read, reply, moderate.")

COMMENT_COLUMNS = ("id", "platform", "createdAt", "author", "text", "answered", "hidden")
ACTION_FIELDS = ("id", "commentId", "kind", "status", "text", "errorCode", "errorMessage")


def _rows(body: dict[str, Any]) -> dict[str, Any]:
    """The list as a table shows it: the author by name (or handle)."""
    rows = [
        {**c, "author": (c.get("author") or {}).get("name") or (c.get("author") or {}).get("handle")}
        for c in body["comments"]
    ]
    return {**body, "comments": rows}


@comments.command("list")
def comments_list(
    unanswered: Annotated[
        bool, typer.Option("--unanswered", help="Only others' comments without a reply of the account's.")
    ] = False,
    hidden: Annotated[
        bool | None, typer.Option("--hidden/--visible", help="Only hidden, or only visible ones.")
    ] = None,
    platform: Annotated[list[str] | None, typer.Option("--platform", help="A platform (repeat it).")] = None,
    account_id: Annotated[str | None, typer.Option("--account", help="Only under this account's posts.")] = None,
    post_id: Annotated[str | None, typer.Option("--post", help="Only under this post.")] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Written at or after (2026-05-01 or an instant).")
    ] = None,
    search: Annotated[str | None, typer.Option("--search", "-q", help="Text, author name or handle contains.")] = None,
    limit: Annotated[int, typer.Option("--limit", help="How many (newest first).")] = 20,
    after: Annotated[str | None, typer.Option("--after", help="A nextCursor from an earlier page.")] = None,
    as_json: JsonOption = False,
) -> None:
    """The inbox, newest first."""
    with api(as_json) as client:
        body = client.list_comments(
            unanswered=True if unanswered else None,
            hidden=hidden,
            platforms=[p.upper() for p in platform] if platform else None,
            account_id=account_id,
            post_id=post_id,
            since=since,
            q=search,
            limit=limit,
            after=after,
        )
        if as_json:
            show(body, True)
            return
        show(_rows(body), False, rows="comments", columns=COMMENT_COLUMNS)
        if body.get("hasMore"):
            console.print(f"more: --after {body['nextCursor']}", highlight=False)


@comments.command("get")
def comments_get(comment_id: str, as_json: JsonOption = False) -> None:
    """One comment, with the actions asked for on it."""
    with api(as_json) as client:
        show(client.get_comment(comment_id), as_json, title="comment")


@comments.command("thread")
def comments_thread(post_id: str, as_json: JsonOption = False) -> None:
    """A post's comments as a tree per platform."""
    with api(as_json) as client:
        body = client.list_post_comments(post_id)
        if as_json:
            show(body, True)
            return
        for entry in body["entries"]:
            console.print(f"[bold]{entry['platform']}[/bold] (synced {entry['lastSyncedAt'] or 'never'})")
            _print_nodes(entry["comments"], depth=1)


def _print_nodes(nodes: list[dict[str, Any]], depth: int) -> None:
    for node in nodes:
        author = (node.get("author") or {}).get("name") or (node.get("author") or {}).get("handle") or "?"
        marks = " ".join(m for m, on in (("(ours)", node["fromAccount"]), ("(hidden)", node["hidden"])) if on)
        console.print(f"{'  ' * depth}{node['id']} {author}: {node['text']} {marks}".rstrip(), highlight=False)
        _print_nodes(node.get("replies") or [], depth + 1)


@comments.command("reply")
def comments_reply(
    comment_id: str,
    text: str,
    idempotency_key: Annotated[
        str | None, typer.Option("--idempotency-key", help="Send the same key again to retry without a second reply.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Reply to a comment as the account (publicly, on the platform)."""
    with api(as_json) as client:
        action = client.reply_to_comment(comment_id, text, idempotency_key=idempotency_key)
        show(action, as_json, title="reply", columns=ACTION_FIELDS)


@comments.command("hide")
def comments_hide(comment_id: str, as_json: JsonOption = False) -> None:
    """Hide a comment from the post's public view."""
    with api(as_json) as client:
        show(client.hide_comment(comment_id), as_json, title="hide", columns=ACTION_FIELDS)


@comments.command("unhide")
def comments_unhide(comment_id: str, as_json: JsonOption = False) -> None:
    """Show a hidden comment again."""
    with api(as_json) as client:
        show(client.unhide_comment(comment_id), as_json, title="unhide", columns=ACTION_FIELDS)


@comments.command("like")
def comments_like(comment_id: str, as_json: JsonOption = False) -> None:
    """Like a comment as the account."""
    with api(as_json) as client:
        show(client.like_comment(comment_id), as_json, title="like", columns=ACTION_FIELDS)


@comments.command("delete")
def comments_delete(
    comment_id: str,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Delete a comment on its platform (it cannot be undone)."""
    if not yes:
        typer.confirm(f"Delete {comment_id} on its platform? It cannot be undone", abort=True, err=True)
    with api(as_json) as client:
        show(client.delete_comment(comment_id), as_json, title="delete", columns=ACTION_FIELDS)


@comments.command("sync")
def comments_sync(as_json: JsonOption = False) -> None:
    """Read the comments of every tracked post now (once per 10 minutes)."""
    with api(as_json) as client:
        show(client.request_comment_sync(), as_json)
