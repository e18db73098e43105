"""The words and patterns the offline twin reads questions and sentences with, in both languages:
the kinds of fact a question asks for and the evidence of each in a sentence, what a "how much"
measures, the words too general or too weak to say what a question is about."""

from __future__ import annotations

import re

_MONTHS = (
    "january february march april may june july august september october november december "
    "januari februari maart mei juni juli augustus oktober "
    "monday tuesday wednesday thursday friday saturday sunday "
    "maandag dinsdag woensdag donderdag vrijdag zaterdag zondag"
)
_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty hundred "
    "hundreds thousand thousands million dozen half twice "
    "twee drie vier vijf zes zeven acht negen tien elf twaalf vijftien twintig dertig veertig vijftig honderd "
    "honderden duizend duizenden miljoen dozijn half helft"
)
_EVIDENCE = {
    "when": re.compile(rf"\b(?:19|20)\d\d\b|\b(?:{'|'.join(_MONTHS.split())})\b|\b(?:since|from|until|vanaf|sinds|tot)"
                       r"\s+\d", re.IGNORECASE),
    "quantity": re.compile(rf"\d|\b(?:{'|'.join(_NUMBER_WORDS.split())})\b|%|€|\$", re.IGNORECASE),
    # a name after a word of place ("in Leiden", "at Brightwater", "aan de TU Delft"), or an institution
    "where": re.compile(r"\b(?:in|at|from|near|to|of|bij|aan|uit|te|naar|van|op)\s+(?:the\s+|de\s+|het\s+)?"
                        r"(?!(?:" + "|".join(m.capitalize() for m in _MONTHS.split()) + r")\b)[A-Z][\w-]+|"
                        r"\b(?:university|universiteit|hogeschool|college|school|city|stad|gemeente|province|provincie|"
                        r"country|land)\b"),
    "who": re.compile(r"(?<=\s)[A-Z][\w-]*[a-z][\w-]*"),  # a name, not the sentence's first word
    # a reason: "because", "so that", or an explanation after a colon
    "why": re.compile(r"\b(?:because|so that|therefore|as a result|which is why|the reason|omdat|want|zodat|"
                      r"doordat|daarom|de reden)\b|:", re.IGNORECASE),
}
_KINDS = [
    ("when", re.compile(r"\b(?:when|what year|which year|since when|how soon|wanneer|"
                        r"(?:in|sinds|vanaf|tot) welk jaar|sinds wanneer|vanaf wanneer|per wanneer|"
                        r"(?:next|this|coming) (?:week|month|year|quarter|spring|summer|"
                        r"autumn|winter)|volgende (?:week|maand)|volgend jaar|binnenkort|soon)\b", re.IGNORECASE)),
    ("quantity", re.compile(r"\b(?:how (?:many|much|big|large|long|old|fast|often|accurate|popular|far|good|well)|"
                            r"what (?:percentage|share|number|age|level)|hoeveel|welke leeftijd|hoe (?:groot|lang|"
                            r"oud|snel|vaak|nauwkeurig|populair|ver|duur|goed))\b", re.IGNORECASE)),
    ("why", re.compile(r"\b(?:why|waarom)\b", re.IGNORECASE)),
    ("who", re.compile(r"\b(?:who|whom|which (?:company|companies|employer|employers|client|clients|organi[sz]ations?)|"
                       r"for whom|wie|voor wie|welke? (?:bedrijf|bedrijven|werkgever|werkgevers|klant|klanten))\b",
                       re.IGNORECASE)),
    ("where", re.compile(r"\b(?:where|which (?:city|country|town|university|school|place)|welke? (?:stad|land|plaats|"
                         r"universiteit|school))\b", re.IGNORECASE)),
]
# What a "how much / how long" question measures: a duration wants a number of hours, days or
# years (or a start: "since 2019", "2019 - present", a year), a price an amount of money, a
# weight a number of kilos. Any number is not an answer: "How long was the site down?" is not
# answered by "9,000 requests an hour". "How long" may ask a length too ("How long is the bridge?").
_UNITS = (r"seconds?|secs?|minutes?|mins?|hours?|hrs?|(?:working |business )?days?|weeks?|months?|years?|"
          r"seconden|minuut|minuten|uur|uren|dag|dagen|werkdagen|week|weken|maand|maanden|jaar|jaren|jr")
