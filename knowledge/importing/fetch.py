"""HTTP for the importer: only the named host, bounded in size, time and what a page may point at.

Every hop of a redirect must stay on the start host (compared as lower-case host and effective
port) and be allowed by robots.txt. A response is read raw, at most 2 MB, and decompressed here
with the same bound (httpx would inflate a compressed body whole before any check).

Time: one deadline (``TWIN_IMPORT_DEADLINE``, 20 s) runs from the connection to the last byte
of a response, headers included: every read and write on the socket is given at most what is
left of it, so a server that drips its headers a byte at a time ends at the deadline too. An
import job has a wall-clock budget (``TWIN_IMPORT_BUDGET``) over all its requests.

Addresses: the host is resolved once per import, as httpx writes it on the wire (IDNA 2008:
``httpx.URL(url).raw_host``, not the IDNA 2003 that ``socket.getaddrinfo`` applies to a Unicode
name), and the connection goes to those addresses and no others: ``_Backend`` dials the vetted
address while the request keeps the name for its Host header and for TLS (SNI and the
certificate's check). A name that resolves elsewhere later (DNS rebinding) is not asked again.
Where the addresses must be public (the admin's Import: staff are not the host's administrator),
every address the host resolves to must be global, and the port 80 or 443. No proxy from the
environment is used (``trust_env=False``).
"""

from __future__ import annotations

import ipaddress
import math
import re
import socket
import time
import zlib
from collections.abc import Callable
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx
from django.conf import settings

from knowledge.importing.model import SourceError
from twinsite import __version__
from twinsite.env import env_int

MAX_PAGE_BYTES = 2 * 1024 * 1024
MAX_REDIRECTS = 5
PUBLIC_PORTS = (80, 443)
USER_AGENT = f"Twinsite/{__version__} (knowledge import on its owner's request)"
TIMEOUT = httpx.Timeout(10.0, connect=5.0)  # between two bytes; the deadline bounds the whole
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([\w-]+)""", re.IGNORECASE)
Resolver = Callable[[str, int], list[str]]


def deadline() -> float:
    """Seconds from connecting to the last byte of one response: the setting, else the
    environment's ``TWIN_IMPORT_DEADLINE``, else 20."""
    return float(getattr(settings, "TWIN_IMPORT_DEADLINE", None) or env_int("TWIN_IMPORT_DEADLINE", 20, minimum=1))


def budget() -> float:
    """Seconds one import job may spend fetching, all its requests together (``TWIN_IMPORT_BUDGET``, 600)."""
    value = getattr(settings, "TWIN_IMPORT_BUDGET", None)
    return float(value if value is not None else env_int("TWIN_IMPORT_BUDGET", 600, minimum=10))


class BudgetSpent(SourceError):
    """The import job's wall-clock budget is spent: nothing more is fetched."""


def host_key(url: str) -> str:
    """``host:port`` as a browser compares origins: lower case, the scheme's port made explicit."""
    parts = urlsplit(url)
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme, 0)
    except ValueError:
        return ""
    return f"{(parts.hostname or '').lower()}:{port}"


def wire_host(url: str) -> str:
    """The host as httpx puts it on the wire and hands to the connection (IDNA 2008, ASCII)."""
    try:
        return httpx.URL(url).raw_host.decode("ascii").lower()
    except (httpx.InvalidURL, UnicodeError):
        raise SourceError(f"{url} is not a valid address") from None


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class Clock:
    """The addresses each host was vetted to, and the deadline of the request under way."""

    def __init__(self, *, public_only: bool, resolve: Resolver, until: float | None) -> None:
        self.public_only, self.resolve = public_only, resolve
        self.until = until if until is not None else time.monotonic() + budget()
        self.pinned: dict[str, list[str]] = {}
        self.ends = math.inf

    def start(self, url: str) -> None:
        """A request begins: its deadline set, within what is left of the job's budget."""
        now = time.monotonic()
        if now >= self.until:
            raise BudgetSpent(f"{url}: the import ran out of its {budget():.0f} s: not read")
        self.ends = min(now + deadline(), self.until)

    def left(self, timeout: float | None) -> float:
        remaining = self.ends - time.monotonic()
        if remaining <= 0:
            raise httpcore.ReadTimeout("the request's deadline passed")
        return remaining if timeout is None else min(timeout, remaining)

    def pin(self, url: str) -> None:
        """Resolve the host once (per import) and vet every address it has."""
        host = wire_host(url)
        if host in self.pinned:
            return
        port = urlsplit(url).port or (443 if url.lower().startswith("https") else 80)
        try:
            addresses = self.resolve(host, port)
        except (OSError, UnicodeError):
            raise SourceError(f"{host} does not resolve") from None
        if not addresses:
            raise SourceError(f"{host} does not resolve")
        if self.public_only:
            for text in addresses:
                if not _public(text):
                    raise SourceError(f"{host} is a private or local address ({text}): the admin imports only "
                                      "public sites (manage.py import_knowledge reads any)")
        self.pinned[host] = addresses


