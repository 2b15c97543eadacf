"""What a customer-given URL's host says on its face (``refused_host``): the api refuses webhook URLs and
image URLs whose host is an address the delivery or fetch guard would refuse, in any spelling, and
localhost; the ranges a deployment opens to deliveries are accepted, localhost with loopback."""

from __future__ import annotations

from ipaddress import ip_network

import pytest

from videogen_common.destinations.addresses import AddressPolicy, refused_host

STRICT = AddressPolicy()
LOOPBACK_OPEN = AddressPolicy([ip_network("127.0.0.0/8")])


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://169.254.169.254/latest/meta-data", "link-local (cloud metadata)"),
        ("https://0251.0376.0251.0376/", "link-local (cloud metadata)"),
        ("https://2852039166/", "link-local (cloud metadata)"),
        ("https://[::ffff:a9fe:a9fe]/", "link-local (cloud metadata), embedded in IPv6"),
        ("https://10.0.0.1/", "private"),
        ("https://127.1/", "loopback"),
        ("https://[::1]:8443/", "loopback"),
        ("https://[fe80::1]/", "link-local"),
        ("https://localhost/", "loopback"),
        ("https://api.LOCALHOST./", "loopback"),
    ],
)
def test_refused_on_its_face(url: str, why: str) -> None:
    assert refused_host(url, STRICT) == why


@pytest.mark.parametrize(
    "url", ["https://example.com/h", "https://93.184.216.34/h", "https://[2606:4700::1]/"]
)
def test_public_hosts_and_names_pass_until_dns_says_otherwise(url: str) -> None:
    assert refused_host(url, STRICT) is None


def test_an_opened_range_is_accepted_and_localhost_with_loopback() -> None:
    assert refused_host("http://127.0.0.1:9000/hook", LOOPBACK_OPEN) is None
    assert refused_host("http://localhost:9000/hook", LOOPBACK_OPEN) is None
    assert refused_host("http://169.254.169.254/", LOOPBACK_OPEN) == "link-local (cloud metadata)"
    assert refused_host("http://[::1]/", LOOPBACK_OPEN) == "loopback"
