"""``crosspost analytics ...`` and ``crosspost ai ...``."""

from __future__ import annotations

import datetime as dt
import time
from typing import Annotated, Any

import typer
from rich.table import Table

from crosspost.cli.common import App, JsonOption, api, cell, console, number, print_json, show

analytics = App(help="Views, likes, comments and shares across platforms.")
ai = App(help="AI helpers.")

From = Annotated[str | None, typer.Option("--from", help="Start instant or date (default: 30 days ago).")]
To = Annotated[str | None, typer.Option("--to", help="End instant or date (default: now).")]
Platforms = Annotated[list[str] | None, typer.Option("--platform", help="Only these platforms (repeatable).")]
METRICS = ("views", "likes", "comments", "shares", "followers", "postsCount", "engagementRate")


def _window(start: str | None, end: str | None, platforms: list[str] | None = None) -> dict[str, Any]:
    """The period asked for; by default the last 30 days up to now (the API requires both ends)."""
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    return {
        "from_": start or (now - dt.timedelta(days=30)),
        "to": end or now,
        "platforms": platforms,
    }


@analytics.command("overview")
def overview(start: From = None, end: To = None, platform: Platforms = None, as_json: JsonOption = False) -> None:
    """Totals with the change against the previous period."""
    with api(as_json) as client:
        body = client.get_analytics_overview(**_window(start, end, platform))
    if as_json:
        print_json(body)
        return
    table = Table(title="overview")
    table.add_column("metric", style="bold", no_wrap=True)
    for column in ("value", "previous period", "change"):
        table.add_column(column, justify="right", no_wrap=True)
    for name, metric in body.items():
        if isinstance(metric, dict) and "value" in metric:
            delta = metric.get("deltaPercent")
            change = "" if delta is None else f"{delta:+.1f}%"
            value, previous = metric.get("value"), metric.get("previousValue")
            shown = "no data" if value is None else number(value)
            table.add_row(name, shown, "" if previous is None else number(previous), change)
    console.print(table)
    if body.get("partialMetrics"):
        console.print(f"Partial (some platforms do not report them): {cell(body['partialMetrics'])}")
    console.print(f"Figures last synced: {body.get('lastSyncedAt') or 'never'}")


@analytics.command("timeseries")
def timeseries(
    start: From = None,
    end: To = None,
    platform: Platforms = None,
    granularity: Annotated[str | None, typer.Option(help="DAILY, WEEKLY or MONTHLY.")] = None,
    as_json: JsonOption = False,
) -> None:
    """The figures per day, week or month."""
    with api(as_json) as client:
        body = client.get_analytics_timeseries(granularity=granularity, **_window(start, end, platform))
        show(body, as_json, rows="points", columns=("date", *METRICS))


@analytics.command("breakdown")
def breakdown(start: From = None, end: To = None, as_json: JsonOption = False) -> None:
    """The figures per platform."""
    with api(as_json) as client:
        body = client.get_analytics_breakdown(**_window(start, end))
        show(body, as_json, rows="platforms", columns=("platform", "views", "likes", "comments", "shares"))


@analytics.command("posts")
def posts(
    start: From = None,
    end: To = None,
    platform: Platforms = None,
    sort_by: Annotated[str | None, typer.Option("--sort-by", help="VIEWS, LIKES, ..., PUBLISHED_AT.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=100)] = 20,
    page: Annotated[int, typer.Option(min=1)] = 1,
    as_json: JsonOption = False,
) -> None:
    """Published posts with their figures."""
    with api(as_json) as client:
        body = client.list_analytics_posts(sort_by=sort_by, limit=limit, page=page, **_window(start, end, platform))
        if not as_json:
            body = {**body, "posts": [{**p, **(p.get("metrics") or {})} for p in body["posts"]]}
        show(body, as_json, rows="posts", columns=("platform", "publishedAt", "title", "views", "likes", "comments"))


@analytics.command("sync")
def sync(as_json: JsonOption = False) -> None:
    """Fetch fresh figures from the platforms (once per 10 minutes)."""
    with api(as_json) as client:
        show(client.request_analytics_sync(), as_json)


@analytics.command("sync-status")
def sync_status(as_json: JsonOption = False) -> None:
    with api(as_json) as client:
        columns = ("platform", "accountName", "status", "lastSyncedAt", "lastErrorMessage")
        show(client.get_analytics_sync_status(), as_json, rows="platforms", columns=columns)


@ai.command("image")
def image(
    prompt: str,
    aspect_ratio: Annotated[str, typer.Option("--aspect-ratio")] = "1:1",
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Wait for the image.")] = True,
    timeout: Annotated[float, typer.Option(help="Seconds to wait.")] = 120,
    as_json: JsonOption = False,
) -> None:
    """Generate an image from a prompt."""
    with api(as_json) as client:
        job = client.create_ai_image(prompt=prompt, aspect_ratio=aspect_ratio)
        deadline = time.monotonic() + timeout
        while wait and job.get("status") in ("queued", "processing") and time.monotonic() < deadline:
            time.sleep(1)
            job = client.get_ai_image(job["jobId"])
        show(job, as_json, title="image")


@ai.command("caption")
def caption(
    prompt: str,
    platform: Annotated[str | None, typer.Option("--platform")] = None,
    as_json: JsonOption = False,
) -> None:
    """Write a caption for a post."""
    with api(as_json) as client:
        show(client.create_caption(prompt=prompt, platform=platform), as_json, title="caption")
