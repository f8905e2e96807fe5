"""Which receiver addresses may be posted to: no private, loopback, link-local, multicast,
reserved or otherwise non-global address unless the operator allows it (SSRF, ADR 0086), and
no IPv6 address that carries a refused IPv4 address (NAT64, 6to4, Teredo, IPv4-compatible
and -translated forms: a translator or relay takes the packet there; ADR 0178).

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


NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052, the well-known prefix
NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215, a private translator's
TEREDO = ipaddress.ip_network("2001::/32")
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated (RFC 4291)
IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")  # SIIT (RFC 2765)
_OWN_BLOCK = ipaddress.ip_network("::/112")  # :: and ::1 (unspecified, loopback) are their own
# IPv6 networks that stand for IPv4 addresses (and the deprecated site-local one), refused
# whatever this Python's ``ipaddress`` says of them: its tables differ between versions, and
# 3.11 counts 64:ff9b::/96 as global, so 64:ff9b::a9fe:a9fe, which a NAT64 translator
# carries to 169.254.169.254, passed. An operator whose receivers are reached through a
# translator allows its prefix with ALLOWED_NETWORKS; the IPv4 address inside is checked
# all the same (``_embedded``).
_NOT_GLOBAL = (
    (NAT64, "a NAT64 address (64:ff9b::/96)"),
    (NAT64_LOCAL, "a local-use NAT64 address (64:ff9b:1::/48)"),
    (TEREDO, "a Teredo address (2001::/32)"),
    (IPV4_COMPATIBLE, "an IPv4-compatible address (::/96)"),
    (IPV4_TRANSLATED, "an IPv4-translated address (::ffff:0:0:0/96)"),
    (ipaddress.ip_network("fec0::/10"), "a site-local address (fec0::/10)"),
)
# The forms whose last 32 bits are the IPv4 address.
_LAST_32_BITS = (
    (NAT64, "NAT64"),
    (NAT64_LOCAL, "local-use NAT64"),
    (IPV4_COMPATIBLE, "IPv4-compatible"),
    (IPV4_TRANSLATED, "IPv4-translated"),
)


def _embedded(ip: IPAddress) -> list[tuple[str, ipaddress.IPv4Address]]:
    """The IPv4 addresses an IPv6 address carries, each with its form's name: the last 32
    bits of NAT64 (64:ff9b::/96), IPv4-compatible and IPv4-translated addresses; the
    local-use NAT64 prefix in both layouts a translator may use (a /96 inside it, or the /48
    itself: bits 48-63 and 72-87, RFC 6052); 6to4's bits 16-47; Teredo's server and
    (obscured) client. A packet sent to such an address is carried to that IPv4 address by a
    translator or a relay: it is what the URL reaches."""
    if not isinstance(ip, ipaddress.IPv6Address) or ip in _OWN_BLOCK:
        return []
    packed = ip.packed
    found = [
        (form, ipaddress.IPv4Address(packed[12:]))
        for network, form in _LAST_32_BITS
        if ip in network
    ]
    if ip in NAT64_LOCAL:
        found.append(("local-use NAT64", ipaddress.IPv4Address(packed[6:8] + packed[9:11])))
    if ip.sixtofour is not None:
        found.append(("6to4", ip.sixtofour))
    if ip.teredo is not None:
        server, client = ip.teredo
        found += [("Teredo server", server), ("Teredo client", client)]
    return found


def refusal(ip: IPAddress) -> str | None:
    """Why ``ip`` may not be posted to, or None when it may."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    if settings.WEBHOOKS["ALLOW_PRIVATE"]:
        return None
    why = _why(ip, _allowed_networks())
    return None if why is None else f"{ip} is {why}"


def _why(ip: IPAddress, allowed: list[ipaddress.IPv4Network | ipaddress.IPv6Network]) -> str | None:
    # An IPv4 address inside an IPv6 one is checked first, and an allowed IPv6 network does
    # not excuse it: allowing a NAT64 prefix allows the translator, not everything behind it.
    for form, inner in _embedded(ip):
        why = _why(inner, allowed)
        if why is not None:
            return f"the {form} form of {inner}, {why}"
    if any(ip in network for network in allowed):
        return None
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_private:
        return "a private address"
    for network, what in _NOT_GLOBAL:
        if ip in network:
            return what
    # Reserved too: 3.11's is_global is true of much of ::/8 (IPv4-compatible, NAT64), which
    # is reserved; unspecified, shared (100.64/10), documentation... are not global.
    if not ip.is_global or ip.is_reserved:
        return "not a global address"
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