_MEASURES = [
    ("duration", re.compile(r"\b(?:how long|hoe lang|how many (?:hours|days|weeks|months|years|minutes)|hoeveel "
                            r"(?:uur|uren|dagen|werkdagen|weken|maanden|jaar|jaren|minuten))\b", re.IGNORECASE)),
    # "What does a keynote cost?", "How much are her fees?", "Wat rekent hij per uur?"; not "How
    # much did the error rate drop?" nor "Wat vraagt de klant?"
    ("money", re.compile(r"\b(?:how much (?:(?:does|do|did|is|are|will|would|was|were)\b.*\b(?:costs?|charges?|fees?|"
                         r"prices?|(?:hourly|day|daily) rates?)|money)|how expensive|what (?:does|do|did|would|will) "
                         r"(?:[\w'-]+ ){1,4}(?:cost|charge|pay|earn)|how much (?:does|do|did|would|will) (?:[\w'-]+ )"
                         r"{1,4}(?:pay|earn)|(?:how much|what) (?:is|was|are|were) (?:[\w'-]+ ){1,3}paid|"
                         r"hoeveel (?:kost|kosten|kostte|geld)|wat (?:kost|kosten|kostte)|"
                         r"(?:hoeveel|wat) (?:rekent|vraagt|vragen|rekenen) (?:ze|zij|hij|je|jij|u)|hoe duur|"
                         # paying and earning are money too: "Wat betaalde de bakkerij?", "Hoeveel verdient ze?"
                         r"(?:hoeveel|wat) (?:betaal|betaalt|betaalde|betaalden|betalen|verdien|verdient|verdiende|"
                         r"verdienen))"
                         # but attention is paid and preference deserved ("verdient de voorkeur"), not money
                         r"\b(?!.*\b(?:attention|a living|voorkeur|aandacht)\b)", re.IGNORECASE)),
    ("weight", re.compile(r"\b(?:how heavy|how much (?:does|do|did) (?:[\w'-]+ ){1,4}weigh|hoe zwaar|hoeveel "
                          r"(?:weegt|woog|wegen))\b", re.IGNORECASE)),
]
_NUMBER = rf"(?:\d[\d.,]*|\b(?:{'|'.join(_NUMBER_WORDS.split())}|anderhalf|several|enkele))"
_LENGTH = re.compile(r"\d[\d.,]*\s*-?\s*(?:km|kilomet(?:er|re)s?|miles?|m|met(?:er|re)s?)\b", re.IGNORECASE)
_MEASURE_EVIDENCE = {
    "duration": re.compile(rf"{_NUMBER}\s*-?\s*(?:{_UNITS})\b|\b(?:19|20)\d\d\b", re.IGNORECASE),
    "money": re.compile(r"[€$£]\s*\d|\d[\d.,]*(?:,-)?\s*(?:k|duizend|thousand|million|miljoen|mln|billion|miljard)?"
                        r"\s*(?:euros?|eur|dollars?|usd|gbp|chf|pounds?)\b|\b(?:euros?|eur|usd|gbp|chf)\s*\d",
                        re.IGNORECASE),
    "weight": re.compile(r"\d[\d.,]*\s*(?:kg|kilos?|kilograms?|kilogrammes?|grams?|gram|tons?|tonnes?|ton|lbs?)\b",
                         re.IGNORECASE),
}
# Dutch "waar" is "where" unless it ends in a preposition: "Waar spreekt ze over?" asks what about.
_WAAR = re.compile(r"\bwaar\b(?!.*\b(?:over|mee|aan|voor|door|van|op|naar|uit|bij|in|toe|om|tegen)\s*\??\s*$)",
                   re.IGNORECASE)
_DEFINE = re.compile(r"^\s*(?:what|who) (?:is|are|was|were) (?!(?:her|his|their|she|he|it)\b|[\w-]+['\u2019]s\b)|"
                     r"\b(?:tell me (?:more )?about|what (?:does|did) \w+ do\b)|^\s*(?:wat|wie) (?:is|zijn|was) "
                     r"(?!(?:haar|zijn|hun|ze|hij)\b)|\bvertel\b|^\s*wat voor\b", re.IGNORECASE)
