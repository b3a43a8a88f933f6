"""What every command shares: the client from the stored or environment credentials, output as
tables for people or the API's own JSON for scripts, and the exit codes."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

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

EXIT_API_ERROR = 1
EXIT_USAGE = 2  # also what Typer answers for a bad option or argument
EXIT_AUTH = 3
EXIT_NETWORK = 4

JsonOption = Annotated[bool, typer.Option("--json", help="Print the API's JSON body instead of a table.")]

NO_WRAP = frozenset({"id", "postId", "status", "platform"})

console = Console()
errors = Console(stderr=True)


@contextlib.contextmanager
def api(as_json: bool = False) -> Iterator[Client]:
    """A client for one command; SDK errors become a message and the matching exit code."""
    try:
        with config.client() as client:
            yield client
    except (AuthenticationError, PermissionDenied) as exc:
        _report(exc, as_json)
        raise typer.Exit(EXIT_AUTH)
    except APIError as exc:
        _report(exc, as_json)
        raise typer.Exit(EXIT_API_ERROR)
    except ConfigurationError as exc:
        errors.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_AUTH)
    except TransportError as exc:
        errors.print(f"[red]network error:[/red] {exc}")
        raise typer.Exit(EXIT_NETWORK)
    except CrosspostError as exc:
        errors.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_API_ERROR)


def _report(exc: APIError, as_json: bool) -> None:
    if as_json:
        print_json(exc.body)
    errors.print(f"[red]error:[/red] {exc}", markup=True, highlight=False)


def usage_error(message: str) -> typer.Exit:
    errors.print(f"[red]usage:[/red] {message}")
    return typer.Exit(EXIT_USAGE)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return str(value.get("value", json.dumps(value)))
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    return str(value)


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
            table.add_column(column, no_wrap=column in NO_WRAP)
        for item in items:
            table.add_row(*(_cell(item.get(c)) for c in cols))
        console.print(table)
        if isinstance(data, Mapping) and "total" in data:
            console.print(f"{len(items)} shown of {data['total']}")
        return
    table = Table(title=title or None, show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    for key, value in (data or {}).items():
        if columns and key not in columns:
            continue
        table.add_row(key, _cell(value) if not isinstance(value, list | dict) else json.dumps(value)[:200])
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
