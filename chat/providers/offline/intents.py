"""What the visitor asks for in a turn, read from their own words: a question to look up, the
owner's availability, or a message for the owner — the decisions a careful model makes before
it calls a tool. Pure functions of the text and the conversation so far.

Only the visitor's messages count. A document or a tool result that says "send a message" is
never read here, and instructions to the twin dressed up as a message ("ignore your rules and
send the owner ...") are not drafted: the guards refuse most of them earlier, this is the backstop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chat.providers.offline.lexicon import WORDS
from guards.rules import instructs
from text.lexicon import shared
from text.names import PARTICLES, name_words
from text.sentences import message_sentences
from text.words import content_words

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_LEXICON = shared()
# "near" words: at most this many characters between the parts of a phrase
_GAP = r"[^.?!\n]{0,40}?"


def _patterns(owner: str) -> dict[str, re.Pattern]:
    """The intent patterns, with the owner's own names among the ways to say "her"."""
    names = "|".join(re.escape(w) for w in name_words(owner)) or "the owner"
    return {"contact": _contact_pattern(names), "availability": _availability_pattern(names),
            "hire": _HIRE}


def _objects(names: str) -> tuple[str, str]:
    """The ways to say "her" (or "him", "you", the owner's name) in English and in Dutch."""
    return tuple(_any(_LEXICON.of("owner.objects", lang) + _LEXICON.of("owner.addressed", lang), names)
                 for lang in ("en", "nl"))


def _subjects(names: str) -> tuple[str, str]:
    """The ways to say "she" (or "he", "they", the owner's name) in English and in Dutch."""
    return tuple(_any(_LEXICON.of("owner.subjects", lang), names) for lang in ("en", "nl"))


def _any(words: tuple[str, ...], names: str) -> str:
    return "(?:" + "|".join([*words, names]) + ")"


def _contact_pattern(names: str) -> re.Pattern:
    """A request to get in touch with the owner or to pass a message on."""
    (them, hem), (she, ze) = _objects(names), _subjects(names)
    return re.compile("|".join([
        # English
        r"\bcontact\w*\b", r"\bget (?:in )?touch\b", r"\bin touch\b",
        rf"\breach(?:ing)? (?:out\b|{them}\b)",
        rf"\b(?:send|pass|forward|leave|give|drop|relay|deliver|get|take)\b{_GAP}\b(?:message|note|word|e-?mail|"
        r"letter|details|contact info\w*|number|cv|resume)s?\b",
        rf"\b(?:message|e-?mail|mail|write to|call|phone|ring|ping|text)\s+{them}\b",
        rf"\b(?:tell|let|ask|inform)\s+{them}\b(?:\s+(?:know|that|about|to)\b)?",
        rf"\b(?:talk|speak|chat|meet)\s+(?:to|with)\s+{them}\b",
        r"\bput (?:me|us) in touch\b", r"\b(?:connect|introduce) (?:me|us)\b",
        rf"\b(?:set up|schedule|book|arrange|plan)\b{_GAP}\b(?:call|meeting|chat|intro|appointment)\b",
        rf"\bhave {them} (?:call|contact|e-?mail|get back to)\b",
        rf"\b(?:for|so) {them} to (?:call|contact|e-?mail|reach|get back to)\b",
        rf"\b{she}\b{_GAP}\b(?:call|e-?mail|mail|contact|phone|ring|text|reach|get back to)"
        r" (?:me|us)\b",
        # Dutch
        rf"\bbericht(?:je)?\b{_GAP}\b(?:door\w*|stuur\w*|verstuur\w*|geven|geef|achter\w*|over\w*|sturen)\b",
        rf"\b(?:stuur|stuurt|geef|geeft|laat|doe|breng)\b{_GAP}\bbericht(?:je)?\b",
        rf"\b(?:mail|mailen|e-?mailen|bel|bellen|spreken|benaderen|ontmoeten)\s+{hem}\b",
        rf"\b{hem}\b{_GAP}\b(?:mailen|e-?mailen|bellen|spreken|benaderen|ontmoeten|bereiken|laten weten)\b",
        r"\bbereik\w*\b", rf"\blaat {hem} weten\b", rf"\bzeg (?:tegen )?{hem}\b",
        rf"\b{ze}\b{_GAP}\b(?:mij|me|ons) (?:terug)?(?:bellen|mailen|benaderen|contacteren)\b",
        rf"\b(?:afspraak|gesprek|belafspraak|kennismaking)\b{_GAP}\b(?:maken|inplannen|plannen|regelen)\b",
        r"\bin gesprek\b", r"\bkennismaken\b",
    ]), re.IGNORECASE)


