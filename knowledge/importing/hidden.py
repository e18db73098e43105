"""What a reader of the source never sees, and what orders the assistant about: both left out.

A page, a Word file or a PDF can carry text a person does not see (a screen-reader-only
paragraph, a hidden run, white or invisible glyphs) and the model would read anyway: each reader
drops it (``visible_html`` here for pages; ``word`` and ``pdf`` for theirs). Every paragraph kept
is then screened with the guards' injection rules (``guards.rules.instructs``): one that reads as
an instruction to the assistant is left out, and both are named in the import's summary and the
admin's preview (``Imported.left_out``).
"""

from __future__ import annotations

import re

from lxml import etree
from lxml import html as lxml_html

from guards.rules import HARD_MAX_CHARS, instructs
from knowledge.importing.model import HIDDEN, INSTRUCTION, excerpt

# A class that hides its element from sight by the common frameworks' names (Bootstrap, Tailwind,
# WordPress, Foundation, HTML5 Boilerplate)
_HIDING_CLASSES = frozenset("sr-only visually-hidden visuallyhidden screen-reader-text screen-reader-only "
                            "show-for-sr element-invisible offscreen".split())
# Hidden unless a responsive class shows it again on wider screens (Tailwind's "hidden md:block",
# Bootstrap's "d-none d-md-block")
_HIDING_UNLESS_SHOWN = frozenset("hidden invisible d-none hide".split())
_SHOWN_AGAIN = re.compile(r":|^d-(sm|md|lg|xl|xxl)-")
_HIDING_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*(hidden|collapse)|opacity\s*:\s*0(\.0*)?\s*(;|$)|font-size\s*:\s*0"
    r"(px|em|rem|pt|%)?\s*(;|$)|clip\s*:\s*rect\(\s*0|clip-path\s*:\s*inset\(\s*50%|"
    r"(left|top|text-indent)\s*:\s*-\d{3,}|(width|height)\s*:\s*[01]px[^;]*;.*overflow\s*:\s*hidden",
    re.IGNORECASE | re.DOTALL)
MAX_STYLE = 200_000  # characters of a <style> block read for the classes it hides
MAX_DECLARATIONS = 2_000  # characters of one style attribute or rule read (the pattern is no parser)
MAX_NAMED = 10  # hidden passages named per document; the rest counted
_CLASS_SELECTOR = re.compile(r"^\s*\.([\w-]+)\s*$")
_MARK = re.compile(r"^\s*(?:[-*+]|\d+\.|#+)\s+")  # a list item's or heading's mark


def visible_html(html: str) -> tuple[str, list[tuple[str, str]]]:
    """The page without its visually hidden elements, and (``HIDDEN``, excerpt) for each that had text."""
    try:
        tree = lxml_html.fromstring(html)
    except (etree.ParserError, ValueError):
        return html, []
    classes = _HIDING_CLASSES | _style_classes(tree)
    dropped: list[tuple[str, str]] = []
    for element in list(tree.iter()):
        if not isinstance(element.tag, str) or element.getparent() is None or not _hidden(element, classes):
            continue
        text = " ".join(element.text_content().split())
        if text:
            dropped.append((HIDDEN, excerpt(text)))
        element.drop_tree()
    if len(dropped) > MAX_NAMED:
        dropped = [*dropped[:MAX_NAMED], (HIDDEN, f"and {len(dropped) - MAX_NAMED} more hidden passages")]
    return lxml_html.tostring(tree, encoding="unicode"), dropped


def _hidden(element, classes: frozenset[str] | set[str]) -> bool:
    if element.tag in ("template",) or element.get("hidden") is not None:
        return True
    if (element.get("aria-hidden") or "").strip().lower() == "true":
        return True
    if element.tag == "input" and (element.get("type") or "").lower() == "hidden":
        return True
    if _HIDING_STYLE.search((element.get("style") or "")[:MAX_DECLARATIONS]):
        return True
    names = set((element.get("class") or "").split())
    if names & classes:
        return True
    return bool(names & _HIDING_UNLESS_SHOWN) and not any(_SHOWN_AGAIN.search(name) for name in names)


def _style_classes(tree) -> set[str]:
    """Classes that the page's own <style> blocks hide (``.note{display:none}``)."""
    found = set()
    for style in tree.iter("style"):
        for rule in (style.text_content() or "")[:MAX_STYLE].split("}"):  # linear: no regex across the block
            selectors, brace, body = rule.rpartition("{")
            if brace and _HIDING_STYLE.search(body[:MAX_DECLARATIONS]):
                for selector in selectors.split(","):
                    match = _CLASS_SELECTOR.match(selector)
                    if match:
                        found.add(match.group(1))
    return found


def screened(body: str) -> tuple[str, list[tuple[str, str]]]:
    """The Markdown body without its paragraphs (and list items) that read as an instruction to
    the assistant, and (``INSTRUCTION``, excerpt) for each left out."""
    kept, left = [], []
    for block in re.split(r"\n\s*\n", body):
        lines = []
        for line in block.split("\n"):
            if line.strip() and _instructs(line):
                left.append((INSTRUCTION, excerpt(_MARK.sub("", line))))
            else:
                lines.append(line)
        rest = "\n".join(lines)
        if rest.strip() and len(lines) > 1 and _instructs(" ".join(rest.split())):  # an order wrapped over lines
            left.append((INSTRUCTION, excerpt(" ".join(rest.split()))))
            continue
        if rest.strip():
            kept.append(rest)
    text = "\n\n".join(kept).strip()
    return (text + "\n" if text else ""), left


def _instructs(text: str) -> bool:
    step = HARD_MAX_CHARS // 2  # overlapping windows: a long paragraph is screened whole
    return any(instructs(text[start:start + HARD_MAX_CHARS]) for start in range(0, max(len(text) - step, 1), step))
