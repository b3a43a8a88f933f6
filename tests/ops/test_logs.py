"""Log lines: JSON with the request's context, and never a secret, whatever wrote them. The scan
of every line a whole e2e run writes is in tests/e2e/test_operations.py."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from core import logs
from core.logs import MASK, redact

BOT_TOKEN = "123456789:AAH-secret_bot-token-value"
API_KEY = "cpk_0123456789abcdef_SeCrEtPaRt-xyz_123"

LEAKS = [
    # (text as it could reach a log, the secret it must not show)
    ("GET /connect/Zx9-secretlinktoken_abc/MASTODON HTTP/1.1", "Zx9-secretlinktoken_abc"),
    ("GET /connect/Zx9-secretlinktoken_abc HTTP/1.1", "Zx9-secretlinktoken_abc"),
    ("/connect/callback/MASTODON?code=oauthcode123&state=statevalue456", "oauthcode123"),
    ("/connect/callback/MASTODON?code=oauthcode123&state=statevalue456", "statevalue456"),
    (f"POST /sandbox/telegram/bot{BOT_TOKEN}/sendMessage HTTP/1.1", "AAH-secret_bot-token-value"),
    (f"https://api.telegram.org/bot{BOT_TOKEN}/getMe", "AAH-secret_bot-token-value"),
    ("PUT /uploads/ws/abc.jpg?expires=1900000000&signature=c2lnbmF0dXJlLXNlY3JldA HTTP/1.1", "c2lnbmF0dXJlLXNlY3JldA"),
    ("https://bucket.s3.amazonaws.com/k?X-Amz-Credential=AKIAX&X-Amz-Signature=abcdef0123456789", "abcdef0123456789"),
    ("Authorization: Bearer tok_0123456789abcdefSECRET", "tok_0123456789abcdefSECRET"),
    (f"authorization={API_KEY}", "SeCrEtPaRt-xyz_123"),
    (f"invalid key {API_KEY} presented", "SeCrEtPaRt-xyz_123"),
    ("grant_type=authorization_code&code=abc123secret&code_verifier=verif-999", "abc123secret"),
    ("grant_type=authorization_code&code=abc123secret&code_verifier=verif-999", "verif-999"),
    ("refresh_token=rt-secret-0001&client_secret=cs-secret-0002", "rt-secret-0001"),
    ("refresh_token=rt-secret-0001&client_secret=cs-secret-0002", "cs-secret-0002"),
    ('{"query": "code=quoted-secret-1&x=1"}', "quoted-secret-1"),
    ("token gAAAAABlZ0123456789abcdefghijklmnopqrstuvwxyz_-== stored", "gAAAAABlZ0123456789abcdefghijklmnop"),
]


@pytest.mark.parametrize(("text", "secret"), LEAKS)
def test_every_kind_of_secret_is_masked(text, secret):
    assert secret in text
    redacted = redact(text)
    assert secret not in redacted
    assert MASK in redacted


def test_what_identifies_a_request_is_kept():
    assert redact("GET /connect/tok123456/MASTODON?x=1") == f"GET /connect/{MASK}/MASTODON?x=1"
    assert redact(f"key {API_KEY}") == f"key cpk_0123456789abcdef_{MASK}"  # the public part stays
    assert redact("/api/v1/social-posts?status=FAILED&limit=5") == "/api/v1/social-posts?status=FAILED&limit=5"
    assert redact("/connect/callback/MASTODON") == "/connect/callback/MASTODON"


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    """The service's own handler set-up (context filter, JSON formatter) writing into a buffer."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(logs.LogContextFilter())
    handler.setFormatter(logs.RedactingJsonFormatter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield stream
    finally:
        root.removeHandler(handler)


def lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


@pytest.fixture
def no_context() -> Iterator[None]:
    """Outside any request or task (an earlier test's request may have left its id set)."""
    from core.middleware import request_id_var

    tokens = [(var, var.set("-")) for var in (request_id_var, logs.workspace_id_var, logs.key_prefix_var)]
    yield
    logs.leave_task_context(tokens)


def test_a_line_is_json_with_the_context_and_redacted_tracebacks(captured, no_context):
    logger = logging.getLogger("crosspost.test")
    try:
        raise RuntimeError(f"platform refused https://api.telegram.org/bot{BOT_TOKEN}/sendMessage")
    except RuntimeError:
        logger.exception("publish failed for %s", "/connect/linktoken-777/X")
    (line,) = lines(captured)
    assert line["level"] == "ERROR"
    assert line["logger"] == "crosspost.test"
    assert line["message"] == f"publish failed for /connect/{MASK}/X"
    assert (line["request_id"], line["workspace_id"], line["key_prefix"]) == ("-", "-", "-")
    assert "time" in line
    assert "AAH-secret_bot-token-value" not in line["exc_info"]
    assert "RuntimeError" in line["exc_info"]


@pytest.mark.django_db
def test_lines_written_during_a_request_carry_its_id_workspace_and_key_prefix(
    captured, client_for, workspace, settings, monkeypatch, refused_port
):
    from core import ratelimit

    api = client_for("admin")
    key = api._credentials["HTTP_AUTHORIZATION"].removeprefix("Bearer ")
    # Redis really unreachable: the rate limiter logs and fails open.
    settings.REDIS_URL = f"redis://127.0.0.1:{refused_port}/0"
    monkeypatch.setattr(ratelimit, "_last_failure_log", 0.0)  # its once-per-10-s throttle
    response = api.get("/api/v1/social-posts", HTTP_X_REQUEST_ID="req-logs-1")
    assert response.status_code == 200
    written = [line for line in lines(captured) if line["message"] == "rate limiter: Redis unreachable, failing open"]
    assert written, captured.getvalue()
    assert written[0]["request_id"] == "req-logs-1"
    assert written[0]["workspace_id"] == workspace.pk
    assert written[0]["key_prefix"] == "_".join(key.split("_")[:2])
    assert key not in captured.getvalue()


def test_task_messages_carry_the_context_of_the_request_that_queued_them(no_context):
    from core.middleware import request_id_var

    assert logs.context_headers() == {}
    tokens = [
        (request_id_var, request_id_var.set("req-9")),
        (logs.workspace_id_var, logs.workspace_id_var.set("ws_1")),
        (logs.key_prefix_var, logs.key_prefix_var.set("cpk_00")),
    ]
    headers = logs.context_headers()
    logs.leave_task_context(tokens)
    assert headers == {"x_request_id": "req-9", "x_workspace_id": "ws_1", "x_key_prefix": "cpk_00"}
    entered = logs.enter_task_context(headers.get)
    assert (request_id_var.get(), logs.workspace_id_var.get(), logs.key_prefix_var.get()) == ("req-9", "ws_1", "cpk_00")
    logs.leave_task_context(entered)
    assert request_id_var.get() == "-"


def test_the_access_log_line_is_redacted_json_with_whose_request_it_was(no_context):
    from tests.core.test_log_redaction import access_line

    atoms = {
        "h": "127.0.0.1",
        "m": "GET",
        "U": "/connect/abcTOKENdef/MASTODON",
        "q": "code=the-oauth-code&state=the-state",
        "s": "302",
        "B": 0,
        "D": 12345,
        "{x-request-id}o": "rid-1",
        "workspace_id": "ws_1",
        "key_prefix": "cpk_00",
        "a": "curl/8",
        "f": f"https://example.com/bot{BOT_TOKEN}/x",
    }
    line = json.loads(access_line(atoms))
    assert list(line)[:4] == ["time", "level", "logger", "message"]
    assert line["time"].endswith("+00:00") and "T" in line["time"]
    assert line["level"] == "INFO"
    assert line["message"] == f"GET /connect/{MASK}/MASTODON 302"
    assert line["path"] == f"/connect/{MASK}/MASTODON"
    assert line["query"] == f"code={MASK}&state={MASK}"
    assert line["referer"] == f"https://example.com/bot{MASK}/x"
    assert (line["status"], line["duration_ms"]) == ("302", 12.3)
    # The request's own, not the (empty) context of the front's event loop that writes the line.
    assert (line["request_id"], line["workspace_id"], line["key_prefix"]) == ("rid-1", "ws_1", "cpk_00")


def test_redaction_never_breaks_the_json_of_a_line(captured, no_context):
    logging.getLogger("crosspost.test").warning('quoted "code=abc\\"def" and \\ backslash password=p\\"w')
    (line,) = lines(captured)  # still one valid JSON object
    assert "abc" not in line["message"] and 'p\\"w' not in line["message"]
    assert line["message"].startswith('quoted "code=[redacted]')


def test_gunicorn_takes_the_service_logging_and_keeps_no_control_socket_outside_var(settings):
    """What gunicorn reads from ./gunicorn.conf.py (a name it does not know it ignores silently):
    the service's logging for its own lines and the access log, and no control socket (its default
    place, $HOME/.gunicorn/, is shared by every checkout of the machine); should one be enabled,
    its path is under this checkout's var/. The e2e run (tests/e2e/test_process_logs.py) checks
    that the processes leave nothing in $HOME or $XDG_RUNTIME_DIR."""
    import runpy
    from pathlib import Path

    from gunicorn.config import KNOWN_SETTINGS

    conf = runpy.run_path(str(Path(settings.BASE_DIR) / "gunicorn.conf.py"))
    known = {setting.name for setting in KNOWN_SETTINGS}
    assert set(conf["__all__"]) <= known, set(conf["__all__"]) - known
    assert conf["logconfig_dict"] == settings.LOGGING
    assert conf["control_socket_disable"] is True
    assert Path(conf["control_socket"]).parent == Path(settings.VAR_DIR)
    assert "pidfile" not in conf["__all__"]  # gunicorn writes none unless told to
