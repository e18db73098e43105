"""Word lists kept as data, one file per language (``data/en.toml``, ``data/nl.toml``), read by
one reader. The shared vocabulary lives here: question words, the ways a visitor refers to the
owner, months and days (their names in order, so their numbers too), numbers written as words
with their values, units of time. A reader of its own (the
offline answerer) keeps its lists in a folder of the same shape and reads them with ``Lexicon``.

A key's value is a string of words separated by white space; ``_`` joins the words of a phrase
("how_long"), ``/`` the forms of one place in an ordered list ("sep/sept": ``ordered``), ``:`` a
word's value ("dozen:12": ``values``). A key (or a whole file) missing for one language is an
empty list there.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "nl", "de")
# The twin's languages: what a reader gets unless it asks for more. German is only for the guards
# (visitors paste German attacks); "war" and "hat" are English words too.
TWIN_LANGUAGES = ("en", "nl")


class Lexicon:
    """The word lists of one folder, per language and merged."""

    def __init__(self, folder: Path) -> None:
        self._lists: dict[str, dict[str, tuple[str, ...]]] = {}
        self._places: dict[str, dict[str, tuple[tuple[str, ...], ...]]] = {}
        self._values: dict[str, dict[str, dict[str, int]]] = {}
        for lang in LANGUAGES:
            path = folder / f"{lang}.toml"
            data = tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
            self._places[lang], self._values[lang] = {}, {}
            for key, value in _flat(data).items():
                places = [tuple(form.replace("_", " ") for form in place.split("/")) for place in value.split()]
                self._values[lang][key] = {form.partition(":")[0]: int(form.partition(":")[2])
                                           for place in places for form in place if ":" in form}
                self._places[lang][key] = tuple(tuple(form.partition(":")[0] for form in place) for place in places)
            self._lists[lang] = {key: tuple(form for place in places for form in place)
                                 for key, places in self._places[lang].items()}

    def of(self, key: str, lang: str) -> tuple[str, ...]:
        """One language's list (``()`` when that language has none)."""
        if not any(key in lists for lists in self._lists.values()):
            raise KeyError(key)
        return self._lists[lang].get(key, ())

    def ordered(self, key: str, langs: tuple[str, ...] = TWIN_LANGUAGES) -> dict[str, int]:
        """An ordered list as each form's place, from 1: "january" 1, "jan" 1 (from
        ``months_short``), "sept" 9 (written "sep/sept"), in the twin's languages (or ``langs``)."""
        self.of(key, langs[0])  # an unknown key is a KeyError
        return {form: place for lang in langs
                for place, forms in enumerate(self._places[lang].get(key, ()), 1) for form in forms}

    def values(self, key: str, langs: tuple[str, ...] = TWIN_LANGUAGES) -> dict[str, int]:
        """The words of a list written with a value ("twelve:12 dozen:12 half") and their values."""
        self.of(key, langs[0])
        return {word: value for lang in langs for word, value in self._values[lang].get(key, {}).items()}

    def groups(self, key: str, langs: tuple[str, ...] = TWIN_LANGUAGES) -> tuple[tuple[str, ...], ...]:
        """A list's places, each the forms written together ("speak/spoke/spoken"), in the twin's
        languages (or ``langs``)."""
        self.of(key, langs[0])
        return tuple(place for lang in langs for place in self._places[lang].get(key, ()))

    def keys(self, prefix: str) -> list[str]:
        """The keys, in any language, that start with ``prefix`` ("opposites."), sorted."""
        return sorted({key for lists in self._lists.values() for key in lists if key.startswith(prefix)})

    def words(self, key: str, langs: tuple[str, ...] = TWIN_LANGUAGES) -> frozenset[str]:
        """A list in the twin's languages (or ``langs``), as one set."""
        return frozenset(w for lang in langs for w in self.of(key, lang))

    def alternation(self, *keys: str, langs: tuple[str, ...] = TWIN_LANGUAGES) -> str:
        """The lists' words and phrases as a regular expression's group, longest first (so a
        phrase wins over its first word), each escaped; a phrase's space matches any white space."""
        found = {w for key in keys for w in self.words(key, langs)}
        escaped = (re.escape(w).replace(r"\ ", r"\s+") for w in sorted(found, key=lambda w: (-len(w), w)))
        return "(?:" + "|".join(escaped) + ")"


def _flat(data: dict, prefix: str = "") -> dict[str, str]:
    """``[owner] subjects = ...`` as ``owner.subjects``."""
    out: dict[str, str] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out |= _flat(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


@cache
def shared() -> Lexicon:
    """The vocabulary every reader shares (``text/data``)."""
    return Lexicon(Path(__file__).resolve().parent / "data")


def question_words() -> frozenset[str]:
    """Words that open or frame a question and carry no content: "what", "where", "hoeveel",
    and the verbs a question starts with ("does", "heeft")."""
    lexicon = shared()
    return lexicon.words("question.words") | lexicon.words("question.auxiliaries")
