"""Property-based contract tests: every operation of the public OpenAPI description, driven
in-process through the WSGI app with schema-generated (and schema-violating) requests.

For every response: never a 5xx, the status code and body are the documented ones, and every
4xx carries the error body of CONTRACT.md §3 (``statusCode`` equal to the HTTP status, ``error``,
``message`` a string or a list of strings). Negative cases (query strings and bodies that break
the schema) must be refused with a 4xx.

Platform calls go to the simulators on loopback (``sandbox``); nothing leaves the machine
(see conftest.py). ``POST /webhooks/{id}/test`` sends a real HTTP request to the webhook URL, so
it is not fuzzed. ``FUZZ_SEED`` / ``FUZZ_MAX_EXAMPLES`` in the environment change the seed and
the number of generated cases per operation.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from typing import Any

import hypothesis.strategies as st
import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from hypothesis.strategies import SearchStrategy
from jsonschema import Draft4Validator
from schemathesis import Case, CheckContext, HookContext, Response
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.core.failures import AcceptedNegativeData
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from config.wsgi import application
from posts.models import PostStatus, TargetStatus
from tests.factories.analytics import SocialAccountFactory
from tests.factories.posts import PostFactory, PostTargetFactory
from workspaces.models import Workspace
from workspaces.services import api_key_create

# Reported at the end of the run (conftest.py).
CASES_RUN: Counter[str] = Counter()
STATUSES: defaultdict[str, Counter[int]] = defaultdict(Counter)
SEED = int(os.environ.get("FUZZ_SEED", "20260801"))
MAX_EXAMPLES = int(os.environ.get("FUZZ_MAX_EXAMPLES", "15"))

# Seeded rows have fixed ids so generated path parameters can name them (see the hooks below).
ACCOUNTS = {
    "FACEBOOK": "acc_fuzzfacebook",
    "INSTAGRAM": "acc_fuzzinstagram",
    "PINTEREST": "acc_fuzzpinterest",
    "BLUESKY": "acc_fuzzbluesky",
}
DRAFT_POST = "post_fuzzdraft"
SCHEDULED_POST = "post_fuzzscheduled"
FAILED_POST = "post_fuzzfailed"
SEEDED_IDS = {
    "/social-accounts/": list(ACCOUNTS.values()),
    "/social-posts/": [DRAFT_POST, SCHEDULED_POST, FAILED_POST],
}

CONFIG = SchemathesisConfig.from_dict(
    {
        "seed": SEED,
        "generation": {
            "mode": "all",
            "max-examples": MAX_EXAMPLES,
            "no-shrink": True,
            "database": "none",
            "with-security-parameters": False,
            # NUL in a string is refused before anything else (tests/core covers it); without it
            # generated payloads reach the validation behind the parser.
            "allow-x00": False,
        },
        "checks": {
            # A schema-violating request may also be refused as too large (413).
            "negative_data_rejection": {
                "expected-statuses": [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429],
            },
        },
        "phases": {
            "examples": {"enabled": True},
            "coverage": {"enabled": True},
            "fuzzing": {"enabled": True},
            "stateful": {"enabled": False},
        },
        "operations": [
            {
                # These three share POST /social-posts' large body, whose coverage phase (every
                # boundary and every violation of every field, ~1000 cases) already runs there;
                # here random valid and invalid bodies suffice.
                "include-operation-id": ["validatePost", "bulkCreatePosts", "updatePost"],
                "phases": {"coverage": {"enabled": False}},
                "generation": {"max-examples": 2 * MAX_EXAMPLES},
            },
            {"include-operation-id": "createPost", "generation": {"max-examples": 2 * MAX_EXAMPLES}},
        ],
    }
)

schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", application, config=CONFIG).exclude(
    path="/webhooks/{id}/test"
)


@schema.hook
def before_generate_path_parameters(context: HookContext, strategy: SearchStrategy[Any]) -> SearchStrategy[Any]:
    """Half the generated ids are made up (→ 404), half name a seeded row (→ the real code path)."""
    operation = context.operation
    if operation is None:
        return strategy
    for prefix, ids in SEEDED_IDS.items():
        if operation.path.startswith(prefix) and operation.path.count("{") == 1:
            return st.one_of(strategy, st.fixed_dictionaries({"id": st.sampled_from(ids)}))
    return strategy


TARGET_FIELDS = {
    "FACEBOOK": "pageIds",
    "INSTAGRAM": "instagramConnectionIds",
    "PINTEREST": "pinterestConnectionIds",
    "BLUESKY": "blueskyConnectionIds",
}
POST_BODY_OPERATIONS = {"createPost", "validatePost", "bulkCreatePosts", "updatePost"}


def _as_json_schema(node: Any) -> Any:
    """OpenAPI 3.0's ``nullable: true`` in JSON Schema terms (``null`` allowed too)."""
    if isinstance(node, list):
        return [_as_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: _as_json_schema(value) for key, value in node.items() if key != "nullable"}
    if node.get("nullable"):
        converted = {"anyOf": [converted, {"type": "null"}]}
    return converted