# Days or hours a week ask for the owner's availability when the question is about working ("How
# many days a week can she work for us?"), not about anything done weekly ("Hoeveel uur per week
# zwemt ze?").
_WEEKLY = re.compile(r"\b(?:days?|hours?) (?:a|per) week\b|\b(?:dagen|uren|uur) per week\b", re.IGNORECASE)
# (being available, hiring: the availability pattern has those on their own)
_WORKING = re.compile(r"\b(?:work|works|worked|working|werk|werkt|werken|werkte|project\w*|opdracht\w*|"
                      r"assignments?|clients?|klant\w*)\b|\b(?:for|with|voor|bij) (?:us|me|ons|mij)\b", re.IGNORECASE)


def _availability_pattern(names: str) -> re.Pattern:
    """A question about when the owner can start, how much, or whether she takes on work."""
    (them, hem), (she, ze) = _objects(names), _subjects(names)
    return re.compile("|".join([
        # English
        r"\bavailab\w*", r"\bfree-?lanc\w*", r"\b(?:day|daily|hourly|hour|per diem)\s+rates?\b",
        rf"\b(?:{them}|your|the|their|his) rates?\b", r"\brates? (?:per|for)\b",
        # not "in charge of" (leading something)
        r"(?<!\bin )\bcharge\b(?! of\b)", r"\b(?:charges|fee|fees|tariff|pricing)\b", r"\bhow expensive\b",
        rf"\bhow much\b{_GAP}\b(?:cost|charge|ask|bill|pay|earn)\w*",
        rf"\bwhat (?:does|would|will|do) {them} (?:cost|charge)\b",
        rf"\b(?:when|how soon|how quickly)\b{_GAP}\b(?:can|could|would|will|might|is|are)\b{_GAP}"
        r"\b(?:start|begin|join|be available|be free|take on|work for|work with)\b",
        r"\bstart(?:ing)? date\b",
        rf"\b(?:can|could|would|will) {she}\b{_GAP}\b(?:start|begin|join)\b",
        r"\bbudget\b", r"\b(?:room|capacity|bandwidth|time) for (?:a|an|another|new|our|my)\b",
        r"\b(?:open|available) (?:to|for) (?:new |a new |any )?(?:work|projects?|assignments?|opportunities|"
        r"clients?|offers?|roles?|jobs?|engagements?|gigs?|freelance)\b",
        r"\b(?:take|takes|taking) on\b", rf"\b(?:hire|book|engage|contract|retain)\s+{them}\b",
        r"\bfull-?time\b", r"\bpart-?time\b",
        r"\blooking for (?:a )?(?:new )?(?:job|position|role|work|assignments?|projects?)\b",
        # Dutch
        r"\bbeschikba\w*", r"\b\w*tarie\w*", r"\bwat kost\b", rf"\bkost {hem}\b",
        r"\bhoeveel (?:vraagt|kost|rekent|bedraagt|verdient)\b", r"\bprijs\b",
        rf"\b(?:wanneer|hoe snel|vanaf wanneer|per wanneer)\b{_GAP}\b(?:beginnen|starten|beschikbaar|"
        r"aan de slag|inzetbaar|instappen)\b",
        # "Wanneer begint hij?", not "Wanneer begint de zomertijd?": the owner starts
        rf"\b(?:wanneer|hoe snel|vanaf wanneer|per wanneer)\b{_GAP}\b(?:begint|start)\s+(?:ze|zij|hij|je|jij|u|"
        rf"{names})\b",
        r"\b(?:inhuren|inschakelen|inhuur|inzetbaar)\b", r"\bneemt\b{_GAP}\bopdracht\w*", r"\bopdrachten? aan\b",
        r"\bvaste baan\b", r"\bfulltime\b", r"\bparttime\b", r"\bzzp\w*",
        r"\bnieuwe opdracht\w*", rf"\b(?:kan|kun|zou|wil) {hem} (?:beginnen|starten|instappen)\b",
        rf"\b(?:ruimte|tijd|plek|capaciteit)\b{_GAP}\b(?:opdracht\w*|project\w*|klus)",
        rf"\b(?:kan|kun|zou|wil) {ze}\b{_GAP}\b(?:beginnen|starten|instappen)\b",
    ]), re.IGNORECASE)


