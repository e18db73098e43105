"""A site and a page over real HTTP on loopback: main text only, robots.txt honoured, one host."""

from __future__ import annotations

import datetime as dt

import pytest

from knowledge.importing import web
from knowledge.importing.model import SourceError
from knowledge.importing.sources import read_sources
from tests.knowledge.importing.conftest import PROSE, page

BOILERPLATE = ("quarterly letter", "cookies", "Accept all", "chamber of commerce", "Copyright", "Share:", "Bluesky",
               "Mastodon", "Sign me up")


def test_a_site_from_its_sitemap_keeps_the_owners_pages_and_reports_the_rest(site):
    docs, skipped = web.read_site(f"{site.base}/")
    by_path = {d.url.removeprefix(site.base): d for d in docs}
    assert sorted(by_path) == ["/about/", "/blog/soil-moisture/", "/projects/lingewaard/"]
    for doc in docs:
        for word in BOILERPLATE:
            assert word not in doc.body, (doc.url, word)
    about = by_path["/about/"]
    assert about.title == "About me" and about.lang == "en"
    assert "## Outside work" in about.body and "keep bees" in about.body
    assert by_path["/projects/lingewaard/"].updated == dt.date(2026, 3, 3)  # the sitemap's lastmod
    assert "- Field survey of every weir" in by_path["/projects/lingewaard/"].body  # a div-built page, list kept
    assert by_path["/blog/soil-moisture/"].lang == "nl"
    reasons = {s.source.removeprefix(site.base): s.reason for s in skipped}
    assert reasons["/drafts/fees-2027/"] == "robots.txt disallows it"
    assert "legal page" in reasons["/privacy/"]
    assert reasons["/contact/"] == "a contact form"
    assert "index" in reasons["/tags/"]
    assert reasons["/writing/"] == "repeats the other pages' text (a list of posts)"
    assert "/drafts/fees-2027/" not in [p for p, _ in site.requests]  # never even fetched
    assert all(agent.startswith("Twinsite/") for _, agent in site.requests)


def test_without_a_sitemap_the_start_pages_links_are_followed_breadth_first_up_to_the_limit(site):
    site.with_sitemap = False
    docs, skipped = web.read_site(f"{site.base}/", max_pages=2)
    fetched = [p for p, _ in site.requests if p not in ("/robots.txt", "/sitemap.xml")]
    assert fetched == ["/", "/about/"]
    assert [d.title for d in docs] == ["About me"]
    assert any("over --max-pages 2" in s.reason for s in skipped)


def test_one_page_is_just_that_page(site):
    docs, skipped = web.read_site(f"{site.base}/projects/lingewaard/")
    assert [d.title for d in docs] == ["Lingewaard polder model"] and skipped == []
    assert docs[0].updated == dt.date(2025, 4, 2)  # the page's own published date
    assert [p for p, _ in site.requests] == ["/robots.txt", "/projects/lingewaard/"]


def test_a_page_without_lang_gets_the_detected_language_and_a_forced_one_wins(site):
    site.pages["/over/"] = page("Over mij", "<p>Ik ben hydroloog in Arnhem en werk voor waterschappen langs de "
                                "Rijn. In mijn vrije tijd roei ik op de Nederrijn en houd ik bijen bij het station, "
                                "samen met een paar buren uit de wijk.</p>").replace(' lang="en"', "")
    reading = read_sources([f"{site.base}/over/"])
    assert [(d.lang, d.kind) for d in reading.docs] == [("nl", "about")]
    assert read_sources([f"{site.base}/over/"], lang="en", kind="faq").docs[0].lang == "en"


@pytest.mark.parametrize(("path", "message"), [
    ("/moved/", "only the named site is read"),
    ("/data.json", r"is not HTML \(application/json\)"),
    ("/huge/", "over 2 MB"),
    ("/missing/", "answered 404"),
    ("/drafts/fees-2027/", "robots.txt disallows it"),
])
def test_a_page_that_cannot_be_imported_says_why_in_one_line(site, path, message):
    site.other = f"http://localhost:{site.server.server_address[1]}/about/"
    with pytest.raises(SourceError, match=message):
        web.read_site(f"{site.base}{path}")


def test_a_site_that_does_not_answer_in_time_is_an_error(site, settings):
    settings.TWIN_IMPORT_DEADLINE = 0.3
    with pytest.raises(SourceError, match=r"/slow/ did not arrive within 0.3 s: not read"):
        web.read_site(f"{site.base}/slow/")


def test_a_robots_txt_that_fails_refuses_the_site(site):
    site.robots_status = 503
    reading = read_sources([f"{site.base}/", "http://127.0.0.1:9/nothing/"])
    assert reading.docs == []
    assert [source for source, _ in reading.failed] == [f"{site.base}/", "http://127.0.0.1:9/nothing/"]
    assert "robots.txt answered 503" in reading.failed[0][1]
    assert "could not be reached" in reading.failed[1][1]


def test_a_compressed_page_is_read_and_a_compressed_bomb_is_stopped_at_the_limit(site):
    docs, _ = web.read_site(f"{site.base}/gz/")
    assert docs[0].title == "Compressed" and "Lingewaard" in docs[0].body
    with pytest.raises(SourceError, match="over 2 MB"):
        web.read_site(f"{site.base}/bomb/")


def test_a_page_that_trickles_in_is_cut_at_the_deadline(site, settings):
    settings.TWIN_IMPORT_DEADLINE = 1
    with pytest.raises(SourceError, match="/trickle/ did not arrive within 1 s"):
        web.read_site(f"{site.base}/trickle/")


def test_the_page_says_its_own_charset_and_an_xhtml_page_is_read(site):
    cafe = web.read_site(f"{site.base}/cafe/")[0][0]
    assert cafe.title == "Café in Zürich" and "café in Zürich" in cafe.body
    assert web.read_site(f"{site.base}/xhtml/")[0][0].title == "Plain XHTML"


def test_addresses_that_are_not_public_are_refused_where_they_must_be(site):
    reading = read_sources([f"{site.base}/about/"], public_only=True)
    assert reading.docs == [] and "ports 80 and 443 only" in reading.failed[0][1]  # its address: test_fetch.py


def test_a_broken_sitemap_falls_back_to_links_and_a_redirect_to_a_page_read_is_not_read_twice(site):
    site.with_sitemap = "broken"
    site.home = page("Tamsin Okafor", '<p>Welcome!</p><ul><li><a href="/about">About</a></li>'
                                      '<li><a href="/about/">About me</a></li></ul>')
    docs, _ = web.read_site(f"{site.base}/")
    assert [d.title for d in docs].count("About me") == 1 and len(docs) == 3


def test_an_owners_page_about_privacy_is_no_privacy_statement(site):
    site.pages["/blog/privacy-by-design/"] = page("Privacy by design in water data", f"<p>{PROSE} Who may see "
                                                  "which logger is settled before the first sensor goes in.</p>")
    docs, _ = web.read_site(f"{site.base}/blog/privacy-by-design/")
    assert docs[0].title == "Privacy by design in water data"
