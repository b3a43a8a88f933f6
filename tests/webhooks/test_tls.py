"""HTTPS delivery to a pinned address: the socket goes to the address checked at send time while
SNI, the Host header and the certificate check use the URL's name; a certificate that is not
trusted, or is for another name, fails the attempt."""

from __future__ import annotations

import datetime as dt
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from webhooks.delivery.transport import post

pytestmark = pytest.mark.usefixtures("allow_private")


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(
    subject: str, issuer: str, public_key: Any, signing_key: Any, *, ca: bool, dns_name: str | None = None
) -> x509.Certificate:
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    if dns_name:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(dns_name)]), critical=False)
    return builder.sign(signing_key, hashes.SHA256())


@dataclass
class TlsReceiver:
    base_port: int
    ca_file: Path
    server: ThreadingHTTPServer
    sni: list[str | None] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)


def _tls_receiver(tmp_path: Path, dns_name: str) -> TlsReceiver:
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = _certificate("Test CA", "Test CA", ca_key.public_key(), ca_key, ca=True)
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf_cert = _certificate(dns_name, "Test CA", leaf_key.public_key(), ca_key, ca=False, dns_name=dns_name)
    ca_file, chain_file, key_file = tmp_path / "ca.pem", tmp_path / "leaf.pem", tmp_path / "leaf.key"
    ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    chain_file.write_bytes(leaf_cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        leaf_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    seen_sni: list[str | None] = []
    seen_hosts: list[str] = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(chain_file, key_file)
    context.sni_callback = lambda _sock, name, _ctx: seen_sni.append(name)  # type: ignore[assignment, func-returns-value]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen_hosts.append(self.headers.get("Host", ""))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return TlsReceiver(server.server_address[1], ca_file, server, seen_sni, seen_hosts)


@pytest.fixture
def tls_receiver(tmp_path: Path) -> Iterator[TlsReceiver]:
    receiver = _tls_receiver(tmp_path, "hooks.example.com")
    yield receiver
    receiver.server.shutdown()
    receiver.server.server_close()


@pytest.fixture
def trust(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Make the sender's default TLS context also trust ``ca_file`` (system roots stay)."""
    original = ssl.create_default_context

    def trusting(ca_file: Path) -> None:
        def context(*args: Any, **kwargs: Any) -> ssl.SSLContext:
            made = original(*args, **kwargs)
            made.load_verify_locations(cafile=str(ca_file))
            return made

        monkeypatch.setattr(ssl, "create_default_context", context)

    return trusting


def test_https_goes_to_the_pinned_address_with_the_name_for_sni_host_and_certificate(
    tls_receiver: TlsReceiver, public_dns: Any, trust: Any
) -> None:
    public_dns({"hooks.example.com": ["127.0.0.1"]})
    trust(tls_receiver.ca_file)
    url = f"https://hooks.example.com:{tls_receiver.base_port}/in"
    result = post(url=url, body=b"{}", headers={"Content-Type": "application/json"}, timeout=5)
    assert (result.ok, result.status_code, result.error) == (True, 200, "")
    assert tls_receiver.sni == ["hooks.example.com"]
    assert tls_receiver.hosts == [f"hooks.example.com:{tls_receiver.base_port}"]


def test_an_untrusted_certificate_fails_the_attempt(tls_receiver: TlsReceiver, public_dns: Any) -> None:
    public_dns({"hooks.example.com": ["127.0.0.1"]})
    url = f"https://hooks.example.com:{tls_receiver.base_port}/in"
    result = post(url=url, body=b"{}", headers={}, timeout=5)
    assert (result.ok, result.status_code) == (False, None)
    assert result.error == "TLS error: CERTIFICATE_VERIFY_FAILED"
    assert tls_receiver.hosts == []


def test_a_certificate_for_another_name_fails_the_attempt(
    tls_receiver: TlsReceiver, public_dns: Any, trust: Any
) -> None:
    public_dns({"other.example.com": ["127.0.0.1"]})
    trust(tls_receiver.ca_file)
    url = f"https://other.example.com:{tls_receiver.base_port}/in"
    result = post(url=url, body=b"{}", headers={}, timeout=5)
    assert (result.ok, result.status_code) == (False, None)
    assert result.error == "TLS error: CERTIFICATE_VERIFY_FAILED"
    assert tls_receiver.sni == ["other.example.com"] and tls_receiver.hosts == []
