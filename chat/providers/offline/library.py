"""The knowledge base as the offline twin reads it: from the system prompt, like a hosted model.

The prompt carries the owner's public documents (``knowledge.prefix``): each as ``# Title``, its
``[source: ...]`` line, a ``[kind: ...; language: ...]`` line and the body. The offline twin uses
this to answer the questions a search cannot: "What does she do?" (the profile) and "Which
projects has she done?" (every document of a kind, one line each).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chat.providers.offline.lexicon import META
from knowledge.prefix import holds_everything, prefix_blocks
from text.sentences import split_sentences

_HEADING = re.compile(r"^#{1,6}\s.*$", re.MULTILINE)


@dataclass(frozen=True)
class Document:
    title: str
    kind: str
    lang: str
    body: str

    def opening(self, limit: int = 1, *, of_itself: bool = False) -> list[str]:
        """The first sentences of the text before the first heading, else of the whole body.

        A sentence about the page itself ("This page sums up ...", "An article by ... about ...")
        says nothing of the owner, so a profile skips it; ``of_itself``: the opening describes
        the document in a list of documents, which such a sentence does best."""
        intro = _HEADING.split(self.body, maxsplit=1)[0]
        for text in (intro, _HEADING.sub("", self.body)):
            found = [s for s in split_sentences(text) if of_itself or not META.search(s)][:limit]
            if found:
                return found
        return []


def documents(messages: list[dict]) -> list[Document]:
    """The documents in the request's system prompt, in its order (empty when it has none)."""
    return [Document(*block) for block in prefix_blocks(_system(messages))]


def complete(messages: list[dict]) -> bool:
    """Whether the system prompt holds the whole knowledge base (not only the part that fits)."""
    return holds_everything(_system(messages))


def _system(messages: list[dict]) -> str:
    """The request's system prompt ("" when it has none)."""
    return next((str(m.get("content") or "") for m in messages if m.get("role") == "system"), "")


def of_kind(docs: list[Document], kind: str, lang: str) -> list[Document]:
    """The documents of a kind; of two in different languages with the same kind and opening
    facts, the visitor's language first (both are listed: they may differ)."""
    chosen = [d for d in docs if d.kind == kind]
    return sorted(chosen, key=lambda d: d.lang != lang)


def profile(docs: list[Document], lang: str) -> Document | None:
    """The owner's profile: the about page in the visitor's language, else any about page, else
    the CV."""
    for kind in ("about", "cv"):
        found = of_kind(docs, kind, lang)
        if found:
            return found[0]
    return None
