"""PDFs read by layout: columns not interleaved, footers gone, roles whole, sections as headings."""

from __future__ import annotations

import re

import pytest
from reportlab.pdfgen.canvas import Canvas

from knowledge.importing import pdf
from knowledge.importing.model import SourceError
from tests.knowledge.importing.makers import cv_pdf

DELTAMARK = "I built groundwater models for drinking-water companies"


def _sections(body: str) -> list[str]:
    return re.findall(r"^(#+ .+)$", body, re.M)


@pytest.mark.parametrize("order", ["columns", "rows"])
def test_two_columns_are_read_one_after_the_other_whatever_order_the_file_draws_them(tmp_path, order):
    doc = pdf.read_pdf(cv_pdf(tmp_path / "cv.pdf", order=order))
    assert doc.title == "Tamsin Okafor"
    assert _sections(doc.body) == [
        "## Summary", "## Experience", "### Riverwise Consultancy", "### Deltamark Engineering",
        "### Severn Rivers Trust", "## Education", "### University of Birmingham", "### University of Leeds",
        "## Contact", "## Top Skills", "## Languages", "## Certifications"]
    # the sidebar's items stay items, and none of them lands inside the main column's text
    skills = doc.body.split("## Top Skills")[1].split("##")[0]
    assert skills.split() == ["-", "Flood", "modelling", "-", "Python", "-", "Field", "surveys"]
    experience = doc.body.split("## Experience")[1].split("## Education")[0]
    for item in ("Flood modelling", "Yoruba", "tamsin@example.test"):
        assert item not in experience
    assert "- Chartered Water and Environmental Manager" in doc.body  # a wrapped item joined


def test_a_role_that_runs_over_the_page_break_stays_one_paragraph_and_footers_are_gone(tmp_path):
    path = cv_pdf(tmp_path / "cv.pdf")
    doc = pdf.read_pdf(path)
    role = doc.body.split("### Deltamark Engineering")[1].split("###")[0]
    paragraphs = [p for p in role.split("\n\n") if DELTAMARK in p]
    assert len(paragraphs) == 1 and paragraphs[0].count(DELTAMARK) == 5
    assert "Page" not in doc.body and "of 2" not in doc.body
    assert "Tamsin Okafor" not in doc.body  # the running header on page 2 (the title is the name)
    assert "- September 2016 - February 2021 (4 years 6 months)" in role


def test_one_column_keeps_every_section_in_order(tmp_path):
    doc = pdf.read_pdf(cv_pdf(tmp_path / "cv.pdf", columns=1))
    assert _sections(doc.body)[:3] == ["## Summary", "## Experience", "### Riverwise Consultancy"]
    assert _sections(doc.body)[-3:] == ["## Top Skills", "## Languages", "## Certifications"]
    assert "Page 1" not in doc.body


def test_a_bare_page_number_footer_goes_on_a_one_page_pdf_too(tmp_path):
    doc = pdf.read_pdf(cv_pdf(tmp_path / "cv.pdf", long=False, numbered=False))
    assert not re.search(r"^\s*(Page\s*)?1\s*$", doc.body, re.M)
    assert "Riverwise Consultancy" in doc.body


def test_a_scan_without_text_says_what_to_do(tmp_path):
    path = tmp_path / "scan.pdf"
    canvas = Canvas(str(path))
    canvas.rect(50, 50, 400, 600, fill=1)
    canvas.save()
    with pytest.raises(SourceError, match="no text in it"):
        pdf.read_pdf(path)


def test_an_encrypted_pdf_is_refused_with_its_reason(tmp_path):
    path = tmp_path / "locked.pdf"
    canvas = Canvas(str(path), encrypt="secret")
    canvas.drawString(50, 700, "Tamsin Okafor, hydrologist")
    canvas.save()
    with pytest.raises(SourceError, match="encrypted"):
        pdf.read_pdf(path)


def test_a_pdf_over_the_limit_is_not_opened(tmp_path, monkeypatch):
    path = cv_pdf(tmp_path / "cv.pdf")
    monkeypatch.setattr(pdf, "MAX_FILE_BYTES", path.stat().st_size - 1)
    with pytest.raises(SourceError, match="over the 20 MB limit"):
        pdf.read_pdf(path)


def test_not_a_pdf_at_all(tmp_path):
    path = tmp_path / "cv.pdf"
    path.write_bytes(b"%PDF-1.7\nthis is no PDF")
    with pytest.raises(SourceError, match=r"not a readable PDF|no text"):
        pdf.read_pdf(path)


def test_a_glyph_without_a_character_is_a_bullet_alone_and_nothing_inside_a_word():
    assert pdf._glyphs("(cid:127)") == "•"
    assert pdf._glyphs("Ta(cid:3)msin") == "Tamsin"


def test_a_damaged_pdf_is_one_line_not_a_traceback(tmp_path):
    path = cv_pdf(tmp_path / "cv.pdf")
    path.write_bytes(path.read_bytes().replace(b"/MediaBox [", b"/MediaBox [ /Oops"))
    with pytest.raises(SourceError, match="not a readable PDF"):
        pdf.read_pdf(path)
