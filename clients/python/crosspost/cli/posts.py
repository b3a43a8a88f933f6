"""``crosspost posts ...``."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from crosspost.cli.common import App, JsonOption, api, print_json, read_body, show, usage_error, wait_for_post
from crosspost.client import Client
from crosspost.targets import content_type_for, targets_for

app = App(help="Create, schedule, publish and inspect posts.")

POST_COLUMNS = ("id", "status", "contentType", "scheduledAt", "text")
POST_FIELDS = ("id", "status", "contentType", "text", "scheduledAt", "timezone", "mediaUrls", "recurringPostId")
ENTRY_COLUMNS = ("platform", "accountName", "status", "postUrl", "error")
Accounts = Annotated[
    list[str] | None, typer.Option("--account", "-a", help="Connected account id (repeat for several).")
]
Media = Annotated[list[str] | None, typer.Option("--media", "-m", help="A media URL, or a local file to upload.")]
Text = Annotated[str | None, typer.Option("--text", "-t")]
ScheduleAt = Annotated[str | None, typer.Option("--schedule-at", help="ISO 8601 instant; omitted: publish now.")]
Timezone = Annotated[str, typer.Option("--timezone")]
BodyFile = Annotated[str | None, typer.Option("--body-file", help="JSON object with more fields ('-': stdin).")]


def show_post(post: Mapping[str, Any], as_json: bool) -> None:
    """A post as a table of its fields, then one row per platform entry (status, URL, error)."""
    if as_json:
        print_json(post)
        return
    show(post, False, columns=POST_FIELDS, title="post")
    entries = [
        {
            "platform": entry.get("platform"),
            "accountName": entry.get("accountName"),
            "status": entry.get("status"),
            "postUrl": entry.get("postUrl"),
            "error": " ".join(
                part
                for part in (entry.get("errorCode") and f"[{entry['errorCode']}]", entry.get("errorMessage"))
                if part
            ),
        }
        for entry in post.get("platforms") or []
    ]
    if entries:
        show(entries, False, columns=ENTRY_COLUMNS, title="platforms")


def _media_urls(client: Client, media: list[str]) -> list[str]:
    """URLs kept as they are; local files uploaded first."""
    urls = []
    for item in media:
        if item.startswith(("http://", "https://")):
            urls.append(item)
        elif Path(item).is_file():
            urls.append(client.upload(item))
        else:
            raise usage_error(f"--media {item}: neither a URL nor a file")
    return urls


def _targets(client: Client, account_ids: list[str]) -> dict[str, Any]:
    if not account_ids:
        return {}
    known = {a["id"]: a for a in client.list_accounts()["accounts"]}
    unknown = [i for i in account_ids if i not in known]
    if unknown:
        raise usage_error(f"no connected account with id {', '.join(unknown)} (see `crosspost accounts list`)")
    return targets_for(known[i] for i in account_ids)


def _post_body(
    client: Client,
    *,
    body_file: str | None,
    accounts: list[str] | None,
    media: list[str] | None,
    text: str | None,
    schedule_at: str | None,
    timezone: str,
    draft: bool = False,
) -> dict[str, Any]:
    body = read_body(body_file)
    body.update(_targets(client, accounts or []))
    if media:
        body["mediaUrls"] = _media_urls(client, media)
    if text is not None:
        body["text"] = text
    if schedule_at:
        body["scheduledAt"] = schedule_at
    if draft:
        body["saveAsDraft"] = True
    body.setdefault("timezone", timezone)
    body.setdefault("contentType", content_type_for(body.get("mediaUrls") or []))
    if not body.get("platforms"):
        raise usage_error("say where to post: --account ID (repeatable) or platforms in --body-file")
    return body


@app.command()
def create(
    account: Accounts = None,
    media: Media = None,
    text: Text = None,
    schedule_at: ScheduleAt = None,
    timezone: Timezone = "UTC",
    draft: Annotated[bool, typer.Option("--draft", help="Save as a draft.")] = False,
    body_file: BodyFile = None,
    wait: Annotated[bool, typer.Option("--wait", help="Wait until the post reaches a final status.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Create a post (now, scheduled, or as a draft)."""
    with api(as_json) as client:
        body = _post_body(
            client,
            body_file=body_file,
            accounts=account,
            media=media,
            text=text,
            schedule_at=schedule_at,
            timezone=timezone,
            draft=draft,
        )
        created = client.create_post(body)
        if wait:
            show_post(wait_for_post(client, created["postId"], as_json=as_json), as_json)
        else:
            show(created, as_json, title="post")