_FRAME_WORDS = {
    "when": {"year", "years", "date", "month", "week", "day", "time", "next", "soon", "jaar", "datum", "maand",
             "dag", "tijd", "volgende", "volgend", "binnenkort"},
    "where": {"city", "country", "place", "town", "stad", "land", "plaats"},
    "quantity": {"number", "amount", "percentage", "big", "large", "many", "much", "long", "old", "fast", "often",
                 "accurate", "popular", "far", "expensive", "good", "well", "age", "level", "aantal", "hoeveelheid",
                 "groot", "lang", "oud", "snel", "vaak", "nauwkeurig", "populair", "ver", "duur", "goed", "leeftijd"},
}
_WEAK_WORDS = frozenset(
    "use uses used using get gets got make makes made take takes took know knows knew like likes think thinks "
    "gebruikt gebruiken gebruikte maakt maken maakte doet doen deed weet weten vindt vinden "
    "getting going obtain obtained gotten krijgt krijgen kreeg kregen gekregen haalt halen haalde gehaald "
    "behaalt behalen behaalde behaalden behaald "
    # "let" / "laten": having something done ("Liet ze het rapport nakijken?") names nothing;
    # not "laat" itself, which is also "late" ("Is ze vaak te laat?")
    "let lets letting laten liet lieten gelaten".split()
)
# Words too general to say what a question is about, or to justify quoting a second sentence.
_GENERAL_WORDS = _WEAK_WORDS | frozenset(
    "work works worked working tell call called now currently moment still ever today anything something any "
    "hold holds held give gives gave have has do does did done go goes went come year years "
    "werk werkt werken werkte gewerkt vertel heet noemt nu momenteel nog ooit tegenwoordig eigenlijk iets "
    "gedaan geeft geven gaf heeft hebben doet doen deed gaat gaan ging gingen gegaan jaar jaren "
    # words that place a question in time or against something else, but name nothing
    "other another others new recent recently lately andere ander anders nieuw nieuwe onlangs recent "
    "laatst "
    # asking for examples names none: "Kun je een paar voorbeelden noemen van klanten ...?"
    "example examples mention voorbeeld voorbeelden noem noemen "
    # coming and going say how, not what ("Zijn reiskosten inbegrepen of komen die erbij?" is not
    # answered by "Daarna kom ik kijken")
    "come comes came coming komen komt kwam kwamen gekomen "
    # "just", "simply": how, not what ("Kan ze het niet gewoon overnemen?")
    "simply gewoon simpelweg "
    # "weer" is "again" here (and "weather", which no owner's page answers either)
    "weer".split()
)
# A sentence that speaks of the document itself rather than of the owner.
META = re.compile(r"\b(?:this|these) (?:cv|page|pages|document|article|overview|section|site)\b|\ban overview of\b|"
                   r"\ban article by\b|\bdeze (?:pagina|tekst|cv|sectie)\b|\been overzicht van\b|"
                   r"\bin het (?:nederlands|engels)\b", re.IGNORECASE)
_ANSWER_TYPE = re.compile(r"\b(?:which|what|welke?|wat voor(?: een)?)\s+(?!(?:is|are|was|were|does|did|do|has|have|"
                          r"kind|sort|type|zijn|heeft|doet|soort)\b)([a-z][\w-]{2,})", re.IGNORECASE)
# "How many students ...?": the thing counted, which the number in an answer counts
_COUNTED = re.compile(r"\b(?:how many|hoeveel)\s+(?!(?:of|van|de|het|the|times|keer|keren|is|are|was|were|do|does|"
                      r"did|has|have|had|will|would|can|could|heeft|hebben|zijn|kost|kosten|een|a|an|"
                      r"zal|zou|kan|kun)\b)([^\W\d_][\w-]{2,})", re.IGNORECASE)
# a number and the next two words ("81% of students", "62 machines"), not "one of the ..."
_COUNT = re.compile(rf"(?:\d[\d.,]*\s?%?|\b(?:{'|'.join(_NUMBER_WORDS.split())})\b)(?!\s+(?:of|van)\s+(?:the|de|het|"
                    r"them|hen|those|these|die|deze)\b)((?:\s+[^\W\d_][\w'-]*){1,2})", re.IGNORECASE)


# "besides English", "andere talen dan Engels": the languages asked for are the others
_BESIDES = re.compile(r"\b(?:besides|other|others|apart from|except|beyond|naast|behalve|buiten|andere|anders)\b"
                      r"(?P<rest>(?:\W+\w+){1,4})", re.IGNORECASE)


# Words that place what is asked before or after something else ("What did she do before that?"):
# a question of nothing else asks about one time, which its own words do not say.
THEN = re.compile(r"\b(?:before|after|earlier|previously|afterwards|daarvoor|hiervoor|daarna|hierna|ervoor|erna|"
                  r"eerder|vroeger|toen)\b", re.IGNORECASE)
# Phrases that place a question in time and name nothing ("de laatste tijd" is "lately").
_TIME_PHRASES = re.compile(r"\b(?:de laatste tijd|op dit moment|op het moment|these days|at the moment|"
                           r"at present|right now|for now)\b", re.IGNORECASE)
