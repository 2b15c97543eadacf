"""The notifier's destination guard: which addresses a delivery may connect to, and that the connector the
runtime uses checks the addresses it actually connects to — whatever the URL's spelling, and after resolving
a hostname itself. Hostnames resolve through a stub resolver here, so no test asks real DNS."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator
from ipaddress import ip_network

import aiohttp
import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from videogen_common.destinations.addresses import AddressPolicy, parse_address
from videogen_common.destinations.guarded_http import DestinationNotAllowed, GuardedConnector, guarded_session
from videogen_common.settings import SettingsError, load_settings
from videogen_notifier.runtime import USER_AGENT
from videogen_notifier.settings import NotifierSettings

REFUSED = [
    ("0.0.0.0", "this network"),
    ("0.1.2.3", "this network"),
    ("10.0.0.1", "private"),
    ("10.255.255.255", "private"),
    ("100.64.0.1", "carrier-grade NAT"),
    ("100.127.255.254", "carrier-grade NAT"),
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("169.254.169.254", "link-local"),
    ("169.254.0.1", "link-local"),
    ("172.16.0.1", "private"),
    ("172.31.255.255", "private"),
    ("192.0.0.8", "IETF"),
    ("192.0.2.1", "documentation"),
    ("192.88.99.1", "6to4 relay"),
    ("192.168.1.1", "private"),
    ("198.18.0.1", "benchmarking"),
    ("198.19.255.255", "benchmarking"),
    ("198.51.100.7", "documentation"),
    ("203.0.113.9", "documentation"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "broadcast"),
    ("::", "unspecified"),
    ("::1", "loopback"),
    ("fc00::1", "unique local"),
    ("fd00:ec2::254", "unique local"),  # the AWS metadata service over IPv6
    ("fe80::1", "link-local"),
    ("fe80::1%eth0", "link-local"),
    ("febf:ffff::1", "link-local"),
    ("fec0::1", "site-local"),
    ("ff02::1", "multicast"),
    ("2001:db8::1", "documentation"),
    ("3fff::1", "documentation"),
    ("2001::1", "IETF"),  # Teredo
    ("2001:2::1", "IETF"),  # benchmarking
    ("100::1", "discard"),
    ("64:ff9b:1::1", "NAT64"),
    ("4000::1", "not global unicast"),
    ("::ffff:127.0.0.1", "loopback, embedded"),
    ("::ffff:7f00:1", "loopback, embedded"),
    ("::ffff:169.254.169.254", "link-local (cloud metadata), embedded"),
    ("::ffff:10.1.2.3", "private, embedded"),
    ("::127.0.0.1", "loopback, embedded"),  # IPv4-compatible
    ("::10.0.0.1", "private, embedded"),
    ("64:ff9b::10.0.0.1", "private, embedded"),  # NAT64
    ("64:ff9b::7f00:1", "loopback, embedded"),
    ("2002:7f00:1::1", "loopback, embedded"),  # 6to4
    ("2002:a9fe:a9fe::", "link-local (cloud metadata), embedded"),
    ("2002:c0a8:101::1", "private, embedded"),
    # Legacy IPv4 spellings getaddrinfo accepts: decimal, hex, octal, short forms.
    ("2130706433", "loopback"),
    ("0x7f000001", "loopback"),
    ("0x7f.1", "loopback"),
    ("017700000001", "loopback"),
    ("0177.0.0.1", "loopback"),
    ("127.1", "loopback"),
    ("0xa9.0xfe.0xa9.0xfe", "link-local"),
    ("167772161", "private"),
]

PERMITTED = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "100.63.255.255",  # just below CGNAT
    "100.128.0.0",  # just above it
    "172.15.255.255",
    "172.32.0.0",
    "192.169.0.1",
    "223.255.255.255",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::8.8.8.8",
    "2002:808:808::1",
    "0x08080808",
]


@pytest.mark.parametrize(("host", "why"), REFUSED, ids=[h for h, _ in REFUSED])
def test_the_default_policy_refuses_special_purpose_addresses(host: str, why: str) -> None:
    address = parse_address(host)
    assert address is not None
    reason = AddressPolicy().refusal(address)
    assert reason is not None and why in reason
    assert not AddressPolicy().permits(host)


@pytest.mark.parametrize("host", PERMITTED)
def test_the_default_policy_permits_public_unicast_addresses(host: str) -> None:
    address = parse_address(host)
    assert address is not None
    assert AddressPolicy().refusal(address) is None
    assert AddressPolicy().permits(host)


@pytest.mark.parametrize("host", ["example.com", "localhost", "", "1.2.3.4.5", "0x7g.1", "::ffff::1::"])
def test_what_is_not_an_address_is_never_permitted(host: str) -> None:
    assert parse_address(host) is None
    assert not AddressPolicy().permits(host)


def test_an_allow_list_opens_exactly_its_ranges() -> None:
    policy = AddressPolicy([ip_network("127.0.0.0/8"), ip_network("fd00:1::/64")])
    for host in ("127.0.0.1", "127.9.9.9", "::ffff:127.0.0.1", "0x7f.1", "fd00:1::5", "8.8.8.8"):
        assert policy.permits(host), host
    for host in ("::1", "10.0.0.1", "169.254.169.254", "fd00:2::5", "::ffff:10.0.0.1"):
        assert not policy.permits(host), host


# --- the allow-list setting ---------------------------------------------------------------------------------

VAR = "VIDEOGEN_WEBHOOK_ALLOW_CIDRS"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("VIDEOGEN_"):
            monkeypatch.delenv(name)


@pytest.mark.usefixtures("clean_env")
def test_the_allow_list_is_empty_by_default() -> None:
    settings = load_settings(NotifierSettings)
    assert settings.webhook_allow_cidrs == ""
    assert settings.webhook_networks == []


@pytest.mark.usefixtures("clean_env")
@pytest.mark.parametrize(
    ("raw", "networks"),
    [
        ("127.0.0.0/8,::1/128", ["127.0.0.0/8", "::1/128"]),
        (" 10.0.0.0/8 , ", ["10.0.0.0/8"]),
        ("192.168.1.7", ["192.168.1.7/32"]),
    ],
)
def test_the_allow_list_is_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, raw: str, networks: list[str]
) -> None:
    monkeypatch.setenv(VAR, raw)
    assert [str(n) for n in load_settings(NotifierSettings).webhook_networks] == networks


@pytest.mark.usefixtures("clean_env")
@pytest.mark.parametrize("raw", ["127.0.0.1/8", "localhost", "10.0.0.0/33", "127.0.0.0/8;::1/128"])
def test_a_bad_allow_list_is_rejected_naming_the_variable(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv(VAR, raw)
    with pytest.raises(SettingsError, match=VAR):
        load_settings(NotifierSettings)


# --- the connector ------------------------------------------------------------------------------------------


class StubResolver(AbstractResolver):
    """Answers from a table; a name not in it fails as NXDOMAIN would. Records every lookup."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.lookups: list[str] = []

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[ResolveResult]:
        self.lookups.append(host)
        if host not in self.table:
            raise OSError(f"stub resolver: no such name {host}")
        return [
            {
                "hostname": host,
                "host": address,
                "port": port,
                "family": socket.AF_INET6 if ":" in address else socket.AF_INET,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
            for address in self.table[host]
        ]

    async def close(self) -> None:
        pass


DNS = {
    "internal.example": ["10.0.0.5"],
    "metadata.example": ["169.254.169.254"],
    "loopback.example": ["127.0.0.1"],
    "mapped.example": ["::ffff:127.0.0.1"],
    "private-pair.example": ["fd00::1", "192.168.1.1"],
}


async def post_through_guard(url: str, resolver: StubResolver, policy: AddressPolicy | None = None) -> int:
    connector = GuardedConnector(policy or AddressPolicy(), resolver=resolver)
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        session.post(url, data=b"{}", timeout=aiohttp.ClientTimeout(total=5)) as response,
    ):
        return response.status


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://127.0.0.1:9/hook", "127.0.0.1"),
        ("http://2130706433/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://017700000001/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://0/", "0.0.0.0"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:7f00:1"),
        ("http://[::ffff:7f00:1]/", "::ffff:7f00:1"),
        ("http://[::1]:8080/", "::1"),
        ("http://[::]/", "::"),
        ("http://[fe80::1%25eth0]/", "fe80::1%25eth0"),
        ("http://[64:ff9b::a00:1]/", "64:ff9b::a00:1"),
        ("http://[2002:7f00:1::]/", "2002:7f00:1::"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
        ("https://10.1.2.3/", "10.1.2.3"),
        ("http://internal.example/hook", "10.0.0.5"),
        ("http://metadata.example/latest/meta-data/", "169.254.169.254"),
        ("http://loopback.example:8080/", "127.0.0.1"),
        ("http://mapped.example/", "::ffff:127.0.0.1"),
        ("http://private-pair.example/", "fd00::1"),
    ],
)
async def test_the_guarded_connector_refuses_before_connecting(url: str, address: str) -> None:
    resolver = StubResolver(DNS)
    with pytest.raises(DestinationNotAllowed) as info:
        await post_through_guard(url, resolver)
    assert str(info.value) == f"destination address not allowed: {address}"
    assert info.value.address == address
    host = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[0]
    assert resolver.lookups == ([host] if host in DNS else [])  # literals never reach the resolver


