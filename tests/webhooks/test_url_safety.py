"""The URL table: everything non-public is refused, at registration and at delivery, and no
socket is ever opened to it."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest

from webhooks.delivery.transport import post
from webhooks.url_safety import UnsafeUrl, check_url, normalize_url, parse_numeric_ipv4, resolve_target

REFUSED_LITERALS = [
    # loopback, every numeric spelling
    "http://127.0.0.1/",
    "http://127.1/",
    "http://0x7f.1/",
    "http://0x7f000001/",
    "http://2130706433/",
    "http://017700000001/",
    "http://0177.0.0.1/",
    "http://127.000.000.001/",
    "http://[::1]/",
    # private
    "http://10.0.0.1/",
    "http://10.1/",
    "http://172.16.5.4/",
    "http://192.168.1.1/",
    "http://3232235777/",
    "http://0xc0.0xa8.1.1/",
    # link-local and cloud metadata
    "http://169.254.169.254/latest/meta-data/",
    "http://2852039166/",
    "http://[fe80::1]/",
    "http://[fd00:ec2::254]/",
    # unspecified, "this network"
    "http://0.0.0.0/",
    "http://0/",
    "http://[::]/",
    # carrier-grade NAT
    "http://100.64.0.1/",
    "http://100.127.255.254/",
    # multicast, reserved, broadcast
    "http://224.0.0.1/",
    "http://239.255.255.250/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://[ff02::1]/",
    # documentation and benchmarking ranges
    "http://192.0.2.10/",
    "http://198.51.100.7/",
    "http://203.0.113.9/",
    "http://198.18.0.1/",
    "http://192.0.0.8/",
    "http://[2001:db8::1]/",
    # IPv6 forms of private IPv4 addresses
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:10.0.0.1]/",
    "http://[2002:7f00:1::]/",
    "http://[2002:a9fe:a9fe::1]/",
    "http://[64:ff9b::127.0.0.1]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[::127.0.0.1]/",
    "http://[fc00::1]/",
    "https://[::1]:8443/",
    # more spellings: fullwidth digits and ideographic dots (IDNA folds them), a trailing dot,
    # the long and IPv4-translated IPv6 forms, a zone id, Teredo, NAT64 local use
    "http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/",
    "http://127\u30020\u30020\u30021/",
    "http://127.0.0.1./",
    "http://0x7f.0x0.0x0.0x1/",
    "http://[0:0:0:0:0:ffff:7f00:1]/",
    "http://[::ffff:0:127.0.0.1]/",
    "http://[::ffff:100.64.0.1]/",
    "http://[::ffff:224.0.0.1]/",
    "http://[2002:c0a8:101::]/",
    "http://[64:ff9b::10.0.0.1]/",
    "http://[64:ff9b:1::a00:1]/",
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    "http://[fe80::1%25eth0]/",
    "http://[fec0::1]/",
    "http://[ff05::1:3]/",
    "http://[100::1]/",
    # other clouds' metadata endpoints and the remaining special-purpose IPv4 ranges
    "http://100.100.100.200/",
    "http://169.254.170.2/",
    "http://192.0.0.192/",
    "http://192.88.99.1/",
]

REFUSED_OTHER = [
    ("http://localhost/", "localhost"),
    ("http://LOCALHOST./", "localhost"),
    ("http://api.localhost/", "localhost"),
    ("ftp://example.com/", "http or https"),
    ("file:///etc/passwd", "http or https"),
    ("gopher://example.com/", "http or https"),
    ("javascript:alert(1)", "http or https"),
    ("example.com/hook", "http or https"),
    ("http://user:pass@example.com/", "credentials"),
    ("http://user@example.com/", "credentials"),
    ("http://@example.com/", "credentials"),
    ("http://example.com:99999/", "port"),
    ("http://example.com:0/", "port"),
    ("http://example.com:abc/", "port"),
    ("http://example.com:/", "port"),
    ("http://example.com:-1/", "port"),
    ("http://example.com:+80/", "port"),
    ("http://example.com:\uff18\uff10/", "port"),
    ("https://example.com@127.0.0.1/", "credentials"),
    ("http://user%40example.com@example.com/", "credentials"),
    ("ws://example.com/", "http or https"),
    ("data:text/plain,hi", "http or https"),
    ("http:///nohost", "host"),
    ("http://exa mple.com/", "whitespace"),
    ("", "non-empty"),
    ("http://" + "a" * 2050 + ".com/", "at most"),
    # text between the bracket and the port, which urlsplit would silently drop
    ("http://[2606:2800:220:1::1]junk/", "invalid IPv6"),
    ("http://[2606:2800:220:1::1]junk:80/", "invalid IPv6"),
    ("http://[2606:2800:220:1::1]]:80/", "invalid IPv6"),
]


@pytest.fixture
def no_sockets(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Count every outgoing connection attempt (there must be none)."""
    opened: list[Any] = []

    def refuse(address: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(address)
        raise AssertionError(f"socket opened to {address}")

    monkeypatch.setattr(socket, "create_connection", refuse)
    return opened


@pytest.mark.parametrize("url", REFUSED_LITERALS)
def test_non_public_literal_addresses_are_refused_without_a_socket(
    url: str, no_sockets: list[Any], public_dns: Any
) -> None:
    with pytest.raises(UnsafeUrl, match="public endpoint"):
        check_url(url)
    result = post(url=url, body=b"{}", headers={}, timeout=1)
    assert result.status_code is None
    assert result.error.startswith("refused: url must be a public endpoint")
    assert no_sockets == []


@pytest.mark.parametrize(("url", "reason"), REFUSED_OTHER)
def test_malformed_or_local_urls_are_refused_with_the_reason(
    url: str, reason: str, no_sockets: list[Any], public_dns: Any
) -> None:
    public_dns({"example.com": ["93.184.216.34"], "api.localhost": ["93.184.216.34"]})
    with pytest.raises(UnsafeUrl, match=reason):
        check_url(url)
    assert not post(url=url, body=b"{}", headers={}, timeout=1).ok
    assert no_sockets == []


@pytest.mark.parametrize(
    "answers",
    [
        ["10.0.0.5"],
        ["127.0.0.1"],
        ["169.254.169.254"],
        ["100.64.1.1"],
        ["93.184.216.34", "192.168.0.1"],  # one bad address among good ones is enough
        ["2606:2800:220:1::1", "::1"],
        ["::ffff:10.0.0.1"],
    ],
)
def test_names_resolving_to_private_addresses_are_refused(
    answers: list[str], no_sockets: list[Any], public_dns: Any
) -> None:
    """The message says what is wrong but names neither the addresses nor their kind: both would
    map the service's own network for whoever registers names to probe it."""
    public_dns({"hooks.example.com": answers})
    with pytest.raises(UnsafeUrl) as refused:
        check_url("https://hooks.example.com/in")
    said = "url must be a public endpoint: url host hooks.example.com resolves to a private address"
    assert str(refused.value) == said
    assert post(url="https://hooks.example.com/in", body=b"{}", headers={}, timeout=1).error == f"refused: {said}"
    assert no_sockets == []


def test_unresolvable_name_is_refused(public_dns: Any) -> None:
    public_dns({})
    with pytest.raises(UnsafeUrl, match="does not resolve"):
        check_url("https://nowhere.example.com/")


def test_public_name_is_accepted_and_pinned_to_its_checked_addresses(public_dns: Any) -> None:
    public_dns({"hooks.example.com": ["93.184.216.34", "2606:2800:220:1::1"]})
    target = resolve_target("HTTPS://Hooks.Example.COM:443/in?x=1")
    assert (target.scheme, target.host, target.port, target.path) == ("https", "hooks.example.com", 443, "/in?x=1")
    assert target.addresses == ("93.184.216.34", "2606:2800:220:1::1")
    assert target.host_header == "hooks.example.com"
    assert check_url("http://93.184.216.34:8080/x") == "http://93.184.216.34:8080/x"


def test_name_public_at_registration_private_at_delivery_gets_no_socket(public_dns: Any, no_sockets: list[Any]) -> None:
    public_dns({"rebind.example.com": ["93.184.216.34"]})
    check_url("https://rebind.example.com/hook")
    public_dns({"rebind.example.com": ["127.0.0.1"]})
    result = post(url="https://rebind.example.com/hook", body=b"{}", headers={}, timeout=1)
    assert result.status_code is None
    assert (
        result.error
        == "refused: url must be a public endpoint: url host rebind.example.com resolves to a private address"
    )
    assert no_sockets == []


def test_connection_goes_only_to_the_address_resolved_once(public_dns: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """One lookup per send, and the socket opens to exactly that address (no second lookup the
    attacker's DNS could answer differently)."""
    lookups: list[str] = []
    real_getaddrinfo = socket.getaddrinfo

    def counting(host: Any, *args: Any, **kwargs: Any) -> Any:
        lookups.append(host)
        return real_getaddrinfo(host, *args, **kwargs)

    public_dns({"pinned.example.com": ["93.184.216.34"]})
    monkeypatch.setattr(socket, "getaddrinfo", counting)
    connected: list[Any] = []

    def fake_connect(address: Any, *args: Any, **kwargs: Any) -> Any:
        connected.append(address)
        raise ConnectionRefusedError(111, "refused")

    monkeypatch.setattr(socket, "create_connection", fake_connect)
    result = post(url="http://pinned.example.com:8080/x", body=b"{}", headers={}, timeout=1)
    assert lookups == ["pinned.example.com"]
    assert connected == [("93.184.216.34", 8080)]
    assert (result.status_code, result.error) == (None, "connection refused")


def test_private_urls_allowed_only_for_loopback_and_private_ranges_in_local_testing(
    settings: Any, public_dns: Any
) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    for url in ("http://127.0.0.1:9000/", "http://localhost:9000/", "http://10.0.0.2/", "http://[::1]/"):
        check_url(url)
    for url in ("http://169.254.169.254/", "http://224.0.0.1/", "http://0.0.0.0/", "http://100.64.0.1/"):
        with pytest.raises(UnsafeUrl):
            check_url(url)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("0177.0.0.01", "127.0.0.1"),
        ("10.1.2", "10.1.0.2"),
        ("0", "0.0.0.0"),
        ("256.1.1.1", None),
        ("1.2.3.4.5", None),
        ("08.1.1.1", None),
        ("example.com", None),
        ("4294967296", None),
    ],
)
def test_numeric_ipv4_spellings_are_read_like_inet_aton(text: str, expected: str | None) -> None:
    parsed = parse_numeric_ipv4(text)
    assert parsed == (ipaddress.IPv4Address(expected) if expected else None)


