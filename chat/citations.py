"""The one citation syntax, used in prompts, by the offline provider and by verify."""

from __future__ import annotations

import re

CITATION = re.compile(r"\[source:\s*([^\]\n]+?)\s*\]")


def cite(title: str) -> str:
    return f"[source: {title}]"


def cited_titles(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(1) for m in CITATION.finditer(text)))


def strip_citations(text: str, titles: set[str]) -> str:
    """Remove the citations whose title is in ``titles`` (unknown sources)."""
    cleaned = CITATION.sub(lambda m: "" if m.group(1) in titles else m.group(0), text)
    return re.sub(r"[ \t]{2,}", " ", cleaned).replace(" .", ".").strip()
