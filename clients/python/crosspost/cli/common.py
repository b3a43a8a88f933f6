"""What every command shares: the client from the stored or environment credentials, output as
tables for people or the API's own JSON for scripts, and the exit codes."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from typer.core import TyperCommand, TyperGroup, TyperOption

from crosspost import config
from crosspost.client import Client
from crosspost.errors import (
    APIError,
    AuthenticationError,
    ConfigurationError,
    CrosspostError,
    PermissionDenied,
    TransportError,
)
from crosspost.models import Post

EXIT_API_ERROR = 1
EXIT_USAGE = 2  # also what Typer answers for a bad option or argument
EXIT_AUTH = 3
EXIT_NETWORK = 4

JsonOption = Annotated[bool, typer.Option("--json", help="Print the API's JSON body instead of a table.")]

NO_WRAP = frozenset({"id", "postId", "status", "platform"})

console = Console()
errors = Console(stderr=True)


class _BareFlags:
    """Help without a type label on flags: Typer 0.29 prints ``<bool>`` beside every flag, even
    ``--help`` and ``--wait/--no-wait``, where a flag takes no value at all."""

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)  # type: ignore[misc]
        for param in params:
            if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
                param.metavar = ""
        return params


class Command(_BareFlags, TyperCommand):
    pass


class Group(_BareFlags, TyperGroup):
    pass


class App(typer.Typer):
    """``typer.Typer`` whose groups and commands render flags without ``<bool>``."""

    def __init__(self, **options: Any) -> None:
        options.setdefault("cls", Group)
        options.setdefault("no_args_is_help", True)
        super().__init__(**options)

    def command(self, name: str | None = None, **options: Any) -> Any:
        options.setdefault("cls", Command)
        return super().command(name, **options)


@contextlib.contextmanager
def api(as_json: bool = False) -> Iterator[Client]:
    """A client for one command; SDK errors become a message, a hint and the matching exit code."""
    base_url = ""
    try:
        with config.client() as client:
            base_url = client.settings.base_url
            yield client
    except AuthenticationError as exc:
        _report(exc, as_json)
        hint(f"{_key_source()} was refused: run `crosspost auth login`, or set CROSSPOST_API_KEY to a valid key.")
        raise typer.Exit(EXIT_AUTH)
    except PermissionDenied as exc:
        _report(exc, as_json)
        needed = f"the permission {exc.required_permission}" if exc.required_permission else "more rights"
        role = exc.body.get("role")
        hint(f"this needs {needed}{f' (the key acts as {role})' if role else ''}: use a key of a role that has it.")
        raise typer.Exit(EXIT_AUTH)
    except APIError as exc:
        _report(exc, as_json)
        raise typer.Exit(EXIT_API_ERROR)
    except ConfigurationError as exc:
        errors.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_AUTH)
    except TransportError as exc:
        errors.print(f"[red]network error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        hint(
            f"is the service running at {base_url}? Set CROSSPOST_BASE_URL, or run "
            "`crosspost auth login --base-url URL`."
        )
        raise typer.Exit(EXIT_NETWORK)
    except CrosspostError as exc:
        errors.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_API_ERROR)


def hint(text: str) -> None:
    errors.print(f"[yellow]hint:[/yellow] {escape(text)}", highlight=False, soft_wrap=True)


def _key_source() -> str:
    if os.environ.get("CROSSPOST_API_KEY"):
        return "the key in CROSSPOST_API_KEY"
    return f"the key stored in {config.config_path()}"


def _report(exc: APIError, as_json: bool) -> None:
    if as_json:
        print_json(exc.body)
    errors.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)


def usage_error(message: str) -> typer.Exit:
    errors.print(f"[red]usage:[/red] {message}")
    return typer.Exit(EXIT_USAGE)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


def number(value: Any) -> str:
    """``1234`` as ``1,234``; ``1234.5`` as ``1,234.50``; ``0.0412`` as is (up to four decimals)."""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.4f}".rstrip("0") if abs(value) < 1 else f"{value:,.2f}"
    return f"{int(value):,}" if isinstance(value, int | float) and not isinstance(value, bool) else str(value)


def _metric(value: Mapping[str, Any]) -> str:
    """``{value, previousValue, deltaPercent}`` as ``1,234 (+12.5% vs 1,097)``."""
    text = "no data" if value.get("value") is None else number(value.get("value"))
    delta, previous = value.get("deltaPercent"), value.get("previousValue")
    if delta is not None:
        text += f" ({delta:+.1f}% vs {number(previous)})"
    elif previous is not None:
        text += f" (was {number(previous)})"
    return text


def _is_metric(value: Mapping[str, Any]) -> bool:
    return "value" in value and set(value) <= {"value", "previousValue", "deltaPercent"}


def cell(value: Any, nested: bool = False) -> str:
    """A value as people read it in a table cell: never a JSON text. Records of one name (a
    workspace, a role) by their name; metrics with their change; other records as ``key: value``
    lines (inline when nested); lists joined; booleans yes/no."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        if _is_metric(value):
            return _metric(value)
        if "name" in value and set(value) <= {"id", "key", "name"}:
            ref = value.get("id") or value.get("key")
            return f"{value['name']} ({ref})" if ref and ref != value["name"] else str(value["name"])
        pairs = [(k, cell(v, True)) for k, v in value.items() if v not in (None, "", [], {})]
        return (", " if nested else "\n").join(f"{k}: {v}" for k, v in pairs)
    if isinstance(value, list | tuple):
        parts = [cell(v, True) for v in value]
        scalars = all(not isinstance(v, Mapping | list | tuple) for v in value)
        return (", " if scalars or nested else "\n").join(parts)
    return str(value)


