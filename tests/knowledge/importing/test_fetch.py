"""Fetching: one resolution per host, the connection to the vetted address, one deadline."""

from __future__ import annotations

import pytest

from knowledge.importing import fetch, web
from knowledge.importing.sources import read_sources


class Names:
    """A resolver of our own: the names it is asked, each answered from its table."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table, self.asked = table, []

    def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        if host not in self.table:
            raise OSError("unknown name")
        return self.table[host]


def test_headers_dripped_a_byte_at_a_time_end_at_the_deadline_in_one_line(site, settings):
    settings.TWIN_IMPORT_DEADLINE = 1
    reading = read_sources([f"{site.base}/drip/"])
    [(_source, reason)] = reading.failed
    assert reason == f"{site.base}/drip/ did not arrive within 1 s: not read"
    assert "\n" not in reason and 0 < site.dripped < 1200  # the server was cut off mid-headers


def test_a_job_that_spent_its_budget_fetches_nothing_more(site, settings):
    settings.TWIN_IMPORT_BUDGET = 0
    reading = read_sources([f"{site.base}/about/"])
    assert reading.failed == [(f"{site.base}/about/", f"{site.base}/robots.txt: the import ran out of its 0 s: "
                                                      "not read")]
    assert site.requests == []


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]", "2130706433", "127.1", "0x7f.0.0.1",
                                  "[::ffff:127.0.0.1]"])
def test_loopback_in_any_spelling_is_refused_for_the_admin(site, host):
    reading = read_sources([f"http://{host}/about/"], public_only=True)
    assert reading.docs == [] and "private or local address" in reading.failed[0][1]
    assert site.requests == []


def test_the_check_resolves_the_name_httpx_connects_to_idna_2008(site):
    # IDNA 2003 maps ß to "ss"; httpx writes xn--strae-oqa: the one checked is the one dialled
    names = Names({"strasse.example": ["93.184.215.14"], "xn--strae-oqa.example": ["10.1.2.3"]})
    reading = read_sources(["http://straße.example/about/"], public_only=True, resolve=names)
    assert names.asked == ["xn--strae-oqa.example"]
    assert "private or local address (10.1.2.3)" in reading.failed[0][1]


def test_the_connection_goes_to_the_vetted_address_with_the_name_as_host_and_is_resolved_once(site):
    port = site.server.server_address[1]
    names = Names({"pages.example": ["127.0.0.1"]})
    docs, _ = web.read_site(f"http://pages.example:{port}/", resolve=names)
    assert len(docs) == 3 and names.asked == ["pages.example"]  # robots, sitemap, every page: asked once
    assert set(site.hosts) == {f"pages.example:{port}"}


def test_the_admin_reads_ports_80_and_443_only(site):
    names = Names({"pages.example": ["93.184.215.14"]})
    reading = read_sources(["http://pages.example:8080/about/"], public_only=True, resolve=names)
    assert reading.failed[0][1].endswith("the admin imports from ports 80 and 443 only") and names.asked == []


def test_a_proxy_named_in_the_environment_is_not_used(site, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    docs, _ = web.read_site(f"{site.base}/about/")
    assert [d.title for d in docs] == ["About me"]


def test_the_host_a_url_is_connected_to():
    assert fetch.wire_host("https://Straße.Example/a") == "xn--strae-oqa.example"
    assert fetch.wire_host("http://[::1]:8000/") == "::1"