@app.command()
def validate(
    account: Accounts = None,
    media: Media = None,
    text: Text = None,
    schedule_at: ScheduleAt = None,
    timezone: Timezone = "UTC",
    body_file: BodyFile = None,
    as_json: JsonOption = False,
) -> None:
    """Check a post against every platform's rules without creating it."""
    with api(as_json) as client:
        body = _post_body(
            client,
            body_file=body_file,
            accounts=account,
            media=media,
            text=text,
            schedule_at=schedule_at,
            timezone=timezone,
        )
        show(client.validate_post(body), as_json, title="validation")


@app.command("list")
def list_(
    status: Annotated[list[str] | None, typer.Option("--status", help="DRAFT, SCHEDULED, ... (repeatable)")] = None,
    limit: Annotated[int, typer.Option(min=1, max=100)] = 20,
    all_pages: Annotated[bool, typer.Option("--all", help="Every page, not just the first.")] = False,
    as_json: JsonOption = False,
) -> None:
    """List posts, newest first."""
    with api(as_json) as client:
        if all_pages:
            posts = list(client.iter_posts(statuses=status, limit=limit))
            show({"posts": posts, "total": len(posts), "hasMore": False}, as_json, rows="posts", columns=POST_COLUMNS)
        else:
            show(client.list_posts(statuses=status, limit=limit), as_json, rows="posts", columns=POST_COLUMNS)


@app.command()
def get(post_id: str, as_json: JsonOption = False) -> None:
    """Show one post."""
    with api(as_json) as client:
        show_post(client.get_post(post_id), as_json)


@app.command()
def results(post_id: str, as_json: JsonOption = False) -> None:
    """Each platform's outcome of a post."""
    with api(as_json) as client:
        columns = ("platform", "status", "accountName", "platformPostId", "errorMessage")
        show(client.get_post_results(post_id), as_json, rows="results", columns=columns)


@app.command()
def update(
    post_id: str,
    text: Text = None,
    schedule_at: ScheduleAt = None,
    body_file: BodyFile = None,
    as_json: JsonOption = False,
) -> None:
    """Change a draft or scheduled post."""
    body = read_body(body_file)
    if text is not None:
        body["text"] = text
    if schedule_at:
        body["scheduledAt"] = schedule_at
    if not body:
        raise usage_error("nothing to change: give --text, --schedule-at or --body-file")
    with api(as_json) as client:
        show_post(client.update_post(post_id, body), as_json)


def _per_platform(values: list[str] | None, option: str) -> list[tuple[str, str]]:
    pairs = []
    for value in values or []:
        platform, sep, text = value.partition("=")
        if not sep or not platform:
            raise usage_error(f"{option} takes PLATFORM=VALUE, got {value!r}")
        pairs.append((platform.strip().upper(), text))
    return pairs


