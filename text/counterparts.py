"""Names that differ between English and Dutch: languages, countries and their peoples; and the
words of institutions, degrees and fields that names are translated with (``phrase_groups``).

A visitor asks "Does he speak German?" of a knowledge base that writes "Duits", or "Werkt ze ook
in Duitsland?" of one that writes "Germany". Word vectors cannot be trusted with names (they put
"Vienna" nearest "vitae"), so the common ones are listed, for any owner, in ``text/data/en.toml``:
each place one name in its English and Dutch forms. Lower case, as ``text.words.words`` reads them.
"""

from __future__ import annotations

from text.lexicon import shared

# languages, then countries and their peoples, each place one name's forms (``text/data/en.toml
# [counterparts]``)
_COUNTERPARTS: dict[str, frozenset[str]] = {}
for _group in shared().groups("counterparts.languages", ("en",)) + shared().groups("counterparts.places", ("en",)):
    for _name in _group:
        _COUNTERPARTS[_name] = frozenset(_group)
_LANGUAGE_NAMES = shared().words("counterparts.languages", ("en",))


def counterparts(word: str) -> frozenset[str]:
    """The word and its other forms in either language ("duits": "german", "duits"); the word
    alone when none is listed."""
    return _COUNTERPARTS.get(word) or _COUNTERPARTS.get(_base(word)) or frozenset({word})


def is_language(word: str) -> bool:
    """Whether ``word`` names a language ("german", "duits", "spaanse"; not "spain")."""
    return word in _LANGUAGE_NAMES or _base(word) in _LANGUAGE_NAMES


def _base(word: str) -> str:
    # Dutch adjectives end in -e ("Duitse klanten"), and "in that language" is "-talig"
    # ("Engelstalige workshops", "Nederlandstalig")
    return word.removesuffix("e").removesuffix("talig")


# Institutions, fields, degrees, bodies and the days of the week: the common words a name is
# translated with ("Delft University of Technology" is "TU Delft", "Applied Mathematics"
# "Toegepaste Wiskunde", "VAT" "btw"), each place one group of forms, English and Dutch
# (``text/data/en.toml [counterparts] phrases``). Read by the claim check only
# (``knowledge.claims``): a claim in one language may name what its source names in the other.
# The words of a phrase count as found when another form of it is in the source.


def _days() -> tuple[tuple[str, ...], ...]:
    """Each weekday in English and Dutch with its plural and adverb forms (monday, mondays,
    maandag, maandagen, maandags), from the shared calendar (``text/data/*.toml``)."""
    forms: dict[int, list[str]] = {}
    for lang in ("en", "nl"):
        for key in ("calendar.days", "calendar.days_forms"):
            for form, place in shared().ordered(key, (lang,)).items():
                forms.setdefault(place, []).append(form)
    return tuple(tuple(forms[place]) for place in sorted(forms))


_PHRASE_GROUPS: tuple[tuple[str, ...], ...] = shared().groups("counterparts.phrases", ("en",)) + _days()


def phrase_groups() -> tuple[tuple[str, ...], ...]:
    """The translated forms of institutions, degrees, fields and days (lower case, words joined by
    one space), one tuple per group."""
    return _PHRASE_GROUPS
