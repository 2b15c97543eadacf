"""The HTTP client requests to customer-given URLs go out through, with the destination guard in its
connector.

The guard checks the addresses a connection is actually made to, not the URL's text: the connector resolves
the hostname itself and drops every address the policy refuses, after each DNS lookup or cache hit, so a
name that resolves (or later rebinds) to a private address, and the odd spellings of IP literals, are caught
the same way. A socket factory checks each address once more just before connecting, so a future aiohttp
that reached the socket by some other path still could not connect anywhere refused."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any

import aiohttp
from aiohappyeyeballs import AddrInfoType
from aiohttp.abc import ResolveResult
from aiohttp.tracing import Trace

from videogen_common.destinations.addresses import AddressPolicy, Network, parse_address


class DestinationNotAllowed(aiohttp.ClientConnectionError):
    """The URL's address is one we may not connect to. Not an OSError on purpose: aiohttp passes it through
    unwrapped, so a caller can tell it from a network failure."""

    def __init__(self, address: str) -> None:
        super().__init__(f"destination address not allowed: {address}")
        self.address = address


class GuardedConnector(aiohttp.TCPConnector):
    def __init__(self, policy: AddressPolicy, **kwargs: Any) -> None:
        self._policy = policy
        super().__init__(socket_factory=self.socket_for, **kwargs)

    async def _resolve_host(
        self, host: str, port: int, traces: Sequence[Trace] | None = None
    ) -> list[ResolveResult]:
        # aiohttp refuses legacy IPv4 spellings (2130706433, 0x7f.1) only as "not canonical", or hands some
        # to getaddrinfo; naming the address they mean makes the refusal say what it is.
        literal = parse_address(host)
        if literal is not None and self._policy.refusal(literal) is not None:
            raise DestinationNotAllowed(str(literal))
        resolved = await super()._resolve_host(host, port, traces=traces)
        allowed = [result for result in resolved if self._policy.permits(result["host"])]
        if not allowed:
            raise DestinationNotAllowed(resolved[0]["host"] if resolved else host)
        return allowed

    def socket_for(self, addr_info: AddrInfoType) -> socket.socket:
        family, kind, proto, _, sockaddr = addr_info
        if not self._policy.permits(str(sockaddr[0])):
            raise DestinationNotAllowed(str(sockaddr[0]))
        return socket.socket(family, kind, proto)


def guarded_session(allow: Sequence[Network], user_agent: str) -> aiohttp.ClientSession:
    """A session that connects only where the policy allows (``allow``: networks an operator opened)."""
    return aiohttp.ClientSession(
        headers={"User-Agent": user_agent},
        # No pool-wide or per-host cap: callers cap concurrency themselves (the notifier per endpoint), and a
        # per-host cap would let one dead endpoint block others on the same host.
        connector=GuardedConnector(AddressPolicy(allow), limit=0, limit_per_host=0),
        # Never through an environment-configured proxy: the guard would then vet the proxy's address, and
        # the proxy would connect wherever the URL says.
        trust_env=False,
    )