@app.command()
def edit(
    post_id: str,
    text: Text = None,
    title: Annotated[str | None, typer.Option("--title", help="New title where the platform's posts have one.")] = None,
    platform_text: Annotated[
        list[str] | None, typer.Option("--platform-text", help="PLATFORM=TEXT, a platform's own new text (repeatable).")
    ] = None,
    platform_title: Annotated[
        list[str] | None, typer.Option("--platform-title", help="PLATFORM=TITLE, a platform's own new title.")
    ] = None,
    media: Annotated[
        list[str] | None,
        typer.Option(
            "--media",
            "-m",
            help="The post's new media: a media URL or a local file to upload (repeatable; replaces them all).",
        ),
    ] = None,
    alt: Annotated[
        list[str] | None, typer.Option("--alt", help="Alt text of each new medium, in order (repeatable).")
    ] = None,
    no_media: Annotated[bool, typer.Option("--no-media", help="Remove the post's media (a text post).")] = False,
    as_json: JsonOption = False,
) -> None:
    """Edit a published post on its platforms (each platform that can take the change)."""
    body: dict[str, Any] = {}
    if text is not None:
        body["text"] = text
    if title is not None:
        body["title"] = title
    if platform_text:
        body["platformTexts"] = [{"platform": p, "text": t} for p, t in _per_platform(platform_text, "--platform-text")]
    if platform_title:
        body["platformTitles"] = [
            {"platform": p, "title": t} for p, t in _per_platform(platform_title, "--platform-title")
        ]
    if media and no_media:
        raise usage_error("--media and --no-media contradict each other")
    if no_media:
        body.update(contentType="TEXT", mediaUrls=[])
    if alt:
        body["mediaAltTexts"] = list(alt)
    if not body and not media:
        raise usage_error("nothing to change: give --text, --title, --platform-text, --platform-title or --media")
    with api(as_json) as client:
        if media:
            body["mediaUrls"] = _media_urls(client, media)
            body["contentType"] = content_type_for(body["mediaUrls"])
        answer = client.edit_post(post_id, body)
        show(answer if as_json else answer["editReport"], as_json, rows="entries", columns=_REPORT_COLUMNS)


_REPORT_COLUMNS = ("platform", "outcome", "fields", "reason")


@app.command()
def unpublish(
    post_id: str,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Remove a published post from its platforms, keeping its record here."""
    if not yes and not typer.confirm(f"Remove post {post_id} from every platform that can delete it?"):
        raise typer.Exit(1)
    with api(as_json) as client:
        answer = client.unpublish_post(post_id)
        show(answer if as_json else answer["unpublishReport"], as_json, rows="entries", columns=_REPORT_COLUMNS)


@app.command()
def delete(post_id: str, as_json: JsonOption = False) -> None:
    """Delete a post's record (a published post stays on its platforms: see unpublish)."""
    with api(as_json) as client:
        show(client.delete_post(post_id), as_json)


@app.command()
def publish(
    post_id: str,
    schedule_at: ScheduleAt = None,
    wait: Annotated[bool, typer.Option("--wait", help="Wait until the post reaches a final status.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Publish (or schedule) a draft."""
    with api(as_json) as client:
        answer = client.publish_post(post_id, scheduled_at=schedule_at)
        if wait:
            show_post(wait_for_post(client, post_id, as_json=as_json), as_json)
        else:
            show(answer, as_json)


@app.command()
def retry(
    post_id: str,
    platform: Annotated[list[str] | None, typer.Option("--platform", help="Entry id or platform name.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Retry the failed platforms of a post."""
    with api(as_json) as client:
        show(client.retry_post(post_id, platform_ids=platform), as_json)


@app.command()
def bulk(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="CSV with a header, or JSON lines.")],
    account: Accounts = None,
    timezone: Timezone = "UTC",
    as_json: JsonOption = False,
) -> None:
    """Schedule many posts at once. CSV columns: text, scheduledAt, mediaUrls (space-separated),
    contentType; a JSON lines file holds one post item per line."""
    items = _bulk_items(file)
    if not 1 <= len(items) <= 100:
        raise usage_error(f"{file} holds {len(items)} posts; a batch takes 1 to 100")
    with api(as_json) as client:
        body = {**_targets(client, account or []), "timezone": timezone, "posts": items}
        if not body.get("platforms"):
            raise usage_error("say where to post: --account ID (repeatable)")
        show(client.bulk_create_posts(body), as_json, rows="results", columns=("postId", "success", "errorMessage"))


def _bulk_items(file: Path) -> list[dict[str, Any]]:
    text = file.read_text()
    if file.suffix.lower() == ".csv":
        items = []
        for row in csv.DictReader(text.splitlines()):
            item: dict[str, Any] = {k: v for k, v in row.items() if k and v}
            item["mediaUrls"] = (item.pop("mediaUrls", "") or "").split()
            item.setdefault("contentType", content_type_for(item["mediaUrls"]))
            items.append(item)
        return items
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError as exc:
        raise usage_error(f"{file}: not JSON lines ({exc})")
