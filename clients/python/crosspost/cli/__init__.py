"""The ``crosspost`` command (Typer + Rich).

Exit codes: 0 done, 1 the API refused (4xx other than auth, 5xx), 2 usage error,
3 authentication or permission error (or no credentials), 4 network error.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from crosspost import __version__, config
from crosspost.cli.common import EXIT_AUTH, App, JsonOption, api, console, errors, hint, show
from crosspost.cli.inbox import comments
from crosspost.cli.insights import ai, analytics
from crosspost.cli.organizations import audit, keys, org_keys, usage, workspaces
from crosspost.cli.posts import app as posts
from crosspost.cli.resources import accounts, branding, media, recurring, webhooks
from crosspost.client import Client
from crosspost.errors import AuthenticationError, CrosspostError, TransportError

app = App(help="Crosspost from the command line.", pretty_exceptions_enable=False)
auth = App(help="Credentials.")
app.add_typer(auth, name="auth")
app.add_typer(accounts, name="accounts")
app.add_typer(branding, name="branding")
app.add_typer(posts, name="posts")
app.add_typer(media, name="media")
app.add_typer(webhooks, name="webhooks")
app.add_typer(recurring, name="recurring")
app.add_typer(analytics, name="analytics")
app.add_typer(comments, name="comments")
app.add_typer(ai, name="ai")
app.add_typer(workspaces, name="workspaces")
app.add_typer(keys, name="keys")
app.add_typer(org_keys, name="org-keys")
app.command("usage")(usage)
app.command("audit")(audit)

ME_FIELDS = ("tokenType", "tokenName", "workspace", "role", "summary", "permissions", "expiresAt")


def _version(value: bool) -> None:
    if value:
        console.print(f"crosspost {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Crosspost from the command line."""


@auth.command("login")
def login(
    api_key: Annotated[str, typer.Option("--api-key", prompt=True, hide_input=True, envvar="CROSSPOST_API_KEY")],
    base_url: Annotated[str, typer.Option("--base-url", envvar="CROSSPOST_BASE_URL", help="e.g. https://host/api/v1")],
    workspace_id: Annotated[str | None, typer.Option("--workspace-id")] = None,
    as_json: JsonOption = False,
) -> None:
    """Check the key against the service, then store it (readable by you alone)."""
    try:
        with Client(api_key, base_url=base_url, workspace_id=workspace_id) as client:
            me = client.get_me()
    except CrosspostError as exc:
        errors.print(f"[red]login failed:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        if isinstance(exc, TransportError):
            hint(f"is the service running at {base_url}? Check --base-url (e.g. http://127.0.0.1:8000/api/v1).")
        elif isinstance(exc, AuthenticationError):
            hint("the service does not know this key: copy it again, or create one (see the README).")
        raise typer.Exit(EXIT_AUTH)
    path = config.save(api_key, base_url, workspace_id)
    if as_json:
        show(me, True)
    else:
        console.print(f"Logged in to {me['workspace']['name']} as {me['role']['key']}; key stored in {path}")


@auth.command("status")
def status(as_json: JsonOption = False) -> None:
    """Who the stored (or environment) credentials act as."""
    with api(as_json) as client:
        show(client.get_me(), as_json, columns=ME_FIELDS, title=client.settings.base_url)


@auth.command("logout")
def logout() -> None:
    """Forget the stored key."""
    console.print("Stored key removed." if config.remove() else "No stored key.")


@app.command("mcp")
def mcp(
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP instead of stdio.")] = False,
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port")] = 8765,
    fd: Annotated[
        int | None, typer.Option("--fd", help="With --http: serve the listening socket inherited as this descriptor.")
    ] = None,
) -> None:
    """Run the MCP server for agents (stdio by default)."""
    from crosspost.mcp_server import serve

    with api() as client:
        serve(client.settings, http=http, host=host, port=port, fd=fd)


def main() -> None:
    app()
