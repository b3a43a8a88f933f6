"""The secret canary (issue 28, "logs"): in one run of the real processes, every secret that can be
minted is minted and then used the ways that put it in URLs, headers and task messages, refused
calls included; afterwards no line any process wrote (web, sandbox, worker, beat, Redis) holds
any of them."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from core.crypto import decrypt
from tests.e2e.harness import E2EStack, WebhookReceiver, wait_for

pytestmark = pytest.mark.e2e

FINAL = ("COMPLETED", "PARTIAL_FAILURE", "FAILED")


def _bearer(stack: E2EStack, key: str, method: str, path: str, **kwargs: Any) -> requests.Response:
    headers = {"Authorization": f"Bearer {key}", **kwargs.pop("headers", {})}
    return requests.request(method, f"{stack.web_url}/api/v1{path}", headers=headers, timeout=30, **kwargs)


def _minted_key(stack: E2EStack, workspace: str, role: str) -> str:
    output = stack.manage("create_api_key", "--workspace", workspace, "--role", role, "--create-workspace")
    return output.strip().splitlines()[-1].strip()


def _platform_tokens(stack: E2EStack) -> list[str]:
    """The tokens the sandbox platforms gave the accounts connected so far, decrypted (the test
    process has the stack's FERNET_KEYS: the same environment, the same sandbox default)."""
    rows = stack.sql("SELECT platform, access_token, refresh_token FROM accounts_socialaccount")
    tokens = [decrypt(value) for _, *values in rows for value in values if value]
    assert {platform for platform, *_ in rows} >= {"MASTODON", "TELEGRAM"} and len(tokens) >= 2
    return tokens


def _published(stack: E2EStack, post_id: str) -> dict[str, Any]:
    def final() -> dict[str, Any] | None:
        post = stack.api("GET", f"/social-posts/{post_id}").json()
        return post if post["status"] in FINAL else None

    return dict(wait_for(final, timeout=90, what=f"post {post_id} to finish"))


def test_no_process_logs_any_secret_minted_in_the_run(e2e: E2EStack, webhook_receiver: WebhookReceiver) -> None:
    stack = e2e
    secrets: dict[str, str] = {"the stack's admin key": stack.api_key}

    # API keys: minted by manage.py; one of another workspace, for refused calls.
    editor = _minted_key(stack, "E2E", "editor")
    stranger = _minted_key(stack, "Canary other", "admin")
    secrets |= {"editor key": editor, "other workspace's key": stranger}
    assert _bearer(stack, editor, "GET", "/me").status_code == 200
    assert _bearer(stack, editor[:-4] + "AAAA", "GET", "/me").status_code == 401  # a wrong secret, refused
    requests.get(f"{stack.web_url}/api/v1/social-posts?api_key={editor}", timeout=30)  # a key in a query string

    # Connect links, with and without an Idempotency-Key (and its replay).
    plain_link = stack.api("POST", "/connect-links", json={}).json()
    keyed = [stack.api("POST", "/connect-links", json={}, headers={"Idempotency-Key": "canary-link"}) for _ in "ab"]
    assert keyed[1].headers.get("Idempotent-Replayed") == "true" and keyed[0].json() == keyed[1].json()
    keyed_link = keyed[0].json()
    secrets |= {"connect token": plain_link["token"], "idempotent connect token": keyed_link["token"]}
    assert requests.get(plain_link["url"], timeout=30).status_code == 200  # the hosted page
    refused = _bearer(stack, stranger, "DELETE", f"/connect-links/{keyed_link['token']}")
    assert refused.status_code == 404  # another workspace's link: refused, and the token stays valid
    assert (
        _bearer(stack, "cpk_0000000000000000_nope", "DELETE", f"/connect-links/{keyed_link['token']}").status_code
        == 401
    )
    assert stack.api("DELETE", f"/connect-links/{keyed_link['token']}").status_code in (200, 204)
    assert requests.get(keyed_link["url"], timeout=30).status_code in (404, 410)  # a deleted link's page

    # Webhook secrets: created (with an Idempotency-Key), then rotated twice.
    hook = stack.api(
        "POST", "/webhooks", json={"url": webhook_receiver.url}, headers={"Idempotency-Key": "canary-hook"}
    )
    assert hook.status_code == 201, hook.text
    secrets["webhook secret"] = hook.json()["secret"]
    for n in (1, 2):
        rotated = stack.api("POST", f"/webhooks/{hook.json()['id']}/rotate-secret", json={})
        assert rotated.status_code == 201, rotated.text
        secrets[f"rotated webhook secret {n}"] = rotated.json()["secret"]

    # Platform tokens: an OAuth account and a Telegram bot, connected through connect links.
    mastodon = stack.connect_account("MASTODON")  # /connect/<token>/MASTODON, then ?code=&state=
    telegram = stack.connect_account("TELEGRAM")  # its bot token travels in Telegram's paths
    for n, token in enumerate(_platform_tokens(stack)):
        secrets[f"platform token {n}"] = token

    # A publish: the worker uses the platform tokens, the deliveries are signed with the secret.
    created = stack.api(
        "POST",
        "/social-posts",
        json={
            "platforms": ["MASTODON", "TELEGRAM"],
            "mastodonConnectionIds": [mastodon["id"]],
            "telegramConnectionIds": [telegram["id"]],
            "contentType": "TEXT",
            "text": "Canary e2e",
            "timezone": "UTC",
        },
    )
    assert created.status_code == 201, created.text
    assert _published(stack, created.json()["postId"])["status"] == "COMPLETED"
    wait_for(lambda: webhook_receiver.events(), timeout=60, what="a delivery at the webhook")

    logs = stack.all_logs()
    assert {"web.log", "sandbox.log", "worker.log", "beat.log"} <= set(logs), set(logs)
    everything = "\n".join(logs.values())
    # The traffic reached the logs (so their silence about the secrets means something), redacted.
    assert "/connect-links/[redacted]" in everything and "/bot[redacted]/sendMessage" in everything
    leaked = {name: [file for file, text in logs.items() if secret in text] for name, secret in secrets.items()}
    assert not {name: files for name, files in leaked.items() if files}, leaked
    # The secret parts of the keys on their own, too.
    for name in ("the stack's admin key", "editor key", "other workspace's key"):
        assert secrets[name].rsplit("_", 1)[1] not in everything, name
