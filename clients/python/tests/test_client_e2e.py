"""The SDK, the CLI and the MCP server end to end against a real server of this repository
(web + sandbox + worker + beat on a fresh test database; see ``conftest.py``): a post with media
to several platforms, waited for, its results and analytics read, its webhook verified."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import anyio
import crosspost
import pytest
from conftest import FIXTURES, PLATFORMS
from crosspost import Client, InvalidSignature, NotFound, mcp_tools, verify_webhook
from crosspost.cli import app, common
from crosspost.targets import targets_for
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import TextContent, TextResourceContents
from rich.console import Console
from typer.testing import CliRunner

from tests.e2e.harness import E2EStack, WebhookReceiver, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("clients")]


def _window() -> dict[str, str]:
    now = dt.datetime.now(dt.UTC)
    return {
        "from_": (now - dt.timedelta(days=7)).strftime("%Y-%m-%d"),
        "to": (now + dt.timedelta(days=1)).strftime("%Y-%m-%d"),
    }


def _mcp_server(env: dict[str, str]) -> StdioServerParameters:
    """``crosspost mcp`` over stdio, importing the very package these tests import (a checkout's
    copy, even where another one is installed)."""
    package_root = str(Path(crosspost.__file__).resolve().parents[1])
    return StdioServerParameters(
        command=sys.executable, args=["-m", "crosspost", "mcp"], env={**env, "PYTHONPATH": package_root}
    )


def _tracked(sdk: Client, post_id: str) -> list[dict[str, Any]]:
    return [row for row in sdk.iter_analytics_posts(limit=100, **_window()) if row["postId"] == post_id]


def test_sdk_publishes_with_media_and_verifies_the_webhook(sdk: Client, accounts: list[dict[str, Any]]) -> None:
    receiver = WebhookReceiver()
    try:
        hook = sdk.create_webhook(url=receiver.url)
        media_url = sdk.upload(FIXTURES / "sample.jpg")
        created = sdk.create_post(
            text="Hello from the Python SDK",
            media_urls=[media_url],
            content_type="IMAGE",
            timezone="UTC",
            **targets_for(accounts),
        )
        post = sdk.wait_for(created["postId"], timeout=90, interval=0.5)
        assert post["status"] == "COMPLETED", post
        assert sorted(entry["platform"] for entry in post["platforms"]) == sorted(PLATFORMS)
        assert post["mediaUrls"] == [media_url]
        media = sdk.get_media_file(media_url)
        assert (media["url"], media["mimeType"]) == (media_url, "image/jpeg"), media
        assert media["probeStatus"] in {"pending", "ready"}, media

        results = sdk.get_post_results(post["id"])
        assert {(r["platform"], r["status"]) for r in results["results"]} == {(p, "PUBLISHED") for p in PLATFORMS}
        assert all(r["platformPostId"] for r in results["results"])
        assert post["id"] in {p["id"] for p in sdk.iter_posts(limit=1)}

        tracked = wait_for(lambda: _tracked(sdk, post["id"]), timeout=60, what="the post in analytics")
        assert {row["platform"] for row in tracked} <= set(PLATFORMS)
        overview = sdk.get_analytics_overview(**_window())
        assert overview["postsCount"]["value"] >= 1
        breakdown = sdk.get_analytics_breakdown(**_window())
        assert {"platform", "views"} <= set(breakdown["platforms"][0])

        delivery = wait_for(
            lambda: [r for r in receiver.events("post.published") if r.envelope["data"]["post"]["id"] == post["id"]],
            timeout=60,
            what="the post.published webhook",
        )[0]
        event = verify_webhook(delivery.headers, delivery.body, hook["secret"])
        assert event["event"] == "post.published" and event["data"]["post"]["status"] == "COMPLETED"
        with pytest.raises(InvalidSignature):
            verify_webhook(delivery.headers, delivery.body, "whsec_not_the_secret")
        sdk.delete_webhook(hook["id"])
    finally:
        receiver.close()

    with pytest.raises(NotFound) as caught:
        sdk.get_post("does-not-exist")
    assert caught.value.body["statusCode"] == 404 and caught.value.request_id


def test_cli(
    stack: E2EStack, sdk: Client, accounts: list[dict[str, Any]], cli_env: dict[str, str], tmp_path: Path
) -> None:
    runner = CliRunner()

    def run(*args: str, env: dict[str, str] | None = None) -> Any:
        return runner.invoke(app, list(args), env=cli_env if env is None else env)

    # Credentials from the environment; `--json` prints the API's own body.
    listed = run("accounts", "list", "--json")
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.stdout) == sdk.list_accounts()

    ids = [arg for account in accounts[:2] for arg in ("--account", account["id"])]
    created = run(
        "posts", "create", *ids, "--media", str(FIXTURES / "sample.jpg"), "--text", "From the CLI", "--wait", "--json"
    )
    assert created.exit_code == 0, created.output
    post = json.loads(created.stdout)
    assert post["status"] == "COMPLETED" and len(post["platforms"]) == 2
    table = run("posts", "results", post["id"])
    assert table.exit_code == 0 and table.stdout.count("PUBLISHED") == 2, table.output
    overview = run("analytics", "overview", "--json")
    assert overview.exit_code == 0 and "views" in json.loads(overview.stdout)
    uploaded = run("media", "upload", str(FIXTURES / "sample.png"), "--json")
    assert uploaded.exit_code == 0 and json.loads(uploaded.stdout)["uploads"][0]["publicUrl"].startswith("http")

    later = (dt.datetime.now(dt.UTC) + dt.timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    batch = tmp_path / "batch.csv"
    batch.write_text(f"text,scheduledAt\nFirst of the batch,{later}\nSecond of the batch,{later}\n")
    bulk = run("posts", "bulk", str(batch), "--account", accounts[0]["id"], "--json")
    assert bulk.exit_code == 0, bulk.output
    assert json.loads(bulk.stdout)["totalScheduled"] == 2

    # Exit codes: API error 1, usage 2, auth 3.
    missing = run("posts", "get", "does-not-exist", "--json")
    assert missing.exit_code == 1 and json.loads(missing.stdout)["statusCode"] == 404
    assert run("posts", "create", "--text", "nowhere").exit_code == 2
    assert run("posts", "list", "--limit", "0").exit_code == 2
    assert run("accounts", "list", env={**cli_env, "CROSSPOST_API_KEY": "cp_bad_key"}).exit_code == 3

    # `auth login` stores the key privately; later commands need no environment.
    login = run("auth", "login", "--api-key", stack.api_key, "--base-url", cli_env["CROSSPOST_BASE_URL"], env={})
    assert login.exit_code == 0, login.output
    stored = Path(os.environ["CROSSPOST_CONFIG_DIR"]) / "config.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    status = run("auth", "status", "--json", env={})
    assert status.exit_code == 0 and json.loads(status.stdout)["role"]["key"] == "admin"


def test_mcp_server_over_stdio(stack: E2EStack, base_url: str, accounts: list[dict[str, Any]]) -> None:
    env = {"CROSSPOST_API_KEY": stack.api_key, "CROSSPOST_BASE_URL": base_url}
    params = _mcp_server(env)

    async def session_run() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            seen["tools"] = tools

            async def call(name: str, arguments: dict[str, Any]) -> Any:
                result = await session.call_tool(name, arguments)
                block = result.content[0]
                assert isinstance(block, TextContent)
                body = json.loads(block.text)
                return (body, True) if result.is_error else body

            seen["accounts"] = await call("list_accounts", {})
            upload = await call("upload_media", {"path": str(FIXTURES / "sample.jpg")})
            again = await call("upload_media", {"url": upload["publicUrl"]})
            body = {
                "text": "From an agent",
                "mediaUrls": [again["publicUrl"]],
                "contentType": "IMAGE",
                "timezone": "UTC",
            }
            body.update(targets_for(accounts[1:]))
            seen["validation"] = await call("validate_post", body)
            created = await call("create_post", body)
            seen["post"] = await call("wait_for_post", {"id": created["postId"], "timeoutSeconds": 90})
            seen["results"] = await call("get_post_results", {"id": created["postId"]})
            period = _window()
            seen["overview"] = await call("get_analytics_overview", {"from": period["from_"], "to": period["to"]})
            seen["no_period"] = await call("get_analytics_overview", {})
            seen["missing"] = await call("get_post", {"id": "does-not-exist"})
            seen["retry"] = await call("retry_post", {"id": created["postId"]})
            seen["resources"] = (await session.list_resources()).resources
            twitter = await session.read_resource("crosspost://platforms/TWITTER/capabilities")
            assert isinstance(twitter.contents[0], TextResourceContents)
            seen["twitter"] = json.loads(twitter.contents[0].text)
        return seen

    seen = anyio.run(session_run)
    create_schema = seen["tools"]["create_post"].input_schema
    assert {"platforms", "text", "mediaUrls", "scheduledAt"} <= set(create_schema["properties"])
    assert {"list_accounts", "publish_post", "retry_post", "get_analytics_timeseries", "upload_media"} <= set(
        seen["tools"]
    )
    assert {a["id"] for a in seen["accounts"]["accounts"]} >= {a["id"] for a in accounts}
    assert seen["post"]["status"] == "COMPLETED"
    assert {r["status"] for r in seen["results"]["results"]} == {"PUBLISHED"}
    assert "views" in seen["overview"]
    # The schema says the period is required, and the service's error body comes back as a tool error.
    assert {"from", "to"} <= set(seen["tools"]["get_analytics_overview"].input_schema["required"])
    no_period, is_error = seen["no_period"]
    assert is_error and no_period["code"] == "validation_error" and no_period["statusCode"] == 400
    missing, is_error = seen["missing"]
    assert is_error and missing["statusCode"] == 404
    retry, is_error = seen["retry"]
    assert is_error and retry["code"] == "no_failed_platforms"
    assert len(seen["resources"]) == 12
    assert seen["twitter"]["textLimit"] == 280


NEW_TOOLS = {
    "delete_post",
    "list_platforms",
    "create_connect_link",
    "get_account_queue",
    "set_account_queue",
    "list_webhooks",
    "create_webhook",
    "delete_webhook",
    "rotate_webhook_secret",
    "list_events",
}


def test_mcp_tools_for_links_queues_webhooks_and_events(
    stack: E2EStack, base_url: str, accounts: list[dict[str, Any]]
) -> None:
    env = {"CROSSPOST_API_KEY": stack.api_key, "CROSSPOST_BASE_URL": base_url}
    params = _mcp_server(env)
    account_id = accounts[0]["id"]
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    slots = [{"day": "MON", "time": "09:30"}, {"day": "FRI", "time": "17:00"}]
    receiver = WebhookReceiver()

    async def session_run() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            seen["tools"] = {tool.name for tool in (await session.list_tools()).tools}

            async def call(name: str, arguments: dict[str, Any], *, error: bool = False) -> Any:
                result = await session.call_tool(name, arguments)
                block = result.content[0]
                assert isinstance(block, TextContent)
                assert bool(result.is_error) is error, (name, block.text)
                return json.loads(block.text)

            seen["platforms"] = await call("list_platforms", {})
            seen["link"] = await call("create_connect_link", {})
            seen["queue_set"] = await call(
                "set_account_queue", {"id": account_id, "timezone": "Europe/Paris", "slots": slots}
            )
            seen["queue"] = await call("get_account_queue", {"id": account_id})

            seen["hook"] = hook = await call("create_webhook", {"url": receiver.url, "events": ["post.published"]})
            seen["listed"] = await call("list_webhooks", {})
            seen["rotated"] = await call("rotate_webhook_secret", {"id": hook["id"], "graceSeconds": 0})
            seen["hook_deleted"] = await call("delete_webhook", {"id": hook["id"]})
            seen["listed_after"] = await call("list_webhooks", {})

            body = {"text": "For the events feed", "contentType": "TEXT", "timezone": "UTC", "scheduledAt": later}
            seen["created"] = created = await call("create_post", {**body, **targets_for(accounts[:1])})
            # Every page of post.scheduled events, passing the cursor back, for the one of this post.
            found, after = [], None
            while True:
                page = await call(
                    "list_events", {"type": ["post.scheduled"], "limit": 100, **({"after": after} if after else {})}
                )
                found += [e for e in page["events"] if e["data"]["post"]["id"] == created["postId"]]
                if not page["events"]:
                    break
                after = page["nextCursor"]
            seen["events"] = found
            seen["post_deleted"] = await call("delete_post", {"id": created["postId"]})
            seen["post_gone"] = await call("get_post", {"id": created["postId"]}, error=True)
        return seen

    try:
        seen = anyio.run(session_run)
    finally:
        receiver.close()
    assert seen["tools"] >= NEW_TOOLS and len(seen["tools"]) == len(mcp_tools.TOOLS)  # every declared tool

    platforms = {p["platform"]: p for p in seen["platforms"]["platforms"]}
    assert len(platforms) == 12 and platforms["TWITTER"]["text"]["limit"] == 280
    assert seen["link"]["url"].startswith(stack.web_url) and seen["link"]["expiresAt"]
    assert seen["queue"]["timezone"] == "Europe/Paris" == seen["queue_set"]["timezone"]
    assert sorted(seen["queue"]["slots"], key=str) == sorted(slots, key=str)

    hook = seen["hook"]
    assert hook["secret"] and hook["id"] in {w["id"] for w in seen["listed"]["webhooks"]}
    assert seen["rotated"]["id"] == hook["id"] and seen["rotated"]["secret"] not in ("", hook["secret"])
    assert hook["id"] not in {w["id"] for w in seen["listed_after"]["webhooks"]}

    assert [e["event"] for e in seen["events"]] == ["post.scheduled"]
    assert seen["events"][0]["data"]["post"]["scheduledAt"].startswith(later[:-1])
    assert seen["post_deleted"] == {"deleted": True}
    assert seen["post_gone"]["statusCode"] == 404


def test_branding_and_disconnect_through_the_sdk_the_cli_and_mcp(
    stack: E2EStack, sdk: Client, base_url: str, cli_env: dict[str, str]
) -> None:
    """Issue 31: brand the connect pages (a logo uploaded from a file), make a link that offers
    some platforms, read and disconnect an account (the CLI asks first), the same through MCP."""
    try:
        runner = CliRunner()

        def run(*args: str, stdin: str | None = None) -> Any:
            return runner.invoke(app, list(args), env=cli_env, input=stdin)

        branded = run(
            "branding", "set", "--name", "Acme", "--logo", str(FIXTURES / "sample.png"), "--accent", "#FA0",
            "--platform", "MASTODON", "--platform", "BLUESKY", "--json",
        )  # fmt: skip
        assert branded.exit_code == 0, branded.output
        body = json.loads(branded.stdout)
        assert (body["displayName"], body["accentColor"], body["platforms"]) == (
            "Acme",
            "#ffaa00",
            ["BLUESKY", "MASTODON"],
        )
        assert body["logoUrl"].startswith(stack.web_url)
        kept = run("branding", "set", "--support-url", "https://help.acme.example/", "--json")
        assert json.loads(kept.stdout) | {"updatedAt": None} == body | {
            "supportUrl": "https://help.acme.example/",
            "updatedAt": None,
        }
        assert sdk.get_connect_branding() == json.loads(kept.stdout)
        link = sdk.create_connect_link(platforms=["MASTODON"])
        assert link["platforms"] == ["MASTODON"] and link["redirectUrl"] is None

        account = stack.connect_account("MASTODON")
        assert sdk.get_account(account["id"])["status"] == "active"
        declined = run("accounts", "disconnect", account["id"], stdin="n\n")
        assert declined.exit_code == 1 and sdk.get_account(account["id"])["status"] == "active"
        gone = runner.invoke(app, ["accounts", "disconnect", account["id"], "--json"], env=cli_env, input="y\n")
        assert gone.exit_code == 0, gone.output
        record = json.loads(gone.stdout[gone.stdout.index("{") :])
        assert record["status"] == "disconnected" and record["disconnectedAt"]
        again = run("accounts", "get", account["id"], "--json")
        assert json.loads(again.stdout) == record
        assert sdk.disconnect_account(account["id"]) == record  # a repeat answers the same
        assert account["id"] not in {a["id"] for a in sdk.list_accounts()["accounts"]}

        other = stack.connect_account("BLUESKY")
        params = _mcp_server({"CROSSPOST_API_KEY": stack.api_key, "CROSSPOST_BASE_URL": base_url})

        async def session_run() -> dict[str, Any]:
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()

                async def call(name: str, arguments: dict[str, Any]) -> Any:
                    result = await session.call_tool(name, arguments)
                    block = result.content[0]
                    assert isinstance(block, TextContent) and not result.is_error, (name, block)
                    return json.loads(block.text)

                return {
                    "branding": await call("set_connect_branding", {"displayName": "Acme by MCP"}),
                    "read": await call("get_connect_branding", {}),
                    "account": await call("get_account", {"id": other["id"]}),
                    "disconnected": await call("disconnect_account", {"id": other["id"]}),
                }

        seen = anyio.run(session_run)
        assert seen["branding"] == seen["read"] and seen["read"]["displayName"] == "Acme by MCP"
        assert seen["read"]["logoUrl"] is None  # PUT replaces whole
        assert seen["account"]["status"] == "active" and seen["disconnected"]["status"] == "disconnected"
    finally:  # the other tests of this module share the stack: back to the default pages
        sdk.set_connect_branding({})


def _no_json(text: str) -> None:
    """No table cell holds a JSON text (an object, a list of objects, a quoted key)."""
    assert not re.search(r'[\[{]\s*"|"\s*:', text), text


def test_cli_shows_progress_readable_tables_and_hints(
    stack: E2EStack,
    sdk: Client,
    accounts: list[dict[str, Any]],
    cli_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runner = CliRunner()
    wide = {**cli_env, "COLUMNS": "250"}
    # The console took its width when the CLI was imported, not from COLUMNS at invoke time: a
    # terminal this wide shows each entry's URL whole on its row (a narrower one folds it).
    monkeypatch.setattr(common.console, "width", 250)

    def run(*args: str, env: dict[str, str] | None = None) -> Any:
        return runner.invoke(app, list(args), env=wide if env is None else env)

    # Waiting: a line per change of status on stderr (no terminal here), then the post and one
    # row per platform entry with its status and URL.
    ids = [arg for account in accounts[:2] for arg in ("--account", account["id"])]
    created = run("posts", "create", *ids, "--text", "Watched from the CLI", "--wait")
    assert created.exit_code == 0, created.output
    progress = created.stderr.strip().splitlines()
    post_id = progress[-1].split()[1]
    post = sdk.get_post(post_id)
    entries = ", ".join(f"{e['platform']} {e['status']}" for e in post["platforms"])
    assert progress[-1] == f"post {post_id} COMPLETED: {entries}", created.stderr
    assert len(post["platforms"]) == 2
    for entry in post["platforms"]:
        assert entry["postUrl"]
        row = [line for line in created.stdout.splitlines() if entry["postUrl"] in line]
        assert len(row) == 1 and entry["platform"] in row[0] and "PUBLISHED" in row[0], created.stdout
    _no_json(created.stdout)
    shown = run("posts", "get", post_id)
    assert shown.exit_code == 0 and all(e["postUrl"] in shown.stdout for e in post["platforms"]), shown.output
    _no_json(shown.stdout)

    # On a terminal the same wait is a spinner on stderr, showing the post's status as it goes.
    with monkeypatch.context() as patch:
        patch.setattr(common, "errors", Console(stderr=True, force_terminal=True, width=250))
        spun = run("posts", "create", *ids, "--text", "Watched on a terminal", "--wait", "--json")
    assert spun.exit_code == 0, spun.output
    spun_id = json.loads(spun.stdout)["id"]
    assert f"post {spun_id} COMPLETED" in spun.stderr and "\x1b[" in spun.stderr, spun.stderr

    # Readable cells: the overview as metric rows, `auth status` by names.
    overview = run("analytics", "overview")
    assert overview.exit_code == 0, overview.output
    metrics = [name for name, value in sdk.get_analytics_overview(**_window()).items() if isinstance(value, dict)]
    assert {"views", "postsCount", "engagementRate"} <= set(metrics)
    for name in metrics:
        assert re.search(rf"│ {name}\s*│\s*([\d,.]+|no data)\s*│", overview.stdout), (name, overview.stdout)
    assert "Figures last synced" in overview.stdout
    _no_json(overview.stdout)
    me = sdk.get_me()
    status = run("auth", "status")
    assert status.exit_code == 0, status.output
    assert f"{me['workspace']['name']} ({me['workspace']['id']})" in status.stdout
    assert me["permissions"][0] in status.stdout
    _no_json(status.stdout)
    for args in (("accounts", "list"), ("posts", "list"), ("posts", "results", post_id), ("webhooks", "list")):
        listed = run(*args)
        assert listed.exit_code == 0, listed.output
        _no_json(listed.stdout)

    # Errors say what to do next: a refused key, a role without the permission.
    refused = run("accounts", "list", env={**wide, "CROSSPOST_API_KEY": "cp_bad_key"})
    assert refused.exit_code == 3
    assert "hint:" in refused.stderr and "crosspost auth login" in refused.stderr
    assert "CROSSPOST_API_KEY" in refused.stderr
    viewer = stack.manage("create_api_key", "--workspace", "E2E", "--role", "viewer").strip().splitlines()[-1].strip()
    denied = run("webhooks", "create", "https://example.com/hook", env={**wide, "CROSSPOST_API_KEY": viewer})
    assert denied.exit_code == 3, denied.output
    assert "hint: this needs the permission webhooks.manage" in denied.stderr, denied.stderr


def test_the_inbox_through_the_sdk_the_cli_and_mcp(
    stack: E2EStack, sdk: Client, base_url: str, accounts: list[dict[str, Any]], cli_env: dict[str, str]
) -> None:
    """A Mastodon post's audience read into the inbox (on demand), listed by the SDK (every page),
    the CLI (``comments list --unanswered``) and MCP, replied to with ``crosspost comments reply``
    (sent once by the worker), liked through MCP."""
    mastodon = next(a for a in accounts if a["platform"] == "MASTODON")
    created = sdk.create_post(
        text="Tell us what you think", content_type="TEXT", timezone="UTC", **targets_for([mastodon])
    )
    post = sdk.wait_for(created["postId"], timeout=90, interval=0.5)
    assert post["status"] == "COMPLETED", post
    assert sdk.request_comment_sync()["queued"] is True
    listed = wait_for(lambda: sdk.list_comments(post_id=post["id"], limit=100)["comments"], timeout=90, what="comments")
    assert all(c["platform"] == "MASTODON" and c["postId"] == post["id"] for c in listed)
    paged = list(sdk.iter_comments(post_id=post["id"], limit=1))  # one a page, following nextCursor
    assert [c["id"] for c in paged] == [c["id"] for c in listed]

    runner = CliRunner()
    shown = runner.invoke(app, ["comments", "list", "--unanswered", "--post", post["id"], "--json"], env=cli_env)
    assert shown.exit_code == 0, shown.output
    unanswered = json.loads(shown.stdout)["comments"]
    assert unanswered and {c["id"] for c in unanswered} <= {c["id"] for c in listed}
    target = unanswered[0]
    table = runner.invoke(
        app, ["comments", "list", "--unanswered", "--post", post["id"]], env={**cli_env, "COLUMNS": "200"}
    )
    assert table.exit_code == 0 and target["id"] in table.stdout, table.output
    replied = runner.invoke(app, ["comments", "reply", target["id"], "Thanks from the CLI", "--json"], env=cli_env)
    assert replied.exit_code == 0, replied.output
    action = json.loads(replied.stdout)
    assert (action["kind"], action["commentId"], action["text"]) == ("REPLY", target["id"], "Thanks from the CLI")

    def done() -> dict[str, Any] | None:
        comment = sdk.get_comment(target["id"])
        return comment if comment["actions"] and comment["actions"][0]["status"] == "DONE" else None

    comment = wait_for(done, timeout=90, what="the reply sent by the worker")
    assert comment["answered"] is True and comment["actions"][0]["replyId"]

    params = _mcp_server({"CROSSPOST_API_KEY": stack.api_key, "CROSSPOST_BASE_URL": base_url})

    async def session_run() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()

            async def call(name: str, arguments: dict[str, Any]) -> Any:
                result = await session.call_tool(name, arguments)
                block = result.content[0]
                assert isinstance(block, TextContent)
                assert not result.is_error, (name, block.text)
                return json.loads(block.text)

            seen["liked"] = await call("like_comment", {"id": target["id"]})
            seen["tree"] = await call("list_post_comments", {"id": post["id"]})
            seen["unanswered"] = await call("list_comments", {"unanswered": True, "postId": post["id"]})
        return seen

    seen = anyio.run(session_run)
    assert (seen["liked"]["kind"], seen["liked"]["commentId"]) == ("LIKE", target["id"])
    [entry] = seen["tree"]["entries"]
    assert entry["platform"] == "MASTODON" and entry["comments"]
    assert target["id"] not in {c["id"] for c in seen["unanswered"]["comments"]}