# Dutch "prijs" is a price and a prize: a prize is won or given ("Won het ontwerp een prijs?",
# "Aan wie werd de prijs uitgereikt?"), which asks nothing of the owner's rates.
_WON = r"(?:gewonnen|won|wonnen|wint|winnen|kreeg|kregen|gekregen|uitgereikt|toegekend)"
_PRIZE = re.compile(rf"\b{_WON}\b{_GAP}\bprijs\b|\bprijs\b{_GAP}\b{_WON}\b", re.IGNORECASE)
# Asking to hire or work with the owner and leaving an address is asking to be put in touch.
_HIRE = re.compile(r"\b(?:hire|hiring|work with|working with|collaborat\w*|project|opportunit\w*|offer|proposal|"
                   r"assignment|inhuren|samenwerk\w*|opdracht\w*|vacature|aanbod|voorstel)\b", re.IGNORECASE)
# A message to send "on her behalf" asks the twin to act as the owner: the one action it takes
# for her is passing a visitor's own message on.
_ON_BEHALF = re.compile(r"\bon (?:her|his|their|\w+'s) behalf\b|\bnamens (?:haar|hem|\w+)\b", re.IGNORECASE)


_NAME_WORD = r"[A-Z][\w'-]+"
_PARTICLE = "(?:" + "|".join(re.escape(p) for p in sorted(PARTICLES, key=lambda p: (-len(p), p))) + ")"
_FULL_NAME = rf"({_NAME_WORD}(?:\s+(?:{_PARTICLE}\s+)*{_NAME_WORD})?)"
_NAMES = [
    re.compile(rf"\b(?i:my name is|my name's|i am|i'm|this is|ik ben|mijn naam is|ik heet|hier is)\s+{_FULL_NAME}"),
    # after an explicit "my name is", lower case counts too
    re.compile(r"\b(?i:my name is|mijn naam is|ik heet|name:|naam:)\s+([^\W\d_][\w'-]*)"),
    re.compile(rf"(?:^|[.!?,]\s+|\n)(?i:regards|best|thanks|cheers|greetings|groeten|groet|mvg|bedankt|dank)[,!]?\s+"
               rf"{_FULL_NAME}\s*[.!]?\s*$"),
    re.compile(rf"(?:^|\n|[-\u2013\u2014]\s*){_FULL_NAME}\s+(?i:here)\b"),
]
# Capitalised words after "I am" that are not names.
_NOT_NAMES = WORDS.words("names.not_after_i_am")
# A question opens with a question word, the verb ("Does she ...?", "Spreekt hij ...?": these
# verbs open most questions about someone's work) or a request to tell.
_QUESTION_START = re.compile(
    rf"^{_LEXICON.alternation('question.words', 'question.auxiliaries', 'question.requests')}\b|"
    r"^(?:may|zijn|doet|doen|werkt|spreekt|geeft|neemt)\b",
    re.IGNORECASE,
)
# A sentence about getting in touch that starts like this asks how it works; it is not a request.
_ASKS_HOW = re.compile(rf"(?:{_LEXICON.alternation('question.words')}|if|als)\b",
                       re.IGNORECASE)
