"""Which webhook URLs the service will POST to (CONTRACT.md §10, DESIGN.md §10).

A URL is http(s), has no userinfo, a valid port, and a host that is not ``localhost``; every
address the host resolves to must be public. The check runs at registration (``check_url``) and
again before every send (``resolve_target``), whose result is the address the sender connects
to: the name is resolved once, so a second lookup cannot swap in a private address.

``WEBHOOK_ALLOW_PRIVATE_URLS`` (sandbox only) admits loopback and private targets for local testing.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, quote, urlsplit

from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_URL_LENGTH = 2048
DEFAULT_PORTS = {"http": 80, "https": 443}

# Ranges refused even where ``ipaddress`` calls them global (or in versions where it does).
_EXTRA_BLOCKED = [
    ipaddress.ip_network(net)
    for net in (
        "0.0.0.0/8",
        "100.64.0.0/10",  # carrier-grade NAT
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.88.99.0/24",  # the deprecated 6to4 relay anycast
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
        "::/8",
        "64:ff9b::/96",  # NAT64
        "64:ff9b:1::/48",
        "100::/64",
        "2001::/23",
        "2001:db8::/32",
        "2002::/16",  # 6to4
        "3fff::/20",
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
    )
]
# With WEBHOOK_ALLOW_PRIVATE_URLS: loopback and the private ranges a developer's receiver sits on.
_LOCAL_TESTING = [
    ipaddress.ip_network(net)
    for net in ("127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "::1/128", "fc00::/7")
]

_NUMERIC_PART = re.compile(r"^(0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*)$")
_HOST_CHARS = re.compile(r"^[a-z0-9.\-_]+$")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_BRACKETED_NETLOC = re.compile(r"^\[[^\[\]]+\](:[^:\[\]]*)?$")


class UnsafeUrl(ValueError):
    """The URL is refused; the message says why (safe to show to the client: it never names an
    address the client did not write)."""


@dataclass(frozen=True)
class Target:
    """Where to send: the URL's pieces plus the vetted addresses to connect to, in order."""

    scheme: str
    host: str  # the name for the Host header and TLS (IDNA, lower case)
    port: int
    path: str  # path and query, never empty
    addresses: tuple[str, ...]

    @property
    def host_header(self) -> str:
        name = f"[{self.host}]" if ":" in self.host else self.host
        return name if DEFAULT_PORTS[self.scheme] == self.port else f"{name}:{self.port}"


def _private_allowed() -> bool:
    return bool(settings.WEBHOOK_ALLOW_PRIVATE_URLS)


def parse_numeric_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address ``inet_aton`` would read from ``host`` (``127.1``, ``0x7f.1``, ``2130706433``,
    ``017700000001``), or None when the host is not such a numeric spelling."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_NUMERIC_PART.match(part) for part in parts):
        return None
    try:
        values = [int(part, _base(part)) for part in parts]
    except ValueError:
        return None
    *head, last = values
    if any(value > 255 for value in head) or last >= 256 ** (5 - len(parts)):
        return None
    number = 0
    for value in head:
        number = number * 256 + value
    number = number * 256 ** (5 - len(parts)) + last
    return ipaddress.IPv4Address(number)


def _base(part: str) -> int:
    if part[:2].lower() == "0x":
        return 16
    return 8 if len(part) > 1 and part.startswith("0") else 10


def refusal_reason(address: IPAddress) -> str | None:
    """What kind of address ``address`` is when it may not be a webhook target ("a loopback
    address"), or None when it may. The address itself is left out: the caller decides whether
    the client may see it (only when the client wrote it)."""
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        reason = refusal_reason(embedded)
        if reason is not None:
            return reason
    if _private_allowed() and any(address in net for net in _LOCAL_TESTING if net.version == address.version):
        return None
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address (cloud metadata lives there)"
    if address.is_multicast:
        return "a multicast address"
    if address.is_unspecified:
        return "an unspecified address"
    blocked = any(address in net for net in _EXTRA_BLOCKED if net.version == address.version)
    if address.is_private or address.is_reserved or blocked or not address.is_global:
        return "a private, reserved or otherwise non-public address"
    return None


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address carried by an IPv4-mapped, 6to4 or NAT64 IPv6 address."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in ipaddress.ip_network("64:ff9b::/96"):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _split(url: str) -> tuple[SplitResult, str, int]:
    if not isinstance(url, str) or not url:
        raise UnsafeUrl("url must be a non-empty string")
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeUrl(f"url must be at most {MAX_URL_LENGTH} characters")
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise UnsafeUrl("url must not contain whitespace or control characters")
    if not url.isascii() and _SURROGATE.search(url):
        raise UnsafeUrl("url is not valid Unicode")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise UnsafeUrl("url is not a valid URL")
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise UnsafeUrl("url must use http or https")
    if "@" in parts.netloc:
        raise UnsafeUrl("url must not contain credentials (user or password)")
    raw_host = parts.hostname or ""
    if not raw_host:
        raise UnsafeUrl("url must name a host")
    try:
        port = parts.port
    except ValueError:
        raise UnsafeUrl("url has an invalid port")
    if port == 0:
        raise UnsafeUrl("url has an invalid port")
    if parts.netloc.endswith(":"):
        raise UnsafeUrl("url has an invalid port")
    # urlsplit ignores text between "]" and the port ("http://[::1]junk:80/"): such a URL names
    # something other than what would be stored and shown, so it is refused.
    if "]" in parts.netloc and not _BRACKETED_NETLOC.match(parts.netloc):
        raise UnsafeUrl("url has an invalid IPv6 address")
    return parts, _canonical_host(raw_host), port or DEFAULT_PORTS[scheme]


