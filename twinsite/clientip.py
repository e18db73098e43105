"""The client's IP address, for rate limits and (hashed) incident records.

``REMOTE_ADDR`` (or the ASGI scope's client) unless ``TWIN_TRUSTED_PROXIES`` says how many
reverse proxies in front of Twinsite append to ``X-Forwarded-For``: then the address that the
outermost trusted proxy saw, counted from the right (the left part is whatever the client
claimed, and cannot be trusted).
"""

from __future__ import annotations

import ipaddress

from django.conf import settings


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


def _pick(remote: str, forwarded: str) -> str:
    return _key(_peer_or_forwarded(remote, forwarded))


def _peer_or_forwarded(remote: str, forwarded: str) -> str:
    proxies = settings.TWIN_TRUSTED_PROXIES
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if len(hops) >= proxies:
            candidate = hops[-proxies]
            try:
                return str(ipaddress.ip_address(candidate))
            except ValueError:
                pass  # a malformed header: fall back to the peer
    return remote or "unknown"


def client_ip_from_request(request) -> str:
    return _pick(request.META.get("REMOTE_ADDR", ""), request.META.get("HTTP_X_FORWARDED_FOR", ""))


def client_ip_from_scope(scope: dict) -> str:
    client = scope.get("client") or ("", 0)
    headers = dict(scope.get("headers") or [])
    forwarded = headers.get(b"x-forwarded-for", b"").decode("latin-1")
    return _pick(client[0] or "", forwarded)