def _public(text: str) -> bool:
    address = ipaddress.ip_address(text.split("%", maxsplit=1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


class _Stream(httpcore.NetworkStream):
    """A socket whose every read and write gets at most what is left of the request's deadline."""

    def __init__(self, stream: httpcore.NetworkStream, clock: Clock) -> None:
        self._stream, self._clock = stream, clock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._clock.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._clock.left(timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._stream.start_tls(ssl_context, server_hostname, self._clock.left(timeout)), self._clock)

    def get_extra_info(self, info: str):
        return self._stream.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """Dials the addresses the host was vetted to, never the name: TLS and Host keep the name."""

    def __init__(self, clock: Clock) -> None:
        self._clock, self._sync = clock, httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options=None) -> httpcore.NetworkStream:
        addresses = self._clock.pinned.get(host.lower())
        if not addresses:
            raise httpcore.ConnectError(f"{host} was not vetted")
        failure: Exception = httpcore.ConnectError(f"{host}: no address answered")
        for address in addresses:
            try:
                stream = self._sync.connect_tcp(address, port, self._clock.left(timeout), local_address,
                                                socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            return _Stream(stream, self._clock)
        raise failure

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options=None):
        raise httpcore.ConnectError("no unix sockets")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class _Transport(httpx.HTTPTransport):
    def __init__(self, clock: Clock) -> None:
        super().__init__(trust_env=False)
        # httpx's own transport, its connection pool given the dialling backend (httpx has no argument for it)
        self._pool = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(trust_env=False),
                                             max_connections=10, max_keepalive_connections=5, keepalive_expiry=5.0,
                                             http1=True, http2=False, network_backend=_Backend(clock))


def new_client(clock: Clock) -> httpx.Client:
    # identity first: a compressed body is read raw and inflated here, within the size bound
    return httpx.Client(transport=_Transport(clock), timeout=TIMEOUT, follow_redirects=False, trust_env=False,
                        headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate, identity;q=0.9"})


class Fetcher:
    """GET with the module's limits for one host; ``allowed(url)`` (robots.txt) is asked for every
    hop. ``until``: the job's end (``time.monotonic()``), else the budget from now."""

    def __init__(self, start: str, *, public_only: bool = False, allowed: Callable[[str], bool] | None = None,
                 resolve: Resolver | None = None, until: float | None = None) -> None:
        self.host = host_key(start)
        self.public_only, self.allowed = public_only, allowed
        self.clock = Clock(public_only=public_only, resolve=resolve or system_resolver, until=until)
        self.client = new_client(self.clock)

    def close(self) -> None:
        self.client.close()

    def get(self, url: str) -> tuple[httpx.Response, str, bytes]:
        for _ in range(MAX_REDIRECTS + 1):
            self._check(url)
            self.clock.start(url)
            try:
                with self.client.stream("GET", url) as response:
                    if response.is_redirect:
                        url = urljoin(url, response.headers.get("location", ""))
                        continue
                    return response, url, self._body(url, response)
            except httpx.TimeoutException:
                raise SourceError(f"{url} did not arrive within {self._limit():g} s: not read") from None
            except httpx.HTTPError as exc:
                raise SourceError(f"{url} could not be reached ({type(exc).__name__})") from None
        raise SourceError(f"{url} redirects more than {MAX_REDIRECTS} times")

    def _limit(self) -> float:
        return deadline() if self.clock.ends < self.clock.until else budget()

    def _check(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or host_key(url) != self.host:
            raise SourceError(f"{url} is not on {self.host.rsplit(':', 1)[0]}: only the named site is read")
        if self.public_only and int(self.host.rsplit(":", 1)[1]) not in PUBLIC_PORTS:
            raise SourceError(f"{url}: the admin imports from ports 80 and 443 only")
        if self.allowed is not None and not self.allowed(url):
            raise SourceError(f"{url}: robots.txt disallows it")
        self.clock.pin(url)

    def _body(self, url: str, response: httpx.Response) -> bytes:
        raw = b""
        for part in response.iter_raw():
            raw += part
            if len(raw) > MAX_PAGE_BYTES:
                raise SourceError(f"{url} is over 2 MB: not read")
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding in ("", "identity"):
            return raw
        if encoding not in ("gzip", "deflate", "x-gzip"):
            raise SourceError(f"{url} came compressed as {encoding!r}, which the import does not read")
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib, by its header
        try:
            body = inflater.decompress(raw, MAX_PAGE_BYTES + 1)
        except zlib.error:
            raise SourceError(f"{url} is not valid {encoding} data") from None
        if len(body) > MAX_PAGE_BYTES or inflater.unconsumed_tail:
            raise SourceError(f"{url} is over 2 MB: not read")
        return body


def decode(body: bytes, header_charset: str | None) -> str:
    """The page as text: the header's charset, else the page's own <meta charset>, else UTF-8 and
    failing that Windows-1252 (what a page that says nothing is written in); without an XML
    declaration, which lxml refuses in a decoded string."""
    charset = header_charset or ""
    if not charset:
        meta = _CHARSET.search(body[:4096])
        charset = meta.group(1).decode("ascii", "replace") if meta else ""
    text = None
    for candidate in (charset, "utf-8", "cp1252"):
        if not candidate:
            continue
        try:
            text = body.decode(candidate)
            break
        except (LookupError, UnicodeDecodeError):
            continue
    text = text if text is not None else body.decode("utf-8", "replace")
    return re.sub(r"^\s*<\?xml[^>]*\?>", "", text)
