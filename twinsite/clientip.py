"""The client's IP address, for rate limits and (hashed) incident records.

``REMOTE_ADDR`` (or the ASGI scope's client) unless the peer is a trusted proxy: an address in
``TWIN_TRUSTED_PROXY_CIDRS`` (default: the loopback). Then ``X-Forwarded-For`` is read from the
right, one hop per trusted proxy (``TWIN_TRUSTED_PROXIES``, at most), for as long as the address
stepped over is itself trusted: the first address no trusted proxy vouches for is the client.
Whatever a client writes into the header itself sits further left and is never reached. A
request that reaches daphne directly, from anywhere else, has its forwarded headers ignored
(``ForwardedHeadersMiddleware`` drops them, ``X-Forwarded-Proto`` included).
"""

from __future__ import annotations

import hashlib
import ipaddress
from functools import lru_cache

from django.conf import settings

_FORWARDED = ("HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_PROTO", "HTTP_X_FORWARDED_HOST", "HTTP_X_FORWARDED_PORT")


def _key(address: str) -> str:
    """IPv4 as it is; an IPv4-mapped IPv6 address unwrapped; other IPv6 by its /64, which one
    subscriber gets whole (rotating within it must not buy fresh limits)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address or "unknown"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def address_hash(key: str) -> str:
    """A client key (or a block of them) as limits and incidents keep it: hashed with the secret key."""
    return hashlib.sha256(f"{settings.SECRET_KEY}:{key}".encode()).hexdigest() if key else ""


def blocks_of(key: str) -> list[tuple[str, int]]:
    """The blocks a client key belongs to that the limits count too, each with its factor
    (``TWIN_RATE_BLOCKS``: an IPv6 /64's /56 and /48, an IPv4 address's /24): one subscriber
    rotating through the /64s of its /56, or a renter through its /48, meets a shared limit."""
    try:
        network = ipaddress.ip_network(key, strict=False)
    except ValueError:
        return []
    family = "v6" if isinstance(network, ipaddress.IPv6Network) else "v4"
    return [(str(network.supernet(new_prefix=prefix)), factor)
            for (kind, prefix), factor in settings.TWIN_RATE_BLOCKS.items()
            if kind == family and prefix < network.prefixlen]


def share_key(key: str) -> str:
    """A client key (``_key``) as the day's budget shares count it: an IPv6 /64 by its /48, the
    block a site or a small provider customer gets whole (64 thousand /64s must not buy 64
    thousand shares); IPv4 as it is."""
    try:
        network = ipaddress.ip_network(key, strict=False)
    except ValueError:
        return key
    if isinstance(network, ipaddress.IPv6Network) and network.prefixlen > 48:
        return str(network.supernet(new_prefix=48))
    return key


@lru_cache(maxsize=8)
def _networks(cidrs: tuple[str, ...]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(c, strict=False) for c in cidrs)


def trusted_proxy(address: str) -> bool:
    """Whether ``address`` is one of the proxies in ``TWIN_TRUSTED_PROXY_CIDRS``."""
    if not settings.TWIN_TRUSTED_PROXIES:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in network for network in _networks(tuple(settings.TWIN_TRUSTED_PROXY_CIDRS)))


def _pick(remote: str, forwarded: str) -> str:
    return _key(_peer_or_forwarded(remote, forwarded))


def _peer_or_forwarded(remote: str, forwarded: str) -> str:
    address = remote or "unknown"
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    for hop in list(reversed(hops))[:settings.TWIN_TRUSTED_PROXIES]:
        if not trusted_proxy(address):
            break
        try:
            address = str(ipaddress.ip_address(hop))
        except ValueError:
            break  # a malformed header: the last address a trusted proxy gave stands
    return address


def client_ip_from_request(request) -> str:
    return _pick(request.META.get("REMOTE_ADDR", ""), request.META.get("HTTP_X_FORWARDED_FOR", ""))


def client_ip_from_scope(scope: dict) -> str:
    client = scope.get("client") or ("", 0)
    headers = dict(scope.get("headers") or [])
    forwarded = headers.get(b"x-forwarded-for", b"").decode("latin-1")
    return _pick(client[0] or "", forwarded)


class ForwardedHeadersMiddleware:
    """Forwarded headers count only from a trusted proxy: from anyone else they are removed before
    Django reads them (``SECURE_PROXY_SSL_HEADER`` believes X-Forwarded-Proto from any peer)."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        if not trusted_proxy(request.META.get("REMOTE_ADDR", "")):
            for name in _FORWARDED:
                request.META.pop(name, None)
        return self.get_response(request)