def _body_errors(operation: Any, body: Any, *, formats: bool = False) -> list[Any]:
    raw = operation.schema.raw_schema
    definition = operation.definition.raw
    body_schema = definition.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body_schema is None:
        return []
    document = _as_json_schema({**body_schema, "components": raw["components"]})
    checker = Draft4Validator.FORMAT_CHECKER if formats else None
    return list(Draft4Validator(document, format_checker=checker).iter_errors(body))


def _aimed_at_seeded_accounts(body: Any, platforms: list[str], timezone: str) -> dict[str, Any]:
    aimed = {key: value for key, value in body.items() if key not in TARGET_FIELDS.values()}
    aimed["platforms"] = platforms
    if "timezone" in aimed or "posts" in aimed:
        aimed["timezone"] = timezone
    for platform in platforms:
        aimed[TARGET_FIELDS[platform]] = [ACCOUNTS[platform]]
    return dict(aimed)


@schema.hook
def before_generate_body(context: HookContext, strategy: SearchStrategy[Any]) -> SearchStrategy[Any]:
    """Post payloads name made-up accounts (→ 400 connection_not_found); half of the valid ones are
    re-aimed at the seeded accounts so that validation runs past the targets."""
    operation = context.operation
    if operation is None or operation.definition.raw.get("operationId") not in POST_BODY_OPERATIONS:
        return strategy
    platforms = st.lists(st.sampled_from(sorted(ACCOUNTS)), min_size=1, max_size=len(ACCOUNTS), unique=True)
    timezones = st.sampled_from(["UTC", "Europe/Paris", "America/New_York", "Australia/Sydney"])

    def maybe_aim(body: Any) -> SearchStrategy[Any]:
        if not isinstance(body, dict) or _body_errors(operation, body):
            return st.just(body)  # negative cases stay exactly as generated
        aimed = st.builds(_aimed_at_seeded_accounts, st.just(body), platforms, timezones)
        return st.one_of(st.just(body), aimed)

    return strategy.flatmap(maybe_aim)


@schema.hook
def map_headers(context: HookContext, headers: dict[str, Any] | None) -> dict[str, Any] | None:
    """Random Idempotency-Keys are mostly malformed (400 before anything else runs); the coverage
    phase already sends malformed ones, so the other phases keep only well-formed keys."""
    if headers and not re.fullmatch(r"[!-~]{1,255}", str(headers.get("Idempotency-Key", "ok"))):
        headers = {name: value for name, value in headers.items() if name != "Idempotency-Key"}
    return headers


