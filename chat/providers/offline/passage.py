"""What the offline twin quotes from: a retrieved passage, and a quote of its sentences."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Passage:
    title: str
    heading: str
    text: str
    rank: int  # position in the tool's results: the retriever's own judgement
    on_topic: bool = False  # chosen for the question's subject (availability), not by a search


@dataclass
class Quote:
    title: str
    heading: str
    sentences: list[str]