def test_normalized_form_ignores_scheme_host_case_and_default_port(public_dns: Any) -> None:
    assert normalize_url("HTTPS://Example.COM:443/Path?q=1") == "https://example.com/Path?q=1"
    assert normalize_url("http://example.com:80") == "http://example.com/"
    assert normalize_url("http://example.com.:8080/a") == "http://example.com:8080/a"
    assert normalize_url("https://[2606:2800:220:1::1]:443/") == "https://[2606:2800:220:1::1]/"
    assert normalize_url("https://Bücher.example/é?q=ü") == "https://xn--bcher-kva.example/%C3%A9?q=%C3%BC"
    assert normalize_url("https://xn--bcher-kva.example/%C3%A9?q=%C3%BC") == normalize_url(
        "https://bücher.example/é?q=ü"
    )


def test_a_non_ascii_path_and_query_are_sent_percent_encoded(public_dns: Any) -> None:
    public_dns({"hooks.example.com": ["93.184.216.34"]})
    target = resolve_target("https://hooks.example.com/é/😀?q=ü&r=%41")
    assert target.path == "/%C3%A9/%F0%9F%98%80?q=%C3%BC&r=%41"
    assert resolve_target("https://hooks.example.com/plain?x=1").path == "/plain?x=1"


def test_lone_surrogates_are_refused_not_crashed_on(public_dns: Any) -> None:
    public_dns({"hooks.example.com": ["93.184.216.34"]})
    with pytest.raises(UnsafeUrl, match="not valid Unicode"):
        check_url("https://hooks.example.com/\ud800")


