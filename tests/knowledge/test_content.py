from __future__ import annotations

import pytest

from knowledge.content import ContentError, chunk_markdown, outline, parse_document, read_folder

DOC = """---
title: Sample
kind: project
lang: en
url: /sample/
updated: 2026-01-02
---
Intro line.

## First
Alpha text.

### Nested
Beta   text
over lines.

```
## not a heading inside a fence
```

## Second
Gamma.
"""


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_chunks_per_heading_keep_title_and_heading_path(tmp_path):
    doc = parse_document(write(tmp_path, "a.md", DOC), tmp_path)
    assert [c.heading_path for c in doc.chunks] == ["", "First", "First > Nested", "Second"]
    nested = doc.chunks[2]
    assert "## not a heading inside a fence" in nested.text
    assert nested.embed_text.startswith("Sample\nFirst > Nested\n")
    assert [c.ordinal for c in doc.chunks] == [0, 1, 2, 3]
    assert doc.updated.isoformat() == "2026-01-02"
    assert doc.public is True


def test_commonmark_decides_what_a_heading_is():
    """Setext headings split, ~~~ fences and indented code do not, a '#' inside a list item is
    part of the item: the same parser that renders the page decides."""
    body = ("Intro.\n\nEducation\n=========\n\nMSc, TU Delft.\n\n~~~text\n# inside a tilde fence\n~~~\n\n"
            "    # indented code\n\nCourses\n-------\n\n- item\n\n  # heading inside an item? no\n\n"
            "## Work ##\nRailfleet.\n")
    chunks = chunk_markdown("CV", body)
    assert [c.heading_path for c in chunks] == ["", "Education", "Education > Courses", "Education > Work"]
    assert "# inside a tilde fence" in chunks[1].text and "# indented code" in chunks[1].text
    assert "# heading inside an item? no" in chunks[2].text
    assert chunks[3].text == "Railfleet."


def test_hash_ignores_whitespace_but_not_words():
    a = chunk_markdown("T", "## H\nsome   text\nhere")[0]
    b = chunk_markdown("T", "## H\nsome text here")[0]
    c = chunk_markdown("T", "## H\nsome other text here")[0]
    d = chunk_markdown("Other title", "## H\nsome text here")[0]
    assert a.content_hash == b.content_hash
    assert a.content_hash != c.content_hash
    assert a.content_hash != d.content_hash  # the title is part of what is embedded


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no front matter\n", "missing YAML front matter"),
        ("---\ntitle: X\nkind: project\nlang: en\n", "not closed"),
        ("---\nkind: project\nlang: en\n---\nbody\n", "field 'title' is required"),
        ("---\ntitle: X\nkind: recipe\nlang: en\n---\nbody\n", "field 'kind' must be one of"),
        ("---\ntitle: X\nkind: cv\nlang: fr\n---\nbody\n", "field 'lang' must be one of"),
        ("---\ntitle: X\nkind: cv\nlang: en\nupdated: yesterday\n---\nbody\n", "field 'updated' must be a date"),
        ("---\ntitle: X\nkind: cv\nlang: en\npublic: maybe\n---\nbody\n", "field 'public' must be true or false"),
        ("---\ntitle: X\nkind: cv\nlang: en\nauthor: me\n---\nbody\n", "unknown field 'author'"),
        ("---\ntitle: [unclosed\n---\nbody\n", "not valid YAML"),
        ("---\ntitle: X\nkind: cv\nlang: en\n---\n\n", "no text"),
    ],
)
def test_bad_front_matter_names_file_and_field(tmp_path, text, message):
    with pytest.raises(ContentError) as excinfo:
        parse_document(write(tmp_path, "sub/bad.md", text), tmp_path)
    assert str(excinfo.value).startswith("sub/bad.md: ")
    assert message in str(excinfo.value)


def test_duplicate_titles_are_refused(tmp_path):
    write(tmp_path, "a.md", DOC)
    write(tmp_path, "b.md", DOC)
    with pytest.raises(ContentError, match=r"b\.md: field 'title' 'Sample' is already used by a\.md"):
        read_folder(tmp_path)


def test_shipped_sample_is_big_enough_and_bilingual(settings):
    docs = read_folder(settings.TWIN_KNOWLEDGE_DIR)
    public = [d for d in docs if d.public]
    kinds = [d.kind for d in public]
    assert sum(len(d.chunks) for d in public) >= 40
    assert kinds.count("project") >= 4 and kinds.count("article") >= 3
    assert {"cv", "skills", "about", "availability"} <= set(kinds)
    assert {d.lang for d in public} == {"en", "nl"}
    assert any(not d.public for d in docs)  # the draft that must stay private


def test_outline_reads_headings_as_commonmark_does():
    body = ("Intro\r\n\r\nSkills\r\n------\r\n\r\n```\r\n# not a heading\r\n```\r\n\r\n"
            "#tag is text\r\n\r\n## Work ##\r\n")
    lines, headings = outline(body)
    assert [(h.text, h.level) for h in headings] == [("Skills", 2), ("Work", 2)]
    assert lines[headings[0].start:headings[0].end] == ["Skills", "------"]
    assert lines[headings[1].start] == "## Work ##"
