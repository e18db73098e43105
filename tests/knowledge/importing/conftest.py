"""A small site of our own persona, served on loopback by a real HTTP server.

Every page carries what a real site wraps its text in (a menu, a cookie notice, a newsletter box,
share buttons, a footer); beside the owner's pages it has a privacy statement, a contact form, a
tag index and a draft that robots.txt disallows, and a few addresses that misbehave.
"""

from __future__ import annotations

import gzip
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

CHROME = """<header><a href="/">Tamsin Okafor</a><nav><ul><li><a href="/about/">About</a></li>
<li><a href="/projects/lingewaard/">Projects</a></li><li><a href="/blog/soil-moisture/">Blog</a></li>
<li><a href="/contact/">Contact</a></li></ul></nav></header>"""
FOOTER = """<aside class="newsletter"><h3>Stay in the loop</h3><p>Get my quarterly letter on rivers, rain and models
straight to your inbox. Unsubscribe whenever you like.</p><form><input type="email"><button>Sign me up</button>
</form></aside>
<div class="cookie-banner">This site stores cookies on your device to count visits anonymously.
<button>Accept all cookies</button><button>Reject</button></div>
<footer><p>Copyright 2026 Okafor Hydrology. Registered at the chamber of commerce under 99887766.</p>
<p><a href="/privacy/">Privacy</a> · <a href="/tags/">Tags</a> · Follow me on Mastodon</p></footer>"""


def page(title: str, body: str, *, lang: str = "en", published: str = "", main: bool = True) -> str:
    meta = f'<meta property="article:published_time" content="{published}">' if published else ""
    share = '<div class="share">Share: LinkedIn · Bluesky · Copy link</div>'
    inner = f"<h1>{title}</h1>{body}{share}"
    content = f"<main><article>{inner}</article></main>" if main else \
        f'<div id="page"><div class="entry-content">{inner}</div></div>'
    return (f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><title>{title} | Tamsin Okafor</title>'
            f"{meta}</head><body>{CHROME}{content}{FOOTER}</body></html>")


PROSE = ("For the Lingewaard water board I rebuilt the rainfall-runoff model of the polders between the Rhine and "
         "the Waal. The old model needed three weeks of calibration for every study; the new one runs in four days "
         "on a laptop and is checked against forty water-level loggers.")
PAGES = {
    "/about/": page("About me", f"<p>I am a hydrologist in Arnhem. {PROSE}</p><h2>Outside work</h2>"
                                "<p>I row on the Nederrijn on Sunday mornings and keep bees in a community garden "
                                "near the station, which taught me more about patience than any model did.</p>"),
    "/projects/lingewaard/": page("Lingewaard polder model", f"<p>{PROSE}</p><h2>Approach</h2><ul><li>Field survey "
                                  "of every weir</li><li>Calibration on ten years of discharge data</li></ul>",
                                  published="2025-04-02", main=False),
    "/blog/soil-moisture/": page("Wat bodemvocht ons vertelt", "<p>Na een droge zomer meet ik in de Betuwe hoe "
                                 "snel de bodem weer water opneemt. De sensoren staan op drie diepten en sturen elk "
                                 "kwartier een meting naar de server van het waterschap. Dit artikel beschrijft wat "
                                 "we daarvan leerden voor de modellen.</p>", lang="nl", published="2026-02-10"),
    "/privacy/": page("Privacy statement", "<p>This statement explains which personal data this site keeps and "
                                           "why. Contact messages are deleted after a year.</p>"),
    "/contact/": page("Contact", '<p>Send me a message.</p><form><input name="name"><input type="email">'
                                 "<textarea></textarea><button>Send</button></form>"),
    "/tags/": page("Tags", '<ul><li><a href="/tags/rivers/">rivers</a></li><li><a href="/tags/models/">models</a>'
                           '</li><li><a href="/tags/soil/">soil</a></li></ul>'),
    "/writing/": page("Latest writing", "<p>Na een droge zomer meet ik in de Betuwe hoe snel de bodem weer water "
                      "opneemt…</p><p><a href='/blog/soil-moisture/'>Read more</a></p><p>For the Lingewaard water "
                      "board I rebuilt the rainfall-runoff model of the polders between the Rhine…</p><p><a "
                      "href='/projects/lingewaard/'>Read more</a></p>"),
    "/drafts/fees-2027/": page("Fees 2027 (draft)", f"<p>Not for publication: my day rate goes up next year. "
                                                    f"{PROSE}</p>"),
}
ROBOTS = "User-agent: *\nDisallow: /drafts/\n"