# One address from every blocked IPv4 range, each written in every spelling a resolver or
# inet_aton accepts and every IPv6 form that carries an IPv4 address.
BLOCKED_IPV4 = [
    "0.1.2.3",  # "this network"
    "10.20.30.40",  # private
    "100.64.7.8",  # carrier-grade NAT
    "127.8.9.10",  # loopback
    "169.254.169.254",  # link-local, cloud metadata
    "172.20.1.2",  # private
    "192.0.0.170",  # IETF protocol assignments
    "192.0.2.33",  # documentation
    "192.88.99.12",  # 6to4 relay anycast
    "192.168.44.55",  # private
    "198.19.1.1",  # benchmarking
    "198.51.100.66",  # documentation
    "203.0.113.77",  # documentation
    "224.0.0.251",  # multicast
    "239.1.2.3",  # multicast
    "240.0.0.9",  # reserved
    "255.255.255.255",  # broadcast
]


def _spellings(address: str) -> list[str]:
    a, b, c, d = (int(part) for part in address.split("."))
    number = int(ipaddress.IPv4Address(address))
    high, low = number >> 16, number & 0xFFFF
    return [
        address,
        str(number),
        hex(number),
        "0" + oct(number)[2:],
        f"{hex(a)}.{hex(b)}.{hex(c)}.{hex(d)}",
        f"0{a:o}.0{b:o}.0{c:o}.0{d:o}",
        f"{a}.{(b << 16) | (c << 8) | d}",
        f"{a}.{b}.{(c << 8) | d}",
        f"{address}.",
        f"[::ffff:{address}]",
        f"[::ffff:{high:x}:{low:x}]",
        f"[0:0:0:0:0:ffff:{high:x}:{low:x}]",
        f"[::ffff:0:{address}]",
        f"[::{address}]",
        f"[2002:{high:x}:{low:x}::1]",
        f"[64:ff9b::{address}]",
        f"[64:ff9b::{high:x}:{low:x}]",
        f"[64:ff9b:1::{high:x}:{low:x}]",
    ]


