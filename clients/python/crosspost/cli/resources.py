"""``crosspost accounts|media|webhooks|recurring ...``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TransferSpeedColumn

from crosspost.cli.common import App, JsonOption, api, console, print_json, read_body, show

accounts = App(help="Connected social accounts.")
branding = App(help="How the hosted connect pages look.")
media = App(help="Media files.")
webhooks = App(help="Webhook endpoints and their deliveries.")
recurring = App(help="Recurring post series.")

ACCOUNT_COLUMNS = ("id", "platform", "displayName", "username", "status")
BRANDING_FIELDS = ("displayName", "logoUrl", "accentColor", "supportUrl", "platforms")
WEBHOOK_COLUMNS = ("id", "url", "active", "lastSuccessAt", "lastFailureAt")


# accounts ----------------------------------------------------------------------------------
@accounts.command("list")
def accounts_list(as_json: JsonOption = False) -> None:
    """The workspace's connected accounts."""
    with api(as_json) as client:
        show(client.list_accounts(), as_json, rows="accounts", columns=ACCOUNT_COLUMNS)


@accounts.command("get")
def accounts_get(account_id: str, as_json: JsonOption = False) -> None:
    """One account, disconnected ones included."""
    with api(as_json) as client:
        show(client.get_account(account_id), as_json, title="account")


