"""The semantic screen: a question's embedding compared with a bank of attack and benign
exemplars written by the team (``guards/data/exemplars.yaml``). No generative model is involved,
so there is nothing to talk round: the score is arithmetic on vectors.

Decision rule: ``attack`` is the mean cosine of the two nearest attack exemplars, ``benign`` the
cosine of the nearest benign one; a question is shielded (answered without the model,
``guards.verdicts``; it never refuses) when ``attack - benign >= margin``.
Relative, not absolute: e5's cosines bunch together (unrelated texts score 0.70-0.76), so only
"closer to the attacks than to anything a visitor asks" separates. The margin is calibrated on
the labelled set ``evals/data/guards.yaml`` (``manage.py screen_input --calibrate``), see
docs/GUARDS.md.

Some messages are not judged at all, by their structure rather than by a higher bar: a vector of
one or two words ("prima", "alles klar") says nothing of intent (fewer than ``MIN_WORDS``), and
a message that gives a contact detail or an identifier with a few words around it ("Reach me on
020 555 0142", "the REF-2031-0077 parcel is late") lands near some exemplar by chance
(``identifier_message``). The pattern rules read both. Words are runs of two letters or more
outside links, e-mail addresses and tokens with digits: numbers, codes and emoji are no words.
On the team's and the shared sets no attack under six words was caught by the semantic screen
alone (docs/GUARDS.md).

A long text gives it little to go on too, the other way round: one vector averages many
sentences, so its margin says how the whole message sounds, not whether one sentence in it is an
instruction. From ``LONG_FROM`` words the margin rises by up to ``LONG_EXTRA`` at ``LONG_FULL``.
On the shared corpus no attack over 100 words was caught by the semantic screen alone (the
patterns caught all six), while it refused 5 of 26 long benign messages of the team's
real-traffic set (docs/GUARDS.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from text.words import PLAIN

EXEMPLARS = Path(__file__).resolve().parent / "data" / "exemplars.yaml"
MIN_WORDS = 3
IDENTIFIER_WORDS = 10
LONG_FROM, LONG_FULL, LONG_EXTRA = 40, 120, 0.01
# Addresses, links and anything with a digit in it (phone numbers, codes, versions, hashes) are
# names of things, not words a request is made of.
_NOT_WORDS = re.compile(r"\S*(?:://|www\.|@|\d)\S*")


def word_count(text: str) -> int:
    return len(PLAIN.findall(_NOT_WORDS.sub(" ", text)))


# What a visitor gives rather than asks, by its shape: a link or an e-mail address; a run of digit
# groups joined as numbers are written ("020 555 0142", "+44 20 7946 0321", "REF-2031-0077") with
# five digits or more, one group of three or more among them, or two after a "#" ("ticket #17"); a date
# written with separators; a version (1.2.3, v2.3); a postcode ("1234 XY"); an issue key
# ("OPS-4411"). A year, a small count, a decimal or a name with a digit in it ("2024", "top 3",
# "3.14159", "base64", "Model-3 roadmap", "1 2 3 4 5") is none.
_LINK = re.compile(r"(?:https?://|www\.)\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.IGNORECASE)
_DIGIT_RUN = re.compile(r"(?<![\w.\-])[#+]?\(?\d+(?:[\s().\-/]{1,2}\d+)*")
_DECIMAL = re.compile(r"\d+[.,]\d+")
_DATE = re.compile(r"\d{1,4}[./-]\d{1,2}[./-]\d{2,4}")
_VERSION = re.compile(r"\bv?\d+\.\d+\.\d+\b|\bv\d+(?:\.\d+)+\b", re.IGNORECASE)
_CODE = re.compile(r"\b\d{4} ?[A-Z]{2}\b|\b[A-Z][A-Z0-9]{1,9}-\d{2,}\b")


def has_identifier(text: str) -> bool:
    """Whether ``text`` gives a contact detail or an identifier (see the shapes above)."""
    if _LINK.search(text) or _CODE.search(text) or _VERSION.search(text):
        return True
    for match in _DIGIT_RUN.finditer(text):
        run = match.group(0).strip()
        if _DECIMAL.fullmatch(run):  # 3.14159, 1,5
            continue
        groups = [len(g) for g in re.findall(r"\d+", run)]
        if (sum(groups) >= 5 and max(groups) >= 3) or (run.startswith("#") and sum(groups) >= 2) \
                or _DATE.fullmatch(run.strip("#+( ")):
            return True
    return False


def identifier_message(text: str) -> bool:
    """A message that gives things rather than asks: a contact detail or an identifier (a phone
    number, an e-mail or web address, an order, invoice or ticket number, a version, a date) with
    at most ``IDENTIFIER_WORDS`` words around it ("Reach me on 020 555 0142", "Parcel 55310,
    reference REF-2031-0077 arrived torn"). The semantic screen does not judge these: a vector of a few
    words and a code lands near some exemplar by chance. The pattern rules still read them."""
    return has_identifier(text) and word_count(text) <= IDENTIFIER_WORDS


def load_exemplars(path: Path = EXEMPLARS) -> tuple[list[str], list[str]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return list(data["attack"]), list(data["benign"])


@dataclass(frozen=True)
class SemanticScore:
    attack: float
    benign: float
    nearest_attack: str
    nearest_benign: str

    @property
    def margin(self) -> float:
        return self.attack - self.benign


class ExemplarScreen:
    def __init__(self, attack_texts: list[str], attack_vectors: np.ndarray, benign_texts: list[str],
                 benign_vectors: np.ndarray, margin: float) -> None:
        self.attack_texts, self.benign_texts = attack_texts, benign_texts
        self.attack_vectors = np.asarray(attack_vectors, dtype=np.float32)
        self.benign_vectors = np.asarray(benign_vectors, dtype=np.float32)
        self.margin = margin

    def score(self, vector: np.ndarray) -> SemanticScore:
        """Cosines (vectors are L2-normalised, so a dot product)."""
        vector = np.asarray(vector, dtype=np.float32)
        attack = self.attack_vectors @ vector
        benign = self.benign_vectors @ vector
        top = np.sort(attack)[-2:]
        return SemanticScore(float(top.mean()), float(benign.max()), self.attack_texts[int(attack.argmax())],
                             self.benign_texts[int(benign.argmax())])

    def required_margin(self, text: str) -> float:
        """The calibrated margin, raised for a text of many words (see the module's docstring)."""
        return self.margin + long_extra(text)

    def blocks(self, score: SemanticScore, text: str | None = None) -> bool:
        """``text`` None: the calibrated margin as it is (the calibration's own use)."""
        if text is None:
            return score.margin >= self.margin
        return judged(text) and score.margin >= self.required_margin(text)


def long_extra(text: str) -> float:
    """What a long text's margin must exceed the calibrated one by (see the module's docstring)."""
    return LONG_EXTRA * min(1.0, max(0, word_count(text) - LONG_FROM) / (LONG_FULL - LONG_FROM))


def judged(text: str) -> bool:
    """Whether the semantic screen judges a text at all (see the module's docstring)."""
    return word_count(text) >= MIN_WORDS and not identifier_message(text)