@schemathesis.check
def error_body_shape(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """Every 4xx is ``{statusCode, error, message, code?}`` with statusCode equal to the status."""
    if not 400 <= response.status_code < 500:
        return None
    body = response.json()
    assert isinstance(body, dict), f"error body is not an object: {body!r}"
    assert body.get("statusCode") == response.status_code, f"statusCode {body.get('statusCode')!r} in {body!r}"
    assert isinstance(body.get("error"), str) and body["error"], f"error is not a phrase: {body!r}"
    message = body.get("message")
    assert isinstance(message, str) or (
        isinstance(message, list) and message and all(isinstance(item, str) for item in message)
    ), f"message is neither a string nor a list of strings: {body!r}"
    assert "code" not in body or isinstance(body["code"], str), f"code is not a string: {body!r}"
    return None


def _bulk_items_refused_one_by_one(case: Case, response: Response) -> bool:
    """Bulk creation validates each item on its own (CONTRACT.md §5: one bad item never sinks the
    others), so a body whose only schema violations lie inside ``posts[i]`` is a 201 in which each
    of those items is reported ``success: false``."""
    if case.operation.definition.raw.get("operationId") != "bulkCreatePosts" or response.status_code != 201:
        return False
    errors = _body_errors(case.operation, case.body, formats=True) if isinstance(case.body, dict) else []
    paths = [list(error.absolute_path) for error in errors]
    if not errors or not all(len(path) >= 2 and path[0] == "posts" and isinstance(path[1], int) for path in paths):
        return False
    results = response.json().get("results")
    if not isinstance(results, list) or len(results) != len(case.body["posts"]):
        return False
    return all(results[path[1]].get("success") is False for path in paths)


@schemathesis.check
def negative_data_rejected(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """``negative_data_rejection``, except where the contract answers a schema-violating part of the
    body inside a success: ``validatePost`` reports every problem in a 200 ``{valid: false, issues}``,
    and bulk creation reports a bad item as failed in its 201."""
    if case.operation.definition.raw.get("operationId") == "validatePost":
        return None
    try:
        return negative_data_rejection(ctx, response, case)
    except AcceptedNegativeData:
        if _bulk_items_refused_one_by_one(case, response):
            return None
        raise


CHECKS: list[Callable[..., Any]] = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejected,
    ignored_auth,
    unsupported_method,
    error_body_shape,
]


def _seed(workspace: Workspace) -> None:
    for platform, account_id in ACCOUNTS.items():
        extra = {"page_id": "fuzzpage1"} if platform == "FACEBOOK" else {}
        SocialAccountFactory(id=account_id, workspace=workspace, platform=platform, **extra)
    future = dt.datetime.now(dt.UTC) + dt.timedelta(days=3)
    for post_id, status, target_status, scheduled_at in [
        (DRAFT_POST, PostStatus.DRAFT, TargetStatus.PENDING, None),
        (SCHEDULED_POST, PostStatus.SCHEDULED, TargetStatus.PENDING, future),
        (FAILED_POST, PostStatus.FAILED, TargetStatus.FAILED, None),
    ]:
        post = PostFactory(id=post_id, workspace=workspace, status=status, scheduled_at=scheduled_at)
        PostTargetFactory(
            post=post, platform="BLUESKY", account_id=ACCOUNTS["BLUESKY"], account_name="Bluesky", status=target_status
        )


@pytest.fixture
def _keep_test_connection() -> Iterator[None]:
    """Django closes the database connection at the end of every request it serves; in a test
    that connection holds the test's transaction, so (as Django's own test client does) keep it."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def auth_headers(workspace: Workspace, sandbox: str, _keep_test_connection: None) -> dict[str, str]:
    _seed(workspace)
    key = api_key_create(workspace=workspace, name="fuzz", role="admin", rate_limit=1_000_000).plaintext
    # Over any generated X-Workspace-Id: a random one is only ever 403 workspace_access_denied
    # (tests/contract/test_isolation.py), and every case should reach the seeded workspace.
    return {"Authorization": f"Bearer {key}", "X-Workspace-Id": workspace.id}


@schema.parametrize()
@settings(
    deadline=None,
    # The seeded rows and the key are the same for every generated case on purpose.
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)
def test_api_fuzz(case: Case, auth_headers: dict[str, str]) -> None:
    CASES_RUN[case.operation.label] += 1
    response = case.call_and_validate(headers=auth_headers, checks=CHECKS)
    STATUSES[case.operation.label][response.status_code] += 1
