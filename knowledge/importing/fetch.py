"""HTTP for the importer: only the named host, bounded in size, time and what a page may point at.

Every hop of a redirect must stay on the start host (compared as lower-case host and effective
port) and be allowed by robots.txt. A response is read raw, at most 2 MB, and decompressed here
with the same bound (httpx would inflate a compressed body whole before any check); it must
arrive within ``DEADLINE`` seconds all told, not just between two bytes. Where the addresses
must be public (the admin's Import: staff are not the host's administrator), every address the
host resolves to is checked before each request: loopback, private, link-local and reserved
ones are refused. The check resolves the name itself, so a name that resolves to another
address between the check and the connection (DNS rebinding) is not caught.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import time
import zlib
from collections.abc import Callable
from urllib.parse import urljoin, urlsplit

import httpx

from knowledge.importing.model import SourceError
from twinsite import __version__

MAX_PAGE_BYTES = 2 * 1024 * 1024
MAX_REDIRECTS = 5
DEADLINE = 30.0  # seconds for one response, headers to last byte
USER_AGENT = f"Twinsite/{__version__} (knowledge import on its owner's request)"
TIMEOUT = httpx.Timeout(10.0, connect=5.0)
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([\w-]+)""", re.IGNORECASE)


def host_key(url: str) -> str:
    """``host:port`` as a browser compares origins: lower case, the scheme's port made explicit."""
    parts = urlsplit(url)
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme, 0)
    except ValueError:
        return ""
    return f"{(parts.hostname or '').lower()}:{port}"


def new_client() -> httpx.Client:
    # identity first: a compressed body is read raw and inflated here, within the size bound
    return httpx.Client(timeout=TIMEOUT, follow_redirects=False,
                        headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate, identity;q=0.9"})


class Fetcher:
    """GET with the module's limits for one host; ``allowed(url)`` (robots.txt) is asked for every hop."""

    def __init__(self, start: str, client: httpx.Client, *, public_only: bool = False,
                 allowed: Callable[[str], bool] | None = None) -> None:
        self.host = host_key(start)
        self.client, self.public_only, self.allowed = client, public_only, allowed

    def get(self, url: str) -> tuple[httpx.Response, str, bytes]:
        for _ in range(MAX_REDIRECTS + 1):
            self._check(url)
            try:
                with self.client.stream("GET", url) as response:
                    if response.is_redirect:
                        url = urljoin(url, response.headers.get("location", ""))
                        continue
                    return response, url, self._body(url, response)
            except httpx.TimeoutException:
                raise SourceError(f"{url} did not answer within {TIMEOUT.read:.0f} s") from None
            except httpx.HTTPError as exc:
                raise SourceError(f"{url} could not be reached ({type(exc).__name__})") from None
        raise SourceError(f"{url} redirects more than {MAX_REDIRECTS} times")

    def _check(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or host_key(url) != self.host:
            raise SourceError(f"{url} is not on {self.host.rsplit(':', 1)[0]}: only the named site is read")
        if self.allowed is not None and not self.allowed(url):
            raise SourceError(f"{url}: robots.txt disallows it")
        if self.public_only:
            _public(parts.hostname or "", parts.port or 443)

    def _body(self, url: str, response: httpx.Response) -> bytes:
        started = time.monotonic()
        raw = b""
        for part in response.iter_raw():
            raw += part
            if len(raw) > MAX_PAGE_BYTES:
                raise SourceError(f"{url} is over 2 MB: not read")
            if time.monotonic() - started > DEADLINE:
                raise SourceError(f"{url} took over {DEADLINE:.0f} s to arrive: not read")
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


def _public(host: str, port: int) -> None:
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError):
        raise SourceError(f"{host} does not resolve") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if not address.is_global:
            raise SourceError(f"{host} is a private or local address ({address}): the admin imports only "
                              "public sites (manage.py import_knowledge reads any)")


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
