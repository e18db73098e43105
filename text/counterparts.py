"""Names that differ between English and Dutch: languages, countries and their peoples; and the
words of institutions, degrees and fields that names are translated with (``phrase_groups``).

A visitor asks "Does he speak German?" of a knowledge base that writes "Duits", or "Werkt ze ook
in Duitsland?" of one that writes "Germany". Word vectors cannot be trusted with names (they put
"Vienna" nearest "vitae"), so the common ones are listed here, for any owner: each line is one
name in its English and Dutch forms. Lower case, as ``text.words.words`` reads them.
"""

from __future__ import annotations

from text.lexicon import shared

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


# Institutions, fields, degrees, bodies and the days of the week: the common words a name is
# translated with ("Delft
# University of Technology" is "TU Delft", "Applied Mathematics" "Toegepaste Wiskunde", "VAT"
# "btw"). Each line is one group of forms, English and Dutch, separated by "=". Read by the claim
# check only (``knowledge.claims``): a claim in one language may name what its source names in the
# other. The words of a phrase count as found when another form of it is in the source.
_PHRASES = """
university = universiteit | university of technology = technische universiteit = tu
university of applied sciences = hogeschool | applied sciences = toegepaste wetenschappen
secondary school = high school = middelbare school | institute = instituut | academy = academie
faculty = faculteit | department = afdeling = vakgroep
computer science = informatica = technische informatica | information science = informatiekunde
artificial intelligence = kunstmatige intelligentie | mathematics = wiskunde
applied mathematics = toegepaste wiskunde | statistics = statistiek | physics = natuurkunde
applied physics = technische natuurkunde | chemistry = scheikunde | biology = biologie
economics = economie | econometrics = econometrie | business administration = bedrijfskunde
business economics = bedrijfseconomie | law = rechtsgeleerdheid | medicine = geneeskunde
psychology = psychologie | sociology = sociologie | history = geschiedenis
philosophy = filosofie = wijsbegeerte | linguistics = taalkunde = taalwetenschap | communication = communicatie
electrical engineering = elektrotechniek | mechanical engineering = werktuigbouwkunde
civil engineering = civiele techniek | industrial design = industrieel ontwerpen | architecture = bouwkunde
industrial engineering = technische bedrijfskunde | doctorate = phd = doctoraat
ministry = ministerie | municipality = gemeente | city council = gemeenteraad | province = provincie
chamber of commerce = kamer van koophandel = kvk | tax authority = belastingdienst | hospital = ziekenhuis
foundation = stichting | association = vereniging | cooperative = coöperatie | court = rechtbank | vat = btw
"""


def _days() -> tuple[tuple[str, ...], ...]:
    """Each weekday in English and Dutch with its plural and adverb forms (monday, mondays,
    maandag, maandagen, maandags), from the shared calendar (``text/data/*.toml``)."""
    forms: dict[int, list[str]] = {}
    for lang in ("en", "nl"):
        for key in ("calendar.days", "calendar.days_forms"):
            for form, place in shared().ordered(key, (lang,)).items():
                forms.setdefault(place, []).append(form)
    return tuple(tuple(forms[place]) for place in sorted(forms))


_PHRASE_GROUPS: tuple[tuple[str, ...], ...] = tuple(
    tuple(" ".join(form.split()) for form in group.split("="))
    for line in _PHRASES.strip().splitlines() for group in line.split("|")
) + _days()


def phrase_groups() -> tuple[tuple[str, ...], ...]:
    """The translated forms of institutions, degrees, fields and days (lower case, words joined by
    one space), one tuple per group."""
    return _PHRASE_GROUPS
