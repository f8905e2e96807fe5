"""Which receiver addresses may be posted to: no private, loopback, link-local, multicast or
otherwise non-global address unless the operator allows it (SSRF, ADR 0086).

A host name is resolved here, every address it resolves to is checked, and the sender
connects to the checked address itself (never resolving again), so a name that resolves
to a public address at save time and to 127.0.0.1 at send time (DNS rebinding) is refused
at send time.

The lookup is bounded by ``CONNECT_TIMEOUT_SECONDS``: a receiver's owner controls its
name's DNS, and a resolver's retries over servers that do not answer add up to tens of
seconds, which would hold a try past its lease (the sweep would send it again beside it)
and a steward's save of the form as long. It runs on a small pool of its own; a lookup
still waiting there when the pool is full fails at its limit like a slow one, saying that
it never started (the name is not to blame: others hold every thread), and the pool takes
lookups again as soon as a thread is free (tests/notify/test_lookup_pool.py).
"""

import ipaddress
import os
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as LookupTimeout
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# Lookups in flight at once; one stuck on a hostile name holds its thread until the
# resolver gives up, never the caller.
LOOKUP_THREADS = 8
_lookups: tuple[int, ThreadPoolExecutor] | None = None
_lookups_made = threading.Lock()


def _lookup_pool() -> ThreadPoolExecutor:
    """This process's pool: one made before a fork would hand the child threads that do
    not exist there (its lookups would wait forever on a queue nobody reads)."""
    global _lookups
    with _lookups_made:
        if _lookups is None or _lookups[0] != os.getpid():
            pool = ThreadPoolExecutor(LOOKUP_THREADS, thread_name_prefix="webhook-dns")
            _lookups = (os.getpid(), pool)
        return _lookups[1]


class RefusedAddress(ValueError):
    """The URL cannot be posted to; the message says why (shown to the steward)."""


@dataclass(frozen=True)
class Target:
    url: SplitResult
    host: str  # as written in the URL (the Host header and TLS server name)
    port: int
    address: str  # the checked IP address the sender connects to


def _allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [
        ipaddress.ip_network(cidr, strict=False) for cidr in settings.WEBHOOKS["ALLOWED_NETWORKS"]
    ]


def refusal(ip: IPAddress) -> str | None:
    """Why ``ip`` may not be posted to, or None when it may."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    if settings.WEBHOOKS["ALLOW_PRIVATE"]:
        return None
    if any(ip in network for network in _allowed_networks()):
        return None
    if ip.is_multicast:
        return f"{ip} is a multicast address"
    if ip.is_loopback:
        return f"{ip} is a loopback address"
    if ip.is_link_local:
        return f"{ip} is a link-local address"
    if ip.is_private:
        return f"{ip} is a private address"
    if not ip.is_global:  # reserved, unspecified, shared (100.64/10), documentation...
        return f"{ip} is not a global address"
    return None


def split(url: str) -> tuple[SplitResult, str, int]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise RefusedAddress("the URL must start with http:// or https://")
    if not parts.hostname:
        raise RefusedAddress("the URL has no host")
    if parts.username or parts.password:
        raise RefusedAddress("the URL must not carry a user name or password")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as error:
        raise RefusedAddress(f"the URL's port is not valid: {error}") from error
    return parts, parts.hostname, port


def resolve(url: str) -> Target:
    """The address to post ``url`` to, checked; RefusedAddress when there is none."""
    parts, host, port = split(url)
    limit = settings.WEBHOOKS["CONNECT_TIMEOUT_SECONDS"]
    lookup = _lookup_pool().submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        infos = lookup.result(timeout=limit)
    except LookupTimeout as error:
        if lookup.cancel():  # it never started: every thread was held by other names
            raise RefusedAddress(
                f"{host} was not looked up within {limit:g} s: all {LOOKUP_THREADS} "
                "lookups were busy with names that do not answer"
            ) from error
        raise RefusedAddress(f"{host} does not resolve within {limit:g} s") from error
    except (OSError, UnicodeError) as error:
        raise RefusedAddress(f"{host} does not resolve: {error}") from error
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise RefusedAddress(f"{host} does not resolve")
    for address in addresses:
        # Every address must pass: the name must not be able to pick the refused one later.
        reason = refusal(ipaddress.ip_address(address.split("%", 1)[0]))
        if reason is not None:
            raise RefusedAddress(
                f"{host} resolves to {reason}; set LINEAGE_WEBHOOK_ALLOW_PRIVATE or "
                "LINEAGE_WEBHOOK_ALLOWED_NETWORKS to allow it"
            )
    return Target(parts, host, port, addresses[0])