def sitemap(base: str, pages=PAGES) -> str:
    urls = "".join(f"<url><loc>{base}{path}</loc><lastmod>2026-03-{n % 28 + 1:02d}</lastmod></url>"
                   for n, path in enumerate(["/", *pages]))
    return f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'


class Site:
    def __init__(self) -> None:
        self.pages = dict(PAGES)
        self.robots: str | None = ROBOTS
        self.robots_status = 200
        self.with_sitemap = True
        self.requests: list[tuple[str, str]] = []  # (path, user agent)
        self.hosts: list[str] = []  # the Host header of each request
        self.dripped = 0  # bytes of /drip/'s headers sent
        self.other = ""  # an address on another host, for the redirect test
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.home = page("Tamsin Okafor", '<p>Welcome!</p><ul><li><a href="/about/">About</a></li>'
                                          '<li><a href="/projects/lingewaard/">Lingewaard</a></li></ul>')

    def _handler(self):
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                site.requests.append((self.path, self.headers.get("User-Agent", "")))
                site.hosts.append(self.headers.get("Host", ""))
                if self.path == "/robots.txt":
                    if site.robots is None:
                        return self._send(404, "not found")
                    return self._send(site.robots_status, site.robots, "text/plain")
                if self.path == "/sitemap.xml":
                    if not site.with_sitemap:
                        return self._send(404, "not found")
                    if site.with_sitemap == "broken":
                        return self._send(500, "oops")
                    return self._send(200, sitemap(site.base, site.pages), "application/xml")
                if self.path == "/":
                    return self._send(200, site.home)
                if self.path == "/slow/":
                    time.sleep(1.5)
                    return self._send(200, page("Slow", f"<p>{PROSE}</p>"))
                if self.path == "/moved/":
                    return self._redirect(site.other)
                if self.path == "/about":  # the same page by another address
                    return self._redirect("/about/")
                if self.path == "/gz/":
                    return self._send(200, page("Compressed", f"<p>{PROSE}</p>"), gzipped=True)
                if self.path == "/bomb/":  # 3 MB of nothing, 3 kB on the wire
                    return self._send(200, "<p>" + " " * 3_000_000 + "</p>", gzipped=True)
                if self.path == "/drip/":  # its headers a byte at a time, for a minute
                    try:
                        for byte in b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Slow: " + b"a" * 1200:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            site.dripped += 1
                            time.sleep(0.05)
                    except OSError:
                        pass
                    return None
                if self.path == "/trickle/":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.end_headers()
                    for _ in range(40):
                        self.wfile.write(b"<p>water</p>")
                        self.wfile.flush()
                        time.sleep(0.05)
                    return None
                if self.path == "/cafe/":
                    html = page("Café in Zürich", f"<p>Ik schreef dit in een café in Zürich. {PROSE}</p>")
                    html = html.replace('<meta charset="utf-8">', '<meta charset="windows-1252">')
                    return self._send(200, html, "text/html", codec="cp1252")
                if self.path == "/xhtml/":
                    html = '<?xml version="1.0" encoding="utf-8"?>\n' + page("Plain XHTML", f"<p>{PROSE}</p>")
                    return self._send(200, html, "application/xhtml+xml; charset=utf-8")
                if self.path == "/data.json":
                    return self._send(200, '{"a": 1}', "application/json")
                if self.path == "/huge/":
                    return self._send(200, "<p>" + "water " * 450_000 + "</p>")
                if self.path in site.pages:
                    return self._send(200, site.pages[self.path])
                return self._send(404, "not found")

            def _redirect(self, location: str) -> None:
                self.send_response(301)
                self.send_header("Location", location)
                self.end_headers()

            def _send(self, status: int, text: str, kind: str = "text/html; charset=utf-8", *,
                      gzipped: bool = False, codec: str = "utf-8") -> None:
                body = text.encode(codec)
                if gzipped:
                    body = gzip.compress(body)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                if gzipped:
                    self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


@pytest.fixture
def site():
    served = Site()
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    yield served
    served.server.shutdown()
    served.server.server_close()