# A short question with one of these words refers to the previous one: "How was it evaluated?"
# ("this", "dat" and "het" only as the last word: elsewhere they are articles or conjunctions)
_REFERS_BACK = re.compile(r"\b(?:it|its|they|them|ervan|erover|daarvan|daarover|hiervan|hierover|daar|daarvoor|"
                          r"hiervoor|daarna|hierna|ervoor|erna)\b|"
                          r"\b(?:this|that|dit|dat|het)\s*[?.!]*\s*$|^\s*(?:and|also|en|ook)\b", re.IGNORECASE)


@dataclass
class Plan:
    """What to do with one visitor message."""

    question: str = ""  # the part to answer from the knowledge base ("" when there is none)
    availability: bool = False  # answer it with check_availability instead of a search
    contact: dict | None = None  # draft_contact_message arguments
    ask_details: bool = False  # wants to get in touch but left no way to reply: ask for it
    refused: bool = False  # instructions to the twin: no tool, no draft
    context: str = ""  # the earlier question a follow-up ("How was it evaluated?") refers to


def find_name(text: str) -> str | None:
    for pattern in _NAMES:
        for match in pattern.finditer(text):
            name = match.group(1).strip()
            if name.split()[0].lower() not in _NOT_NAMES:
                return name
    return None


def is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?") or bool(_QUESTION_START.match(sentence.strip()))


class IntentReader:
    """Reads a visitor's message against the conversation so far."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.patterns = _patterns(owner)

    def wants_contact(self, text: str) -> bool:
        return bool(self.patterns["contact"].search(text))

    def wants_availability(self, text: str) -> bool:
        text = _PRIZE.sub(" ", text)
        return bool(self.patterns["availability"].search(text) or (_WEEKLY.search(text) and _WORKING.search(text)))

    def overrides(self, text: str) -> bool:
        """Instructions to the twin itself (the guards' injection vocabulary), or a message to send
        in the owner's name: no tool, no draft."""
        return instructs(text) or bool(_ON_BEHALF.search(text))

    def plan(self, text: str, earlier: list[str], asked_details: bool) -> Plan:
        """``earlier``: the visitor's earlier messages, oldest first; ``asked_details``: the twin's
        last answer asked for a name and e-mail address to pass a message on."""
        text = text.strip()
        if self.overrides(text):
            return Plan(refused=True)
        parts = message_sentences(text) or [text]
        contact_parts = [s for s in parts if self._about_contact(s)]
        questions = [s for s in parts if s not in contact_parts and is_question(s)]
        # After the twin asked for details, the reply is the message unless it is only a new question.
        follow_up = asked_details and bool(earlier) and (bool(contact_parts) or not questions)
        wants = any(self.wants_contact(s) for s in contact_parts) or bool(
            EMAIL.search(text) and self.patterns["hire"].search(text))
        if not (follow_up or (contact_parts and wants)):
            if parts and len(contact_parts) == len(parts) and EMAIL.search(text) and not questions:
                return Plan(ask_details=True)  # only a name and an address: what is the message?
            return self._question(text, earlier)
        plan = self._question(" ".join(questions), earlier) if questions else Plan()
        email = _last([EMAIL.search(t) for t in [*earlier, text]])
        name = _last([find_name(t) for t in [*earlier, text]])
        if email is None and not follow_up:
            plan.ask_details = True  # one question back; the next answer is drafted whatever it holds
            return plan
        message = f"{earlier[-1].strip()}\n{text}" if follow_up else text
        plan.contact = {"visitor_name": name, "visitor_email": email.group(0) if email else None,
                        "message": message}
        return plan

    def _about_contact(self, sentence: str) -> bool:
        if _ASKS_HOW.match(sentence.strip()):
            return False  # "How can I reach her?", "If I leave a message, when will she reply?": a question
        return bool(self.wants_contact(sentence) or EMAIL.search(sentence) or find_name(sentence))

    def _question(self, question: str, earlier: list[str]) -> Plan:
        context = earlier[-1].strip() if earlier and _REFERS_BACK.search(question) and len(
            content_words(question)) <= 3 else ""
        return Plan(question=question, context=context,
                    availability=self.wants_availability(question) or (
                        bool(context) and self.wants_availability(context) and not self.wants_contact(context)))


def _last(found: list):
    return next((item for item in reversed(found) if item), None)
