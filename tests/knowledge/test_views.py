"""The public source pages that citations link to."""

from __future__ import annotations

import pytest
from django.utils.html import escape

from knowledge.content import ContentError, parse_document
from knowledge.selectors import document_urls

pytestmark = pytest.mark.django_db


def test_every_citation_leads_to_a_page_that_exists(client, kb):
    urls = document_urls()
    assert urls["Curriculum Vitae"] == "/sources/cv/"
    for title, url in urls.items():
        response = client.get(url)
        assert response.status_code == 200, url
        assert escape(title) in response.content.decode()
    dutch = client.get(urls["Beschikbaarheid en tarieven"])
    assert urls["Beschikbaarheid en tarieven"] == "/sources/beschikbaarheid/"
    assert '<html lang="nl">' in dutch.content.decode() and "Terug naar de chat" in dutch.content.decode()
    assert client.get("/sources/no-such-document/").status_code == 404
    assert client.get("/sources/draft-book/").status_code == 404  # a private draft has no page


def test_markdown_is_rendered_and_html_in_it_is_not(client, kb):
    from knowledge.models import Document

    Document.objects.filter(title="Curriculum Vitae").update(
        body="## Work\n\n<script>alert(1)</script> *bold* [x](javascript:alert(1))")
    html = client.get("/sources/cv/").content.decode()
    assert "<h2>Work</h2>" in html and "<em>bold</em>" in html
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert 'href="javascript:' not in html


@pytest.mark.parametrize("url", ["javascript:alert(1)", "//evil.example/x", "data:text/html,hi", "ftp://x.org/"])
def test_owner_urls_must_be_http_or_a_site_path(url, tmp_path):
    path = tmp_path / "doc.md"
    path.write_text(f"---\ntitle: T\nkind: article\nlang: en\nurl: \"{url}\"\n---\nBody\n", encoding="utf-8")
    with pytest.raises(ContentError, match="url"):
        parse_document(path, tmp_path)
