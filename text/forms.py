"""A word's forms: its stem without the inflection, and whether two words are one word in
another form ("studies"/"study", "lives"/"living", a Dutch compound and its head)."""

from __future__ import annotations

import functools

from text.lexicon import shared

# Irregular forms, so "What did she build?" finds "She built ..."; kept as data (``text/data/*.toml
# [forms]``), as the English endings that only look like a Dutch compound's head.
_IRREGULAR = {form: base for base, *forms in shared().groups("forms.irregular") for form in forms}
_NOT_HEADS = shared().words("forms.not_heads")
_COGNATE_ENDINGS = (("ncies", "nt"), ("ncy", "nt"), ("nties", "nt"), ("ntie", "nt"), ("tions", "t"), ("tion", "t"),
                    ("ties", "t"), ("tie", "t"))
_SUFFIXES = ("ies", "ied", "ing", "ers", "ors", "ed", "es", "er", "or", "ly", "en", "de", "te", "s", "e")


def stem(word: str) -> str:
    """A word without its inflection: two words with the same stem are the same word (``same_word``)."""
    return _stem(word)


@functools.lru_cache(maxsize=1 << 16)  # the offline answerer compares every sentence's words with the question's
def _stem(word: str) -> str:
    """A word without its inflection ("studies" -> "study", "speaking" -> "speak", "lived" -> "liv")."""
    word = word.removesuffix("'s")
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    # the same Latin word in both languages: urgency/urgentie, evaluation/evaluatie/evaluated
    for ending, root in _COGNATE_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            return word[: -len(ending)] + root
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= (2 if suffix == "ing" else 3):
            word = word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    return word.rstrip("e")


def same_word(a: str, b: str) -> bool:
    """Two words are the same word in another form: "studies"/"study", "lives"/"living",
    "maintained"/"maintenance", or a Dutch compound and its head ("platformteam"/"team")."""
    if a == b:
        return True
    if _stem(a) == _stem(b):
        return True
    short, long = sorted((a, b), key=len)
    if len(short) >= 6 and long.startswith(short) and len(long) - len(short) <= 4:
        return True  # a derived word: maintain/maintenance, develop/developer
    return compound_of(long, short)


def compound_of(word: str, head: str, *, shortest: int = 4) -> bool:
    """Whether ``word`` is a Dutch compound of ``head`` ("platformteam", "team"): it ends in the
    head, three letters or more before it, a head of ``shortest`` letters or more; a head of four
    letters is not one of the English endings that only look like a word ("rate", "tion")."""
    return (len(head) >= shortest and word.endswith(head) and len(word) - len(head) >= 3
            and (len(head) >= 5 or head not in _NOT_HEADS))
