"""The README's signature-verification snippets (Python and Node) run against the headers the
service sends, during a secret rotation's grace period and outside it."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from webhooks.delivery.signing import signed_headers

README = Path(__file__).resolve().parents[2] / "README.md"
BODY = '{"id":"evt_1","event":"post.published","createdAt":"2026-01-01T00:00:00Z","data":{"text":"é 🚀"}}'.encode()
OLD, NEW, OTHER = "whsec_old0000000000000000000000000000000000000", "whsec_new111111111111111111111111111111", "whsec_x"

PYTHON_DRIVER = """
import base64, json, sys
case = json.load(sys.stdin)
print(json.dumps(verify_signature(case["headers"], base64.b64decode(case["body"]), case["secrets"])))
"""
NODE_DRIVER = """
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(verifySignature(input.headers, Buffer.from(input.body, "base64"), input.secrets)));
"""


def snippet(name: str, language: str) -> str:
    match = re.search(rf"<!-- snippet: {name} -->\n```{language}\n(.*?)```", README.read_text(), re.DOTALL)
    assert match, f"README has no {language} snippet {name}"
    return match.group(1)


def run(command: list[str], program: str, headers: dict[str, str], body: bytes, secrets: list[str]) -> bool:
    case = {"headers": headers, "body": base64.b64encode(body).decode(), "secrets": secrets}
    result = subprocess.run(
        [*command, program], input=json.dumps(case), capture_output=True, text=True, timeout=60, check=True
    )
    return bool(json.loads(result.stdout))


def node() -> str:
    found = shutil.which("node")
    assert found, "node is required (.ci/run installs it where it is missing)"
    return found


@pytest.mark.parametrize("language", ["python", "js"])
def test_the_snippets_verify_both_signatures_of_a_rotation_and_refuse_the_rest(language: str) -> None:
    if language == "python":
        command, program = [sys.executable, "-c"], snippet("verify-python", "python") + PYTHON_DRIVER
    else:
        command, program = [node(), "-e"], snippet("verify-node", "js") + NODE_DRIVER
    rotating = signed_headers(
        secret=NEW, webhook_id="wh_1", event_name="post.published", body=BODY, previous_secret=OLD
    )
    assert len(rotating["x-service-signature"].split(" ")) == 2
    for secrets in ([OLD], [NEW], [OLD, NEW], [OTHER, NEW]):
        assert run(command, program, rotating, BODY, secrets) is True, secrets
    assert run(command, program, rotating, BODY, [OTHER]) is False
    assert run(command, program, rotating, BODY.replace(b"evt_1", b"evt_2"), [OLD, NEW]) is False
    single = signed_headers(secret=NEW, webhook_id="wh_1", event_name="post.published", body=BODY)
    assert run(command, program, single, BODY, [NEW]) is True
    assert run(command, program, single, BODY, [OLD]) is False