def _linked(column: str, value: Any) -> str | Text:
    """URLs stay links (clickable in terminals that can) even when folded over lines."""
    if column.lower().endswith("url") and isinstance(value, str) and value.startswith(("http://", "https://")):
        return Text(value, style=f"link {value}")
    return cell(value)


def wait_for_post(client: Client, post_id: str, *, as_json: bool = False, timeout: float = 300) -> Post:
    """Poll the post to a final status showing where it stands on stderr: a spinner with each
    platform's status on a terminal; elsewhere (logs, CI) a line per change, unless ``--json``."""

    def describe(post: Post) -> str:
        entries = ", ".join(f"{e.get('platform')} {e.get('status')}" for e in post.get("platforms") or [])
        return f"post {post_id} {post.get('status')}" + (f": {entries}" if entries else "")

    if errors.is_terminal:
        with errors.status(escape(f"waiting for post {post_id}"), spinner="dots") as spinner:
            return client.wait_for(
                post_id, timeout=timeout, interval=1.0, on_poll=lambda post: spinner.update(escape(describe(post)))
            )
    seen: list[str] = []

    def line(post: Post) -> None:
        text = describe(post)
        if not as_json and (not seen or seen[-1] != text):
            errors.print(escape(text), highlight=False, soft_wrap=True)
        seen.append(text)

    return client.wait_for(post_id, timeout=timeout, interval=1.0, on_poll=line)


def show(data: Any, as_json: bool, *, rows: str | None = None, columns: Sequence[str] = (), title: str = "") -> None:
    """``--json``: the body as it came. Otherwise a table of ``data[rows]`` (or of ``data`` when it
    is a list) with ``columns``, or a two-column table of the fields of one record."""
    if as_json:
        print_json(data)
        return
    items = data.get(rows) if rows and isinstance(data, Mapping) else data if isinstance(data, list) else None
    if items is not None:
        table = Table(title=title or None)
        cols = list(columns) or (list(items[0].keys())[:6] if items else [])
        for column in cols:
            # Identifiers and statuses are never broken over lines (people grep them).
            table.add_column(column, no_wrap=column in NO_WRAP, overflow="fold")
        for item in items:
            table.add_row(*(_linked(c, item.get(c)) for c in cols))
        console.print(table)
        if isinstance(data, Mapping) and "total" in data:
            console.print(f"{len(items)} shown of {data['total']}")
        return
    table = Table(title=title or None, show_header=False)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for key, value in (data or {}).items():
        if columns and key not in columns:
            continue
        table.add_row(key, cell(value))
    console.print(table)


def read_body(path: str | None) -> dict[str, Any]:
    """A JSON object from a file (``-`` for standard input), for fields the options lack."""
    if not path:
        return {}
    try:
        text = sys.stdin.read() if path == "-" else open(path).read()  # noqa: SIM115
        body = json.loads(text)
    except (OSError, ValueError) as exc:
        raise usage_error(f"cannot read a JSON body from {path}: {exc}")
    if not isinstance(body, dict):
        raise usage_error(f"{path} must hold a JSON object")
    return body