BLOCKED_IPV6 = ["::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "2001:db8::1", "100::1", "fec0::1"]


@pytest.mark.parametrize(
    ("address", "host"),
    [(address, host) for address in BLOCKED_IPV4 for host in _spellings(address)]
    + [(address, f"[{address}]") for address in BLOCKED_IPV6],
)
def test_every_blocked_range_in_every_spelling_is_refused_without_a_socket(
    address: str, host: str, no_sockets: list[Any], public_dns: Any
) -> None:
    url = f"http://{host}:8080/hook"
    with pytest.raises(UnsafeUrl, match="public endpoint") as refused:
        check_url(url)
    assert str(refused.value) != ""
    # The spelling was read as the intended address (not refused for some other reason); IPv6
    # forms of an IPv4 address are refused either for it or for their own block.
    if not host.startswith("["):
        assert f"{address} is " in str(refused.value)
    result = post(url=url, body=b"{}", headers={}, timeout=1)
    assert (result.status_code, result.error) == (None, f"refused: {refused.value}")
    assert no_sockets == []


def test_the_same_spellings_of_a_public_address_are_accepted(public_dns: Any) -> None:
    """The control for the table above: every IPv4 spelling is read, and a public address passes."""
    for host in _spellings("93.184.216.34")[:9]:
        assert check_url(f"http://{host}:8080/hook") == f"http://{host.rstrip('.')}:8080/hook"
        assert resolve_target(f"http://{host}/").addresses == ("93.184.216.34",)


@pytest.fixture
def slow_dns(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A name whose DNS answers (publicly) only after ``seconds``, as its owner's server may."""
    import threading

    released = threading.Event()
    real = socket.getaddrinfo

    def configure(seconds: float) -> None:
        def slow(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            if host == "slow.example.com":
                released.wait(seconds)
                return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port))]
            return real(host, port, *args, **kwargs)

        monkeypatch.setattr(socket, "getaddrinfo", slow)

    yield configure
    released.set()


def test_a_lookup_slower_than_the_deadline_is_refused(slow_dns: Any, settings: Any, no_sockets: list[Any]) -> None:
    settings.WEBHOOK_TIMEOUT_SECONDS = 1.0
    slow_dns(60)
    with pytest.raises(UnsafeUrl, match="url host slow.example.com did not resolve within 1 s"):
        check_url("https://slow.example.com/hook")
    result = post(url="https://slow.example.com/hook", body=b"{}", headers={}, timeout=1)
    assert (result.status_code, result.error) == (None, "refused: url host slow.example.com did not resolve within 1 s")
    assert no_sockets == []


def test_a_lookup_within_the_deadline_is_used(slow_dns: Any, settings: Any) -> None:
    settings.WEBHOOK_TIMEOUT_SECONDS = 5.0
    slow_dns(0.2)
    assert resolve_target("https://slow.example.com/hook").addresses == ("93.184.216.34",)


def test_an_unexpected_error_in_the_lookup_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("resolver bug")

    monkeypatch.setattr(socket, "getaddrinfo", broken)
    with pytest.raises(RuntimeError, match="resolver bug"):
        check_url("https://hooks.example.com/")