@accounts.command("disconnect")
def accounts_disconnect(
    account_id: str,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Disconnect an account: its token is revoked and dropped, its unsent posts fail; history stays."""
    if not yes:
        typer.confirm(
            f"Disconnect {account_id}? Its scheduled posts to it fail and its series pause; "
            "connecting it again is the only way back",
            abort=True,
            err=True,
        )
    with api(as_json) as client:
        show(client.disconnect_account(account_id), as_json, title="account")


@accounts.command("connect")
def accounts_connect(
    platform: Annotated[str | None, typer.Argument(help="e.g. BLUESKY; omitted: a page to pick from.")] = None,
    redirect_url: Annotated[
        str | None, typer.Option("--redirect-url", help="Where the browser goes afterwards, with the outcome.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """A connect link (valid 24 h) to open in a browser."""
    with api(as_json) as client:
        link = client.create_connect_link(redirect_url=redirect_url)
        if platform:
            link = {**link, "url": f"{link['url']}/{platform.upper()}"}
        if as_json:
            print_json(link)
        else:
            console.print(f"Open this link to connect an account (valid until {link['expiresAt']}):")
            console.print(link["url"], soft_wrap=True, highlight=False)


@accounts.command("check")
def accounts_check(account_id: str, as_json: JsonOption = False) -> None:
    """Check an account's token with its platform now."""
    with api(as_json) as client:
        show(client.check_account(account_id), as_json, title="account")


# branding ----------------------------------------------------------------------------------
@branding.command("get")
def branding_get(as_json: JsonOption = False) -> None:
    """The connect pages' branding."""
    with api(as_json) as client:
        show(client.get_connect_branding(), as_json, title="branding")


@branding.command("set")
def branding_set(
    name: Annotated[str | None, typer.Option("--name", help="The name on the pages.")] = None,
    logo: Annotated[
        str | None, typer.Option("--logo", help="A PNG, JPEG or WebP file to upload, or the publicUrl of an upload.")
    ] = None,
    accent: Annotated[str | None, typer.Option("--accent", help="An accent colour, #rrggbb.")] = None,
    support_url: Annotated[str | None, typer.Option("--support-url", help="An https help link.")] = None,
    platforms: Annotated[
        list[str] | None, typer.Option("--platform", help="A platform to offer (repeat it); omitted: unchanged.")
    ] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Start from the defaults instead of the current branding.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Change the branding: the options given, the rest kept (or reset with --replace)."""
    with api(as_json) as client:
        current = {} if replace else client.get_connect_branding()
        body = {field: current.get(field) for field in BRANDING_FIELDS}
        if logo is not None and logo and not logo.startswith(("http://", "https://")):
            logo = client.upload(Path(logo))
        changes = {"displayName": name, "logoUrl": logo, "accentColor": accent, "supportUrl": support_url}
        body.update({field: value or None for field, value in changes.items() if value is not None})
        if platforms:
            body["platforms"] = [p.upper() for p in platforms]
        show(client.set_connect_branding(body), as_json, title="branding")


# media -------------------------------------------------------------------------------------
@media.command("upload")
def media_upload(
    files: Annotated[list[Path], typer.Argument(exists=True, dir_okay=False)],
    mime_type: Annotated[str | None, typer.Option("--mime-type")] = None,
    as_json: JsonOption = False,
) -> None:
    """Upload files; prints each public URL to use as a post's mediaUrls."""
    with api(as_json) as client:
        urls = []
        columns = (BarColumn(), DownloadColumn(), TransferSpeedColumn())
        with Progress(*columns, console=console, disable=as_json, transient=True) as progress:
            for file in files:
                task = progress.add_task(file.name, total=file.stat().st_size)

                def advance(sent: int, _total: int, task: TaskID = task) -> None:
                    progress.update(task, completed=sent)

                url = client.upload(file, mime_type=mime_type, progress=advance)
                urls.append({"fileName": file.name, "publicUrl": url})
        show({"uploads": urls}, as_json, rows="uploads", columns=("fileName", "publicUrl"))


# webhooks ----------------------------------------------------------------------------------
@webhooks.command("list")
def webhooks_list(as_json: JsonOption = False) -> None:
    with api(as_json) as client:
        show(client.list_webhooks(), as_json, rows="webhooks", columns=WEBHOOK_COLUMNS)


@webhooks.command("create")
def webhooks_create(url: str, as_json: JsonOption = False) -> None:
    """Register an endpoint; its signing secret is shown once."""
    with api(as_json) as client:
        show(client.create_webhook(url=url), as_json, title="webhook")


@webhooks.command("get")
def webhooks_get(webhook_id: str, as_json: JsonOption = False) -> None:
    with api(as_json) as client:
        show(client.get_webhook(webhook_id), as_json, title="webhook")


@webhooks.command("update")
def webhooks_update(
    webhook_id: str,
    url: Annotated[str | None, typer.Option("--url")] = None,
    active: Annotated[bool | None, typer.Option("--active/--inactive")] = None,
    body_file: Annotated[str | None, typer.Option("--body-file")] = None,
    as_json: JsonOption = False,
) -> None:
    with api(as_json) as client:
        show(client.update_webhook(webhook_id, read_body(body_file), url=url, active=active), as_json)


@webhooks.command("delete")
def webhooks_delete(webhook_id: str, as_json: JsonOption = False) -> None:
    with api(as_json) as client:
        show(client.delete_webhook(webhook_id), as_json)


@webhooks.command("test")
def webhooks_test(webhook_id: str, as_json: JsonOption = False) -> None:
    """Send a webhook.test event now."""
    with api(as_json) as client:
        show(client.test_webhook(webhook_id), as_json)


@webhooks.command("deliveries")
def webhooks_deliveries(webhook_id: str, limit: int = 20, as_json: JsonOption = False) -> None:
    with api(as_json) as client:
        columns = ("id", "event", "status", "attempts", "lastAttemptAt")
        show(client.list_webhook_deliveries(webhook_id, limit=limit), as_json, rows="deliveries", columns=columns)


@webhooks.command("redeliver")
def webhooks_redeliver(webhook_id: str, delivery_id: str, as_json: JsonOption = False) -> None:
    with api(as_json) as client:
        show(client.redeliver_webhook_delivery(webhook_id, delivery_id), as_json)


# recurring ---------------------------------------------------------------------------------
SERIES_COLUMNS = ("id", "status", "frequency", "nextOccurrenceAt", "text")


@recurring.command("list")
def recurring_list(limit: int = 20, as_json: JsonOption = False) -> None:
    with api(as_json) as client:
        show(client.list_recurring_posts(limit=limit), as_json, rows="recurringPosts", columns=SERIES_COLUMNS)


@recurring.command("get")
def recurring_get(series_id: str, as_json: JsonOption = False) -> None:
    with api(as_json) as client:
        show(client.get_recurring_post(series_id), as_json, title="series")


@recurring.command("occurrences")
def recurring_occurrences(series_id: str, limit: int = 10, as_json: JsonOption = False) -> None:
    with api(as_json) as client:
        show(client.list_recurring_occurrences(series_id, limit=limit), as_json, rows="occurrences")


@recurring.command("pause")
def recurring_pause(series_id: str, as_json: JsonOption = False) -> None:
    with api(as_json) as client:
        show(client.pause_recurring_post(series_id), as_json, title="series")


@recurring.command("resume")
def recurring_resume(series_id: str, as_json: JsonOption = False) -> None:
    with api(as_json) as client:
        show(client.resume_recurring_post(series_id), as_json, title="series")


@recurring.command("delete")
def recurring_delete(series_id: str, as_json: JsonOption = False) -> None:
    with api(as_json) as client:
        show(client.delete_recurring_post(series_id), as_json)
