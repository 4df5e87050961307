"""The SSRF guard: which addresses a webhook may reach, and a URL vetted to the very address to connect to."""

from __future__ import annotations

import ipaddress

import pytest

from ask_mcp.reach.targets import Target, TargetRefused, allowed, kind_of, vet


@pytest.mark.parametrize(
    "address, kind",
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.0.9", "private"),
        ("169.254.169.254", "a cloud metadata service"),
        ("169.254.1.1", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"),  # an IPv4-mapped address is judged as its IPv4
        ("100.64.0.1", "not globally routable"),
        ("93.184.215.14", None),
    ],
)
def test_each_address_is_named_for_what_makes_it_internal(address: str, kind: str | None) -> None:
    assert kind_of(ipaddress.ip_address(address)) == kind


def test_allowing_private_targets_never_lets_in_metadata_or_link_local() -> None:
    for address in ("127.0.0.1", "10.0.0.1", "100.64.0.1"):
        assert allowed(ipaddress.ip_address(address), allow_private=True) is None
        assert allowed(ipaddress.ip_address(address), allow_private=False) is not None
    for address in ("169.254.169.254", "169.254.1.1", "0.0.0.0", "224.0.0.1"):
        assert allowed(ipaddress.ip_address(address), allow_private=True) is not None


def test_a_url_is_vetted_to_the_address_to_connect_to() -> None:
    assert vet("http://127.0.0.1:9000/hook?x=1", allow_private=True) == Target(
        "http", "127.0.0.1", 9000, "/hook?x=1", "127.0.0.1"
    )
    assert vet("https://[::1]", allow_private=True).port == 443


@pytest.mark.parametrize(
    "url, words",
    [
        ("ftp://127.0.0.1/x", "is not an http(s) URL"),
        ("http:///nohost", "is not an http(s) URL"),
        ("http://127.0.0.1:99999/", "has a bad port"),
        ("http://127.0.0.1/", "resolves to 127.0.0.1, loopback"),
        ("http://169.254.169.254/latest", "a cloud metadata service"),
    ],
)
def test_a_url_that_may_not_be_posted_to_is_refused_naming_it(url: str, words: str) -> None:
    with pytest.raises(TargetRefused) as refused:
        vet(url, allow_private=False)
    assert words in str(refused.value)
