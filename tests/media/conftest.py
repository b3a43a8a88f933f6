"""Fixtures of the media tests: an isolated MEDIA_ROOT, a moto S3 server, a fake images API."""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest
from botocore.config import Config
from moto.server import ThreadedMotoServer


@pytest.fixture(autouse=True)
def local_media(settings: Any, tmp_path: Any) -> Any:
    """Every test starts on local storage in a directory of its own, with the offline AI providers
    and no AI quota."""
    settings.STORAGE = "local"
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.AI_IMAGE_PROVIDER = "offline"
    settings.AI_CAPTION_PROVIDER = "offline"
    settings.AI_MONTHLY_UNITS = None
    return tmp_path / "media"


@pytest.fixture
def live_media(live_server: Any, settings: Any) -> str:
    """The web process over real HTTP; URLs minted now point at it."""
    settings.PUBLIC_BASE_URL = live_server.url
    return str(live_server.url)


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@dataclass
class S3Env:
    endpoint: str
    bucket: str
    client: Any


@pytest.fixture
def s3(moto_endpoint: str, settings: Any) -> S3Env:
    """STORAGE=s3 against moto in server mode, with a fresh bucket whose objects are publicly
    readable (as a bucket serving public media must be)."""
    bucket = f"media-{secrets.token_hex(6)}"
    client = boto3.client(
        "s3",
        endpoint_url=moto_endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(signature_version="s3v4"),
    )
    client.create_bucket(Bucket=bucket)
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"}
        ],
    }
    client.put_bucket_policy(Bucket=bucket, Policy=json.dumps(policy))
    settings.STORAGE = "s3"
    settings.S3_BUCKET = bucket
    settings.S3_REGION = "us-east-1"
    settings.S3_ENDPOINT_URL = moto_endpoint
    settings.S3_PUBLIC_BASE_URL = ""
    settings.AWS_ACCESS_KEY_ID = "testing"
    settings.AWS_SECRET_ACCESS_KEY = "testing"
    return S3Env(endpoint=moto_endpoint, bucket=bucket, client=client)


@dataclass
class FakeImagesApi:
    """A local stand-in for an OpenAI-compatible images API: records requests, answers with
    what the test set (``status`` and ``body``, a dict sent as JSON or raw bytes)."""

    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    body: Any = None
    delay: float = 0.0


@pytest.fixture
def fake_images_api() -> Iterator[FakeImagesApi]:
    api = FakeImagesApi()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            api.requests.append({"path": self.path, "headers": dict(self.headers), "json": json.loads(raw or b"{}")})
            if api.delay:
                threading.Event().wait(api.delay)
            payload = api.body if isinstance(api.body, bytes) else json.dumps(api.body).encode()
            self.send_response(api.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    api.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield api
    server.shutdown()
    server.server_close()


@dataclass
class FakeChatApi:
    """A local stand-in for an OpenAI-compatible chat completions API over real HTTP. It answers
    each request with the next scripted reply ``(status, body, headers)`` (the last one repeats)
    and records what it was sent. ``hang`` makes it hold every request unanswered until the test
    ends, so a client timeout is certain whatever the machine's load."""

    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    replies: list[tuple[int, Any, dict[str, str]]] = field(default_factory=list)
    hang: bool = False
    released: threading.Event = field(default_factory=threading.Event)

    def reply(self, status: int = 200, body: Any = None, headers: dict[str, str] | None = None) -> None:
        self.replies.append((status, body, headers or {}))

    def caption(self, text: str) -> None:
        self.reply(
            200, {"id": "chatcmpl-1", "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}
        )


@pytest.fixture
def fake_chat_api() -> Iterator[FakeChatApi]:
    api = FakeChatApi()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            with lock:
                api.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "json": json.loads(raw or b"{}")}
                )
                index = min(len(api.requests), len(api.replies)) - 1
            if api.hang:
                api.released.wait()
                return
            status, body, headers = api.replies[index] if api.replies else (500, {"error": "no reply scripted"}, {})
            payload = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    api.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield api
    api.released.set()
    server.shutdown()
    server.server_close()