def _canonical_host(raw_host: str) -> str:
    host = raw_host.rstrip(".").lower()
    if not host:
        raise UnsafeUrl("url must name a host")
    if ":" in host:
        try:
            return str(ipaddress.IPv6Address(host))
        except ValueError:
            raise UnsafeUrl("url has an invalid IPv6 address")
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        raise UnsafeUrl("url has an invalid host name")
    if not _HOST_CHARS.match(ascii_host):
        raise UnsafeUrl("url has an invalid host name")
    return ascii_host


def normalize_url(url: str) -> str:
    """The form two URLs must share to count as the same webhook: scheme and host lower case,
    the default port dropped, an empty path as ``/``, non-ASCII characters of the path and query
    percent-encoded as they are sent (``/é`` and ``/%C3%A9`` reach the same endpoint)."""
    parts, host, port = _split(url)
    scheme = parts.scheme.lower()
    shown_host = f"[{host}]" if ":" in host else host
    netloc = shown_host if port == DEFAULT_PORTS[scheme] else f"{shown_host}:{port}"
    path = _ascii_only(parts.path or "/")
    query = f"?{_ascii_only(parts.query)}" if parts.query else ""
    return f"{scheme}://{netloc}{path}{query}"


def resolve_addresses(host: str, port: int, *, timeout: float | None = None) -> list[IPAddress]:
    """Every address ``host`` resolves to (one DNS lookup within ``timeout`` seconds, the delivery
    deadline by default), or the literal address itself."""
    literal = _literal_address(host)
    if literal is not None:
        return [literal]
    infos = _lookup(host, port, timeout=timeout)
    addresses: list[IPAddress] = []
    for info in infos:
        text = str(info[4][0]).split("%", 1)[0]
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            raise UnsafeUrl(f"url host {host} resolves to an unusable address")
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise UnsafeUrl(f"url host {host} does not resolve")
    return addresses


def _lookup(host: str, port: int, *, timeout: float | None = None) -> list[Any]:
    """``getaddrinfo`` bounded by the delivery deadline. The receiver's owner runs the name's DNS
    and could answer slowly; the lookup runs on a thread of its own (a shared pool could be
    filled by one tenant's slow names) that is abandoned when the time is up."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except BaseException as exc:  # handed to the caller, which raises or reports it
            outcome.append(exc)

    seconds = settings.WEBHOOK_TIMEOUT_SECONDS if timeout is None else timeout
    worker = threading.Thread(target=run, name="webhook-dns", daemon=True)
    worker.start()
    worker.join(max(seconds, 0.0))
    if not outcome:
        raise UnsafeUrl(f"url host {host} did not resolve within {seconds:g} s")
    if isinstance(outcome[0], UnicodeError | OSError):
        raise UnsafeUrl(f"url host {host} does not resolve")
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return list(outcome[0])


def _literal_address(host: str) -> IPAddress | None:
    if ":" in host:
        return ipaddress.IPv6Address(host)
    return parse_numeric_ipv4(host)


def resolve_target(url: str, *, timeout: float | None = None) -> Target:
    """Vet ``url`` and resolve its host once (within ``timeout`` seconds when given); every
    resulting address must be allowed.

    Raises :class:`UnsafeUrl` saying why when it is not. Nothing is connected to here."""
    parts, host, port = _split(url)
    if (host == "localhost" or host.endswith(".localhost")) and not _private_allowed():
        raise UnsafeUrl("url host must not be localhost")
    addresses = resolve_addresses(host, port, timeout=timeout)
    for address in addresses:
        reason = refusal_reason(address)
        if reason is None:
            continue
        if _literal_address(host) is not None:
            # The client wrote this address (in whatever spelling): naming it, as read, hides nothing.
            raise UnsafeUrl(f"url must be a public endpoint: {address} is {reason}")
        # Neither the address a name resolves to nor its kind: both would map the service's own
        # network (its DNS, its subnets) for whoever registers names to probe it.
        raise UnsafeUrl(f"url must be a public endpoint: url host {host} resolves to a private address")
    path = _ascii_only(parts.path or "/")
    if parts.query:
        path = f"{path}?{_ascii_only(parts.query)}"
    return Target(
        scheme=parts.scheme.lower(),
        host=host,
        port=port,
        path=path,
        addresses=tuple(str(a) for a in addresses),
    )


def _ascii_only(text: str) -> str:
    """``text`` with every non-ASCII character percent-encoded as UTF-8, as browsers send an IRI:
    the request line is ASCII, so a registered ``/é`` path could otherwise never be delivered."""
    return _NON_ASCII.sub(lambda match: quote(match.group(), safe=""), text)


def check_url(url: str) -> str:
    """Validate a URL for registration; returns its normalized form. Raises :class:`UnsafeUrl`."""
    resolve_target(url)
    return normalize_url(url)
