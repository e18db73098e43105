"""Names that differ between English and Dutch: languages, countries and their peoples.

A visitor asks "Does he speak German?" of a knowledge base that writes "Duits", or "Werkt ze ook
in Duitsland?" of one that writes "Germany". Word vectors cannot be trusted with names (they put
"Vienna" nearest "vitae"), so the common ones are listed here, for any owner: each line is one
name in its English and Dutch forms. Lower case, as ``text.topics.words`` reads them.
"""

from __future__ import annotations

# languages, then countries and their peoples
_LANGUAGES = """
english engels | dutch nederlands hollands | flemish vlaams | frisian fries | german duits | french frans
spanish spaans | italian italiaans | portuguese portugees | arabic arabisch | turkish turks | polish pools
chinese chinees | japanese japans | korean koreaans | russian russisch | ukrainian oekraïens oekraiens
greek grieks | swedish zweeds | danish deens | norwegian noors | finnish fins | hebrew hebreeuws
persian perzisch farsi | hindi | indonesian indonesisch | romanian roemeens | hungarian hongaars | czech tsjechisch
"""
_PLACES = """
netherlands nederland holland | belgium belgië belgie | germany duitsland | france frankrijk | spain spanje
italy italië italie | portugal | switzerland zwitserland | austria oostenrijk | sweden zweden
norway noorwegen | denmark denemarken | finland | poland polen | ireland ierland | scotland schotland
england engeland | britain brittannië | uk vk | usa vs | america amerika | canada | europe europa
turkey turkije | morocco marokko | egypt egypte | jordan jordanië | syria syrië | lebanon libanon
india | china | japan | indonesia indonesië | suriname | brazil brazilië | mexico | australia australië
european europees europese | american amerikaans amerikaanse | british brits britse | belgian belgisch belgische
dutchman nederlander | dutchmen nederlanders | germans duitsers | americans amerikanen
"""

_COUNTERPARTS: dict[str, frozenset[str]] = {}
for _line in f"{_LANGUAGES}\n{_PLACES}".strip().splitlines():
    for _group in _line.split("|"):
        _names = frozenset(_group.split())
        for _name in _names:
            _COUNTERPARTS[_name] = _names
_LANGUAGE_NAMES = frozenset(_LANGUAGES.split()) - {"|"}


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
