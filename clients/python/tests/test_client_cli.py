"""The ``crosspost`` command without a service: help, ``--version``, a network error's hint, and
how table cells read."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest
import typer
from crosspost import __version__
from crosspost.cli import app
from crosspost.cli.common import cell
from typer.core import TyperGroup
from typer.testing import CliRunner

from tests.e2e.harness import listening_socket

runner = CliRunner()


def _command_paths(group: TyperGroup, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [prefix]
    for name, command in group.commands.items():
        if isinstance(command, TyperGroup):
            paths += _command_paths(command, (*prefix, name))
        else:
            paths.append((*prefix, name))
    return paths


PATHS = _command_paths(typer.main.get_group(app))


def test_every_command_is_reached() -> None:
    assert ("posts", "create") in PATHS and ("auth", "status") in PATHS and len(PATHS) > 40


@pytest.mark.parametrize("path", PATHS, ids=lambda path: " ".join(path) or "crosspost")
def test_help_shows_flags_without_a_type(path: tuple[str, ...]) -> None:
    shown = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "120"})
    assert shown.exit_code == 0, shown.output
    assert "--help" in shown.stdout and "<bool>" not in shown.stdout, shown.stdout


def test_flags_keep_their_names() -> None:
    shown = runner.invoke(app, ["posts", "create", "--help"], env={"COLUMNS": "120"})
    assert all(flag in shown.stdout for flag in ("--wait", "--draft", "--json"))
    pair = runner.invoke(app, ["webhooks", "update", "--help"], env={"COLUMNS": "120"})
    assert "--active" in pair.stdout and "--inactive" in pair.stdout


def test_version() -> None:
    shown = runner.invoke(app, ["--version"])
    assert shown.exit_code == 0
    assert shown.stdout == f"crosspost {__version__}\n"
    assert __version__ == version("crosspost-client")


def test_a_network_error_names_the_url_and_what_to_set(tmp_path: Path) -> None:
    listener = listening_socket()
    host, port = listener.getsockname()
    listener.close()  # nothing listens there now: connections are refused
    base_url = f"http://{host}:{port}/api/v1"
    env = {"CROSSPOST_API_KEY": "cp_any", "CROSSPOST_BASE_URL": base_url, "CROSSPOST_CONFIG_DIR": str(tmp_path)}
    failed = runner.invoke(app, ["accounts", "list"], env=env)
    assert failed.exit_code == 4, failed.output
    assert f"hint: is the service running at {base_url}?" in failed.stderr
    assert "CROSSPOST_BASE_URL" in failed.stderr


def test_no_credentials_say_how_to_log_in(tmp_path: Path) -> None:
    env = {"CROSSPOST_API_KEY": "", "CROSSPOST_CONFIG_DIR": str(tmp_path)}
    failed = runner.invoke(app, ["accounts", "list"], env=env)
    assert failed.exit_code == 3
    assert "crosspost auth login" in failed.stderr and "CROSSPOST_API_KEY" in failed.stderr


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, ""),
        (True, "yes"),
        (1234.5, "1234.5"),
        ({"value": 1500, "previousValue": 1200, "deltaPercent": 25.0}, "1,500 (+25.0% vs 1,200)"),
        ({"value": 3, "previousValue": None, "deltaPercent": None}, "3"),
        ({"value": None, "previousValue": None, "deltaPercent": None}, "no data"),
        ({"value": 0.0412, "previousValue": 0.05, "deltaPercent": -17.6}, "0.0412 (-17.6% vs 0.05)"),
        ({"id": "ws_1", "name": "Acme"}, "Acme (ws_1)"),
        ({"key": "admin", "name": "Admin"}, "Admin (admin)"),
        (["posts.read", "posts.draft"], "posts.read, posts.draft"),
        ([{"platform": "X", "reason": "no media"}], "platform: X, reason: no media"),
        ({"draft": True, "publish": False, "note": None}, "draft: yes\npublish: no"),
    ],
)
def test_cells_read_as_text(value: object, shown: str) -> None:
    assert cell(value) == shown


def test_unpublish_asks_before_removing_and_a_no_sends_nothing(tmp_path: Path) -> None:
    listener = listening_socket()
    host, port = listener.getsockname()
    listener.close()  # nothing listens there: a call would fail with exit code 4
    env = {"CROSSPOST_API_KEY": "cp_any", "CROSSPOST_BASE_URL": f"http://{host}:{port}/api/v1"}
    env["CROSSPOST_CONFIG_DIR"] = str(tmp_path)
    refused = runner.invoke(app, ["posts", "unpublish", "post_1"], env=env, input="n\n")
    assert refused.exit_code == 1, refused.output  # not 4: nothing was sent
    assert "Remove post post_1 from every platform that can delete it?" in refused.stdout
    confirmed = runner.invoke(app, ["posts", "unpublish", "post_1", "--yes"], env=env)
    assert confirmed.exit_code == 4  # --yes sends at once (and meets the closed port)


def test_edit_needs_something_to_change_and_names_the_per_platform_form() -> None:
    nothing = runner.invoke(app, ["posts", "edit", "post_1"])
    assert nothing.exit_code != 0 and "nothing to change" in nothing.output
    malformed = runner.invoke(app, ["posts", "edit", "post_1", "--platform-text", "MASTODON"])
    assert malformed.exit_code != 0 and "PLATFORM=VALUE" in malformed.output
    both = runner.invoke(
        app, ["posts", "edit", "post_1", "--media", "https://x/a.jpg", "--no-media"], env={"COLUMNS": "200"}
    )
    assert both.exit_code != 0 and "contradict" in both.output
