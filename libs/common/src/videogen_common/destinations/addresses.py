"""Which IP addresses a request to a customer-given URL may connect to. Webhook URLs and image URLs come from
customers, so without this a customer could make our services call our own network: the cloud metadata
service, a database's admin port, a loopback-only sidecar. Anything that is not plainly a public unicast
address is refused unless an operator opens its range (``VIDEOGEN_WEBHOOK_ALLOW_CIDRS``,
``VIDEOGEN_IMAGE_FETCH_ALLOW_CIDRS``)."""

from __future__ import annotations

import socket
from collections.abc import Iterable
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network
from urllib.parse import urlsplit

IPAddress = IPv4Address | IPv6Address
Network = IPv4Network | IPv6Network

# IANA's special-purpose registries, minus the few ranges in them that are globally reachable and harmless.
REFUSED_IPV4: tuple[tuple[IPv4Network, str], ...] = tuple(
    (IPv4Network(cidr), why)
    for cidr, why in (
        ("0.0.0.0/8", "this network / unspecified"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "carrier-grade NAT"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local (cloud metadata)"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation"),
        ("192.88.99.0/24", "6to4 relay anycast"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved / broadcast"),
    )
)

REFUSED_IPV6: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(cidr), why)
    for cidr, why in (
        ("64:ff9b:1::/48", "local-use NAT64"),
        ("100::/64", "discard-only"),
        ("2001::/23", "IETF protocol assignments (Teredo, benchmarking, ORCHID)"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
        ("5f00::/16", "segment routing"),
        ("fc00::/7", "unique local"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    )
)

# Checked before the embedded-IPv4 forms below, whose ::/96 they sit in.
LOOPBACKS: tuple[IPAddress, ...] = (IPv4Address("127.0.0.1"), IPv6Address("::1"))
EXACT_IPV6 = {IPv6Address("::"): "unspecified", IPv6Address("::1"): "loopback"}
GLOBAL_UNICAST_V6 = IPv6Network("2000::/3")
# Prefixes whose last 32 bits are an IPv4 address the packet ends up at; that address decides.
IPV4_COMPATIBLE = IPv6Network("::/96")
NAT64 = IPv6Network("64:ff9b::/96")


def parse_address(host: str) -> IPAddress | None:
    """``host`` as an IP address if it is one in any form the system resolver would take as a literal:
    besides the canonical forms, the legacy IPv4 spellings ``2130706433``, ``0x7f.1``, ``017700000001`` and
    ``127.1``, which getaddrinfo maps to 127.0.0.1 without asking DNS. None for a hostname."""
    try:
        return ip_address(host)
    except ValueError:
        pass
    try:
        return IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError, UnicodeError):
        return None


def embedded_ipv4(address: IPv6Address) -> IPv4Address | None:
    """The IPv4 address an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 address really reaches."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in IPV4_COMPATIBLE or address in NAT64:
        return IPv4Address(int(address) & 0xFFFF_FFFF)
    return None


class AddressPolicy:
    """Refuses every special-purpose address unless it falls in one of the ``allow`` networks."""

    def __init__(self, allow: Iterable[Network] = ()) -> None:
        self.allow = tuple(allow)

    def refusal(self, address: IPAddress) -> str | None:
        """Why a connection to ``address`` is refused, or None if it is allowed."""
        if any(address.version == net.version and address in net for net in self.allow):
            return None
        if isinstance(address, IPv4Address):
            return next((why for net, why in REFUSED_IPV4 if address in net), None)
        if address.scope_id is not None:  # fe80::1%eth0: the zone does not change what the address is
            address = IPv6Address(int(address))
        if address in EXACT_IPV6:
            return EXACT_IPV6[address]
        inner = embedded_ipv4(address)
        if inner is not None:
            why = self.refusal(inner)
            return None if why is None else f"{why}, embedded in IPv6"
        why = next((why for net, why in REFUSED_IPV6 if address in net), None)
        if why is None and address not in GLOBAL_UNICAST_V6:
            why = "not global unicast"
        return why

    def permits(self, host: str) -> bool:
        """``host`` is an address string as a resolver returns it; anything unparseable is refused."""
        address = parse_address(host)
        return address is not None and self.refusal(address) is None


def parse_cidrs(value: str) -> list[Network]:
    """A comma-separated list of networks in CIDR form (a setting's value)."""
    networks: list[Network] = []
    for part in (p.strip() for p in value.split(",")):
        if not part:
            continue
        try:
            # strict: "10.1.2.3/8" is more likely a typo than a wish to open all of 10/8
            networks.append(ip_network(part, strict=True))
        except ValueError as exc:
            raise ValueError(f"{part!r} is not a network in CIDR form, e.g. '127.0.0.0/8' ({exc})") from None
    return networks


def refused_host(url: str, policy: AddressPolicy) -> str | None:
    """Why a request to ``url`` is refused on its face, without DNS: its host is an address the policy
    refuses, or a name that means this machine (``localhost``) while the policy opens no loopback address.
    None otherwise (a name is checked again after it is resolved, by the guarded connector)."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return None if any(policy.refusal(a) is None for a in LOOPBACKS) else "loopback"
    address = parse_address(host)
    return policy.refusal(address) if address is not None else None
