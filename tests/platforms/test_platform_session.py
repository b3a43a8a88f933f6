"""The platform session's short path (``platforms.transport.PlatformSession``): a plain call gives
the answer ``requests.Session`` gives (status, headers, body, the request it sent, its hooks),
follows a redirect and keeps a cookie as requests does, and a call with options of its own takes
requests' own path. Against a small HTTP server on loopback."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import requests
import responses
from requests.adapters import HTTPAdapter

from platforms.base import thread_session
from platforms.transport import PlatformSession, platform_session


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the platforms answer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _echo(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        if self.path.startswith("/moved"):
            self.send_response(302)
            self.send_header("Location", "/echo?after=redirect")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        extra = {"Set-Cookie": "visited=yes; Path=/"} if self.path.startswith("/cookie") else {}
        answer = {
            "method": self.command,
            "path": self.path,
            "body": body,
            "contentType": self.headers.get("Content-Type"),
            "userAgent": self.headers.get("User-Agent"),
            "auth": self.headers.get("Authorization"),
            "cookie": self.headers.get("Cookie"),
            "dropped": self.headers.get("X-Dropped"),
        }
        self._answer(418 if "teapot" in self.path else 200, answer, {"X-Rate-Limit-Reset": "42", **extra})

    do_GET = do_POST = do_PUT = do_DELETE = _echo


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _plain_requests_session() -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    session.headers["User-Agent"] = "Crosspost/1.0"
    return session


def _seen(response: requests.Response) -> tuple[Any, ...]:
    return (
        response.status_code,
        response.reason,
        response.headers.get("Content-Type"),
        response.headers.get("x-rate-limit-reset"),
        response.json(),
        response.url,
        response.encoding,
        response.ok,
        response.request.method,
        response.request.path_url,
        [r.status_code for r in response.history],
    )


@pytest.mark.parametrize(
    ("method", "path", "options"),
    [
        ("POST", "/echo", {"json": {"status": "héllo", "n": 1}, "headers": {"Authorization": "Bearer t"}}),
        ("POST", "/echo/form", {"data": {"a": "1", "b": "two words"}}),
        ("GET", "/echo", {"params": {"q": "a b", "n": 2}, "headers": {"X-Dropped": None}}),
        ("PUT", "/teapot", {"data": b"raw bytes", "headers": {"Content-Type": "application/octet-stream"}}),
        ("DELETE", "/echo/1", {}),
        ("GET", "/moved", {}),
        ("POST", "/echo/upload", {"files": {"file": ("a.txt", b"abc", "text/plain")}}),
    ],
)
def test_a_plain_call_answers_as_requests_answers(server: str, method: str, path: str, options: dict[str, Any]) -> None:
    lean = platform_session().request(method, f"{server}{path}", timeout=5, **options)
    usual = _plain_requests_session().request(method, f"{server}{path}", timeout=5, **options)

    if "files" in options:  # the multipart boundary is random: the rest must match
        lean_body, usual_body = lean.json().pop("body"), usual.json().pop("body")
        assert "abc" in lean_body and "abc" in usual_body
        assert lean.json()["contentType"].startswith("multipart/form-data; boundary=")
    else:
        assert _seen(lean) == _seen(usual)
    assert lean.json()["userAgent"] == "Crosspost/1.0"


def test_a_redirect_is_followed_and_kept_in_the_history(server: str) -> None:
    response = platform_session().get(f"{server}/moved", timeout=5)
    assert response.status_code == 200
    assert response.json()["path"] == "/echo?after=redirect"
    assert [r.status_code for r in response.history] == [302]
    unfollowed = platform_session().get(f"{server}/moved", timeout=5, allow_redirects=False)
    assert unfollowed.status_code == 302 and unfollowed.history == []


def test_a_cookie_the_answer_sets_is_kept_and_sent_back(server: str) -> None:
    session = platform_session()
    session.get(f"{server}/cookie", timeout=5)
    assert session.cookies.get("visited") == "yes"
    assert session.get(f"{server}/echo", timeout=5).json()["cookie"] == "visited=yes"


def test_the_sessions_response_hooks_run(server: str) -> None:
    session = platform_session()
    seen: list[int] = []
    session.hooks["response"].append(lambda response, *args, **kwargs: seen.append(response.status_code))
    session.post(f"{server}/teapot", json={}, timeout=5)
    assert seen == [418]


def test_a_call_with_options_of_its_own_takes_requests_path(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    session = platform_session()
    usual: list[str] = []
    original = requests.Session.request

    def spy(self: requests.Session, method: str, url: str, **kwargs: Any) -> requests.Response:
        usual.append(url)
        return original(self, method, url, **kwargs)

    monkeypatch.setattr(requests.Session, "request", spy)
    session.get(f"{server}/echo", timeout=5)
    assert usual == []  # the short path
    answer = session.get(f"{server}/echo", timeout=5, auth=("user", "secret"))
    assert usual == [f"{server}/echo"]
    assert answer.json()["auth"].startswith("Basic ")


def test_the_thread_session_is_a_platform_session() -> None:
    assert isinstance(thread_session(), PlatformSession)


def test_a_plain_call_goes_to_the_pool_without_the_adapters_send(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[str] = []
    original = HTTPAdapter.send

    def spy(self: HTTPAdapter, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        sent.append(request.url or "")
        return original(self, request, **kwargs)

    monkeypatch.setattr(HTTPAdapter, "send", spy)
    session = platform_session()
    assert session.post(f"{server}/echo", json={"a": 1}, timeout=5).json()["body"] == '{"a": 1}'
    assert sent == []
    session.get(f"{server}/echo", timeout=5, stream=True).close()  # an option of its own: requests' path
    assert sent == [f"{server}/echo"]


def _failure(session: requests.Session, url: str, timeout: Any) -> type[BaseException]:
    with pytest.raises(requests.RequestException) as caught:
        session.post(url, json={}, timeout=timeout)
    return type(caught.value)


@pytest.mark.parametrize(
    ("where", "timeout"),
    [("refused", 5), ("silent", 0.3), ("silent", (5, 0.3)), ("bad-host", 5), ("no-host", 5), ("tls", 5)],
)
def test_a_plain_call_fails_with_the_exception_requests_raises(refused_port: int, where: str, timeout: Any) -> None:
    silent = socket.create_server(("127.0.0.1", 0))  # accepts (the kernel's backlog) and never answers
    urls = {
        "refused": f"http://127.0.0.1:{refused_port}/x",
        "silent": f"http://127.0.0.1:{silent.getsockname()[1]}/x",
        "bad-host": "http://exa mple.invalid/x",
        "no-host": "http:///x",
        "tls": f"https://127.0.0.1:{silent.getsockname()[1]}/x",
    }
    try:
        lean = _failure(platform_session(), urls[where], timeout if where != "tls" else 0.3)
        usual = _failure(_adapter_session(), urls[where], timeout if where != "tls" else 0.3)
    finally:
        silent.close()
    assert lean is usual


def _adapter_session() -> requests.Session:
    session = _plain_requests_session()
    session.mount("http://", HTTPAdapter(max_retries=0))
    session.mount("https://", HTTPAdapter(max_retries=0))
    return session


@responses.activate
def test_recorded_answers_reach_a_plain_call_at_the_pool() -> None:
    responses.post("https://platform.example/v1/things", json={"id": "1"}, status=201, headers={"X-Seen": "yes"})
    answer = thread_session().post("https://platform.example/v1/things?x=1", json={"text": "héllo"}, timeout=5)
    assert (answer.status_code, answer.json(), answer.headers["X-Seen"]) == (201, {"id": "1"}, "yes")
    assert answer.url == "https://platform.example/v1/things?x=1"
    (call,) = responses.calls
    assert call.request.url == "https://platform.example/v1/things?x=1"
    assert json.loads(call.request.body) == {"text": "héllo"}
    assert call.request.headers["User-Agent"] == "Crosspost/1.0"
