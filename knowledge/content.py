"""Reading the owner's Markdown files: front matter, validation and chunking per heading.

Front matter is read by python-frontmatter (YAML, safe loader); the body is parsed by
markdown-it-py, the same CommonMark parser that renders the public source pages and, as its
JavaScript original (static/vendor), the chat's answers: a heading is what CommonMark calls one
(ATX or setext, never a line inside a ``` or ~~~ fence).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import frontmatter
import yaml
from markdown_it import MarkdownIt

KINDS = ("cv", "project", "skills", "about", "article", "availability", "faq")
LANGS = ("en", "nl")
_MARKDOWN = MarkdownIt("commonmark")
_FRONT_MATTER = frontmatter.YAMLHandler()
# ``source`` and ``imported``: where ``manage.py import_knowledge`` read the file from, and the hash
# of what it wrote (knowledge/importing/files.py); the sync reads neither.
_ALLOWED_KEYS = {"title", "kind", "lang", "url", "updated", "public", "source", "imported"}


class ContentError(ValueError):
    """A content file the sync refuses; the message names the file and the field."""


@dataclass(frozen=True)
class Chunk:
    ordinal: int
    heading_path: str
    text: str
    embed_text: str  # what gets embedded and hashed: title, heading path and text
    content_hash: str


@dataclass
class SourceDocument:
    path: str
    title: str
    kind: str
    lang: str
    url: str
    updated: dt.date | None
    public: bool
    body: str
    content_hash: str
    chunks: list[Chunk] = field(default_factory=list)


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _front_matter(raw: str, rel: str) -> tuple[dict, str]:
    if not _FRONT_MATTER.detect(raw):
        raise ContentError(f"{rel}: missing YAML front matter (the file must start with '---')")
    try:
        header, body = _FRONT_MATTER.split(raw)
    except ValueError:
        raise ContentError(f"{rel}: front matter is not closed with a '---' line") from None
    try:
        meta = _FRONT_MATTER.load(header) or {}
    except yaml.YAMLError as exc:
        raise ContentError(f"{rel}: front matter is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise ContentError(f"{rel}: front matter must be a mapping of fields")
    return meta, body


def _field(meta: dict, name: str, rel: str) -> str:
    value = meta.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ContentError(f"{rel}: field '{name}' is required and must be a non-empty string")
    return value.strip()


def parse_document(path: Path, root: Path) -> SourceDocument:
    rel = path.relative_to(root).as_posix()
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ContentError(f"{rel}: not UTF-8 text") from exc
    return parse_text(raw, rel)


def parse_text(raw: str, rel: str) -> SourceDocument:
    """A knowledge file's text as the sync reads it (``rel``: its path in the folder), or ContentError."""
    if rel.startswith("taught/"):  # where the admin's taught answers live (knowledge.services)
        raise ContentError(f"{rel}: the folder 'taught/' is reserved for answers taught in the admin")
    meta, body = _front_matter(raw, rel)
    unknown = set(meta) - _ALLOWED_KEYS
    if unknown:
        raise ContentError(f"{rel}: unknown field '{sorted(unknown)[0]}' (allowed: {', '.join(sorted(_ALLOWED_KEYS))})")
    title = _field(meta, "title", rel)
    kind = _field(meta, "kind", rel)
    if kind not in KINDS:
        raise ContentError(f"{rel}: field 'kind' must be one of {', '.join(KINDS)}; got {kind!r}")
    lang = _field(meta, "lang", rel)
    if lang not in LANGS:
        raise ContentError(f"{rel}: field 'lang' must be one of {', '.join(LANGS)}; got {lang!r}")
    url = meta.get("url") or ""
    if not isinstance(url, str):
        raise ContentError(f"{rel}: field 'url' must be a string")
    url = url.strip()
    # Shown to visitors as a link: an absolute http(s) address or a path on this site, nothing
    # else (no javascript:, data: or protocol-relative //host links).
    if url and not (re.fullmatch(r"https?://[^\s<>\"']+", url) or re.fullmatch(r"/(?!/)[^\s<>\"']*", url)):
        raise ContentError(f"{rel}: field 'url' must be an http(s) address or a site path starting with /; got {url!r}")
    updated = meta.get("updated")
    if updated is not None and not isinstance(updated, dt.date):
        try:
            updated = dt.date.fromisoformat(str(updated))
        except ValueError as exc:
            raise ContentError(f"{rel}: field 'updated' must be a date (YYYY-MM-DD); got {updated!r}") from exc
    public = meta.get("public", True)
    if not isinstance(public, bool):
        raise ContentError(f"{rel}: field 'public' must be true or false; got {public!r}")
    if not body.strip():
        raise ContentError(f"{rel}: the document has no text after the front matter")
    doc = SourceDocument(
        path=rel, title=title, kind=kind, lang=lang, url=url.strip(), updated=updated,
        public=public, body=body.strip() + "\n", content_hash=sha256(raw),
    )
    doc.chunks = chunk_markdown(title, doc.body)
    return doc


@dataclass(frozen=True)
class Heading:
    start: int  # its first line, from 0
    end: int  # the line after it (a setext heading has two)
    level: int
    text: str


def outline(body: str) -> tuple[list[str], list[Heading]]:
    """A Markdown body's lines (every line end read as ``\\n``) and its headings, as CommonMark
    reads them: the one heading reader of the sync and the importer. Top-level headings only: a
    "# " inside a list item or a quote is part of that block."""
    body = body.replace("\r\n", "\n").replace("\r", "\n")
    tokens = _MARKDOWN.parse(body)
    return body.split("\n"), [Heading(t.map[0], t.map[1], int(t.tag[1]), tokens[i + 1].content.strip())
                              for i, t in enumerate(tokens) if t.type == "heading_open" and t.level == 0 and t.map]


def chunk_markdown(title: str, body: str) -> list[Chunk]:
    """Split per heading; each chunk keeps the document title and its heading path, and its text
    as the owner wrote it (the lines between one heading and the next)."""
    lines, headings = outline(body)
    sections: list[tuple[list[str], int, int]] = [([], 0, headings[0].start if headings else len(lines))]
    stack: list[tuple[int, str]] = []
    for n, heading in enumerate(headings):
        stack = [(lvl, h) for lvl, h in stack if lvl < heading.level] + [(heading.level, heading.text)]
        stop = headings[n + 1].start if n + 1 < len(headings) else len(lines)
        sections.append(([h for _, h in stack], heading.end, stop))
    chunks: list[Chunk] = []
    for path, start, stop in sections:
        text = "\n".join(lines[start:stop]).strip()
        if not text:
            continue
        heading_path = " > ".join(path)
        embed_text = f"{title}\n{heading_path}\n{normalize(text)}" if heading_path else f"{title}\n{normalize(text)}"
        chunks.append(Chunk(
            ordinal=len(chunks), heading_path=heading_path, text=text,
            embed_text=embed_text, content_hash=sha256(embed_text),
        ))
    return chunks


def read_folder(root: Path) -> list[SourceDocument]:
    """Parse every ``*.md`` under ``root``; raise on the first bad file, before any write."""
    if not root.is_dir():
        raise ContentError(f"{root}: the knowledge folder does not exist (TWIN_KNOWLEDGE_DIR)")
    docs = [parse_document(p, root) for p in sorted(root.rglob("*.md"))]
    seen: dict[str, str] = {}
    for doc in docs:
        if doc.title in seen:
            raise ContentError(f"{doc.path}: field 'title' {doc.title!r} is already used by {seen[doc.title]}")
        seen[doc.title] = doc.path
    return docs
