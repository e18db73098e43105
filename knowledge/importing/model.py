"""What every reader of a source returns, and the one error a source can fail with."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.utils.translation import gettext_lazy as _

MAX_FILE_BYTES = 20 * 1024 * 1024  # a PDF or DOCX read at most (an upload too)
# a request's body the proxies let through (deploy/proxy: the admin's Import only): the file and the form around it
MAX_UPLOAD_BODY = MAX_FILE_BYTES + 1024 * 1024

HIDDEN = "hidden"
INSTRUCTION = "instruction"
EXCERPT = 100  # characters of a left-out passage shown in the summary


def excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1] + "…"


# Why a passage of a source was left out (the summary's and the preview's words: owner-facing)
LEFT_OUT = {
    "hidden": _("left out: hidden in the source, not shown to a reader"),
    "instruction": _("left out: reads as an instruction to the assistant"),
}


class SourceError(Exception):
    """A source that cannot be imported; the message is one line for the owner, with what to do."""


@dataclass
class Imported:
    """One document read from a source, before it is written as a knowledge file."""

    source: str  # the address or file it came from (written to the front matter as ``source``)
    title: str
    body: str  # Markdown, headings included, without the title itself
    lang: str = ""  # "en" or "nl"; empty until decided
    kind: str = ""
    kind_sure: bool = True  # False: the guess was close, listed in the summary for the owner
    url: str = ""
    updated: dt.date | None = None
    public: bool = True
    slug: str = ""  # the file's path without ".md", relative to the knowledge folder
    hints: list[str] = field(default_factory=list)  # words of the address or front matter that hint a kind
    person: str = ""  # a CV's name line: whose knowledge this is (files.owner_file)
    # passages not imported, (why, excerpt): why is a key of LEFT_OUT
    left_out: list[tuple[str, str]] = field(default_factory=list)

    @property
    def words(self) -> int:
        return len(self.body.split())


@dataclass(frozen=True)
class Skipped:
    """A page or file of a source that is not the owner's content, or could not be read."""

    source: str
    reason: str