@pytest.fixture
async def local_server() -> AsyncIterator[int]:
    async def ok(_: web.Request) -> web.Response:
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", ok)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield int(runner.addresses[0][1])
    finally:
        await runner.cleanup()


async def test_an_allow_listed_address_is_connected_to(local_server: int) -> None:
    resolver = StubResolver({"receiver.test": ["127.0.0.1"]})
    policy = AddressPolicy([ip_network("127.0.0.0/8")])
    assert await post_through_guard(f"http://127.0.0.1:{local_server}/hook", resolver, policy) == 204
    assert await post_through_guard(f"http://receiver.test:{local_server}/hook", resolver, policy) == 204


async def test_a_name_resolving_to_refused_and_permitted_addresses_connects_only_to_the_permitted(
    local_server: int,
) -> None:
    # If the refused address were tried first, the connection would go to 10.0.0.1 and time out.
    resolver = StubResolver({"split.example": ["10.0.0.1", "127.0.0.1", "169.254.169.254"]})
    policy = AddressPolicy([ip_network("127.0.0.0/8")])
    assert await post_through_guard(f"http://split.example:{local_server}/hook", resolver, policy) == 204


async def test_the_socket_factory_refuses_an_address_that_reaches_it_unchecked() -> None:
    connector = GuardedConnector(AddressPolicy([ip_network("127.0.0.0/8")]))
    try:
        with pytest.raises(DestinationNotAllowed, match=r"not allowed: 169\.254\.169\.254$"):
            connector.socket_for((socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", 80)))
        with pytest.raises(DestinationNotAllowed, match=r"not allowed: ::1$"):
            connector.socket_for((socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::1", 80, 0, 0)))
        sock = connector.socket_for((socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 80)))
        assert sock.family == socket.AF_INET
        sock.close()
    finally:
        await connector.close()


@pytest.mark.usefixtures("clean_env")
async def test_guarded_session_builds_the_guard_from_the_settings() -> None:
    strict = guarded_session(load_settings(NotifierSettings).webhook_networks, USER_AGENT)
    opened = guarded_session(
        load_settings(NotifierSettings, webhook_allow_cidrs="127.0.0.0/8").webhook_networks, USER_AGENT
    )
    try:
        assert isinstance(strict.connector, GuardedConnector)
        assert isinstance(opened.connector, GuardedConnector)
        assert not strict.trust_env
        loopback = (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 80))
        with pytest.raises(DestinationNotAllowed):
            strict.connector.socket_for(loopback)
        opened.connector.socket_for(loopback).close()
    finally:
        await strict.close()
        await opened.close()
