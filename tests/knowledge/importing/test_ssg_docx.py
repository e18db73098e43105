"""Static-site generator folders and DOCX CVs."""

from __future__ import annotations

import datetime as dt

import docx
import pytest

from knowledge.importing import ssg
from knowledge.importing.model import SourceError
from knowledge.importing.word import read_docx


def _write(root, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_hugo_jekyll_eleventy_and_astro_front_matter_is_mapped_and_their_syntax_removed(tmp_path):
    hugo = tmp_path / "hugo"
    _write(hugo, "content/projects/weirs.nl.md", '+++\ntitle = "Stuwen in de Linge"\ndate = 2025-05-01\n'
           'lastmod = 2025-09-12\nslug = "stuwen"\n+++\nWe maten elke stuw.\n\n{{< figure src="a.jpg" '
           'caption="Stuw 4" >}}\n\n{{% note %}}Metingen in 2024.{{% /note %}}\n')
    _write(hugo, "content/posts/_index.md", "---\ntitle: Posts\n---\n")
    _write(hugo, "themes/x/layouts/single.md", "---\ntitle: Theme\n---\nNot content at all here.\n")
    docs, skipped = ssg.read_folder(hugo)
    assert [(d.title, d.lang, d.url, d.updated) for d in docs] == [
        ("Stuwen in de Linge", "nl", "/projects/stuwen/", dt.date(2025, 9, 12))]
    assert "figure" not in docs[0].body and "{{" not in docs[0].body and "Metingen in 2024." in docs[0].body
    assert [s.source for s in skipped] == ["posts/_index.md"]

    jekyll = tmp_path / "jekyll"
    _write(jekyll, "_posts/2024-02-03-peat.md", "---\ntitle: Peat and rain\nlayout: post\npermalink: /blog/peat/\n"
           "---\nPeat holds rain {% include note.html %} like a sponge.\n\n<div class=\"aside\">Read more "
           "<b>below</b>.</div><script>track()</script>\n")
    _write(jekyll, "_drafts/fees.md", "---\ntitle: Fees\ndraft: true\n---\nMy rate goes up next year, quietly.\n")
    _write(jekyll, "_includes/note.html", "<p>note</p>")
    docs, _ = ssg.read_folder(jekyll)
    by_title = {d.title: d for d in docs}
    assert by_title["Peat and rain"].url == "/blog/peat/" and by_title["Peat and rain"].public
    assert "{%" not in by_title["Peat and rain"].body and "track()" not in by_title["Peat and rain"].body
    assert "Read more below." in " ".join(by_title["Peat and rain"].body.split())
    assert by_title["Fees"].public is False

    astro = tmp_path / "astro"
    _write(astro, "src/content/blog/levees.mdx", "---\ntitle: Levees\npubDate: 2023-11-05\nlang: en\n---\n"
           "import Chart from '../../components/Chart.astro';\n\nLevees fail from below.\n\n<Chart data={x} />\n"
           "{{ page.url }}\n")
    docs, _ = ssg.read_folder(astro)
    assert docs[0].updated == dt.date(2023, 11, 5) and docs[0].lang == "en"
    assert docs[0].body.strip() == "Levees fail from below."


def test_fenced_code_is_left_as_written():
    assert "{{ not_a_template }}" in ssg.clean_body("Text.\n\n```\n{{ not_a_template }}\n```\n")


def test_a_docx_cv_keeps_headings_lists_and_tables(tmp_path):
    document = docx.Document()
    document.add_paragraph("Tamsin Okafor", style="Title")
    document.add_heading("Experience", level=1)
    role = document.add_paragraph()
    role.add_run("Senior Hydrologist, Riverwise").bold = True
    document.add_paragraph("I lead catchment studies for water boards along the Rhine.")
    document.add_paragraph("Rainfall-runoff models", style="List Bullet")
    document.add_paragraph("Field surveys", style="List Bullet")
    document.add_heading("Education", level=1)
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "2011 - 2013"
    table.rows[0].cells[1].text = "MSc Hydrogeology, University of Birmingham"
    document.save(tmp_path / "cv.docx")
    doc = read_docx(tmp_path / "cv.docx")
    assert doc.title == "Tamsin Okafor"
    assert doc.body.splitlines() == [
        "## Experience", "", "### Senior Hydrologist, Riverwise", "",
        "I lead catchment studies for water boards along the Rhine.", "- Rainfall-runoff models", "- Field surveys",
        "", "## Education", "", "2011 - 2013 | MSc Hydrogeology, University of Birmingham"]


def test_a_broken_docx_is_a_clear_error(tmp_path):
    (tmp_path / "cv.docx").write_bytes(b"PK\x03\x04 broken")
    with pytest.raises(SourceError, match="not a readable DOCX"):
        read_docx(tmp_path / "cv.docx")


def test_addresses_are_those_the_generator_gives_and_a_broken_file_costs_only_itself(tmp_path):
    _write(tmp_path, "_posts/2024-01-02-hello.md", "---\ntitle: Hello\n---\nFirst post on the new site.\n")
    _write(tmp_path, "src/content/blog/levees.md", "---\ntitle: Levees\npermalink: /:categories/:title/\n---\n"
           "Levees fail from below. See `List<String>` and <https://tamsin.test/levees>.\n")
    _write(tmp_path, "broken.md", "---\ntitle: Broken\ndate: 2023-02-30\n---\nA date that never was.\n")
    docs, skipped = ssg.read_folder(tmp_path)
    assert {d.title: d.url for d in docs} == {"Hello": "/hello/", "Levees": "/blog/levees/"}
    assert "`List<String>`" in docs[1].body and "<https://tamsin.test/levees>" in docs[1].body
    assert [s.source for s in skipped] == ["broken.md"] and "could not be read" in skipped[0].reason


def test_a_docx_nested_table_is_read_and_a_first_heading_names_no_owner(tmp_path):
    document = docx.Document()
    document.add_heading("Work experience", level=1)
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "2019 - 2023"
    inner = table.rows[0].cells[1].add_table(rows=1, cols=1)
    inner.rows[0].cells[0].text = "Senior engineer at Riverwise"
    document.save(tmp_path / "cv.docx")
    doc = read_docx(tmp_path / "cv.docx")
    assert "2019 - 2023 | Senior engineer at Riverwise" in doc.body
    assert doc.person == ""
    document = docx.Document()
    document.add_paragraph("Tamsin Okafor", style="Title")
    document.add_paragraph("Hydrologist.")
    document.save(tmp_path / "cv2.docx")
    assert read_docx(tmp_path / "cv2.docx").person == "Tamsin Okafor"


def test_two_site_folders_with_the_same_file_are_two_sources(tmp_path):
    from knowledge.importing.files import Status, plan
    from knowledge.importing.sources import read_sources

    for site in ("old-blog", "new-blog"):
        _write(tmp_path / site, "posts/hello.md", f"---\ntitle: Hello from {site}\n---\nA first post on {site}.\n")
    reading = read_sources([str(tmp_path / "old-blog"), str(tmp_path / "new-blog")])
    entries = plan(reading.docs, tmp_path / "knowledge")
    assert [(e.status, e.path) for e in entries] == [(Status.NEW, "posts/hello.md"), (Status.NEW, "posts/hello-2.md")]
