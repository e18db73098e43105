"""Deterministic input guards: patterns and checksums, no model.

What they do and do not promise: patterns catch the common, literal attempts (and cost
nothing); they are not a classifier and can be evaded by paraphrase. The real defence is that
the one tool that acts waits for the owner.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    guard: str  # GuardIncident.Guard value
    rule: str


_I = re.IGNORECASE
INJECTION_RULES: list[tuple[str, re.Pattern]] = [
    ("ignore_instructions", re.compile(
        r"\b(ignore|disregard|forget|override|bypass|skip)\b[^.?!\n]{0,40}\b(previous|prior|above|earlier|all|"
        r"any|your|the|these|those|system|initial|original)\b[^.?!\n]{0,30}\b(instructions?|prompts?|rules|"
        r"directives?|guidelines|context|messages?|commands?|text|information|said|conversation)", _I)),
    ("leave_previous", re.compile(
        r"\b(leave|put|set)\b[^.?!\n]{0,20}\b(previous|prior|above)\b[^.?!\n]{0,20}\b(behind|aside)\b"
        r"|\bstart (?:over|from the (?:front|beginning|scratch))\b", _I)),
    ("forget_everything", re.compile(r"\b(forget|vergeet|vergiss)\b\s+(everything|all|alles)\b", _I)),
    ("role_override", re.compile(
        r"\b(you are now|from now on,? you|you're now|act as (?:an? )?(?:unrestricted|unfiltered|evil|different)|"
        r"pretend (?:to be|you are)|roleplay as|je bent nu|du bist (?:jetzt|nun)|now you are|nun bist du|"
        r"(?:i want you to|please|you will|you must|du sollst|ich möchte,? dass du)\s+(?:act|fungieren|agieren)\s+"
        r"(?:as|als)|stay in (?:your )?(?:role|character)|in deiner rolle)\b", _I)),
    ("prompt_exfiltration", re.compile(
        r"\b(reveal|show|print|repeat|output|tell me|give me|what (?:is|are)|leak|display)\b[^.?!\n]{0,30}"
        r"\b(your|the)\s+(system\s+prompt|initial\s+prompt|hidden\s+(?:prompt|instructions)|instructions|"
        r"prompt|initials? instructions)\b", _I)),
    ("jailbreak_terms", re.compile(
        r"\b(jailbreak|DAN mode|do anything now|godmode|safe mode off|reprogramming|unrestricted ai|"
        r"no (?:restrictions|filters|rules) apply)\b", _I)),
    ("hijack_now", re.compile(
        r"\b(?:now|nun|jetzt|nu)\s+(?:write|say|state|print|schreibe|sage|schrijf|zeg)\b|"
        r"\b(?:höre|hör) nicht auf\b|^\s*(?:stop|halt)\s*[-:!]|\binstruction\s*:", _I)),
    ("dutch_ignore", re.compile(
        r"\b(negeer|vergeet|omzeil)\b[^.?!\n]{0,40}\b(instructies|opdrachten|regels|prompt|systeemprompt)\b", _I)),
    ("german_ignore", re.compile(
        r"\b(ignoriere|ignorieren|vergiss|vergessen)\b[^.?!\n]{0,40}\b(anweisungen|anweisung|instruktionen|"
        r"regeln|befehle|alles|vorherigen)\b", _I)),
    ("fake_system", re.compile(
        r"(^|\n)\s*(system|assistant)\s*:|<\s*/?\s*(system|im_start|im_end)\s*>|\[/?INST\]", _I)),
    ("new_instructions", re.compile(
        r"\b(new|updated|real|actual)\s+(instructions|task|rules)\s*(:|are|is)|\bnieuwe\s+(instructies|opdracht)\b"
        r"|\bneue\s+(anweisungen|aufgabe)\b", _I)),
]

OFF_TOPIC_RULES: list[tuple[str, re.Pattern]] = [
    ("write_for_me", re.compile(
        r"\b(write|generate|create|draft|compose|code)\s+(?:me\s+)?(?:an?|my|the|some)?\s*"
        r"(essay|poem|story|song|homework|assignment|script|program|function|class|sql query|cover letter|"
        r"blog post|tweet|limerick|haiku)\b", _I)),
    ("generate_code", re.compile(
        r"\b(generate|write|generieren|schreiben|schreibe|schrijf|genereer)\b[^.?!\n]{0,30}\b(python|sql|java|"
        r"javascript|bash)?\s*-?\s*(code|script|programm|programma)\b", _I)),
    ("homework", re.compile(r"\b(my|mijn)\s+(homework|assignment|huiswerk|opdracht voor school)\b", _I)),
    ("solve", re.compile(r"\b(solve|calculate|compute|los op|bereken)\b\s+(this|the following|my|dit|deze)\b", _I)),
    ("translate", re.compile(r"\b(translate|vertaal)\b\s+(this|the following|dit|deze)\b", _I)),
    ("dutch_write", re.compile(
        r"\b(schrijf|maak|genereer)\s+(?:voor mij\s+)?(?:een|mijn)\s+(essay|gedicht|verhaal|script|programma|"
        r"functie|code|sollicitatiebrief|opstel)\b", _I)),
]

_CARD_CANDIDATE = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")
_IBAN_CANDIDATE = re.compile(
    r"\b[A-Z]{2}\d{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?)\b", _I
)
# From the IBAN registry: total length and account-number format of common countries.
_IBAN_FORMATS = {
    "NL": (18, re.compile(r"[A-Z]{4}\d{10}")),
    "BE": (16, re.compile(r"\d{12}")),
    "DE": (22, re.compile(r"\d{18}")),
    "GB": (22, re.compile(r"[A-Z]{4}\d{14}")),
    "FR": (27, re.compile(r"\d{10}[A-Z0-9]{11}\d{2}")),
    "ES": (24, re.compile(r"\d{20}")),
    "IT": (27, re.compile(r"[A-Z]\d{10}[A-Z0-9]{12}")),
}


def luhn_valid(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def iban_valid(candidate: str) -> bool:
    text = re.sub(r"\s", "", candidate).upper()
    if not 15 <= len(text) <= 34 or not text[:2].isalpha() or not text[2:4].isdigit():
        return False
    known = _IBAN_FORMATS.get(text[:2])
    if known and (len(text) != known[0] or not known[1].fullmatch(text[4:])):
        return False
    rearranged = text[4:] + text[:4]
    try:
        number = int("".join(str(int(ch, 36)) for ch in rearranged))
    except ValueError:
        return False
    return number % 97 == 1


def find_card_numbers(text: str) -> list[str]:
    found = []
    for match in _CARD_CANDIDATE.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        # card length, not one repeated digit, and the Luhn check (1 in 10 random numbers pass it)
        if 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn_valid(digits):
            found.append(match.group(0))
    return found


def find_ibans(text: str) -> list[str]:
    """IBANs written compact or in groups of four, in any case, that pass the checksum (and,
    for countries we know, the registry's length and account format)."""
    return [m.group(0) for m in _IBAN_CANDIDATE.finditer(text) if iban_valid(m.group(0))]


def mask_sensitive(text: str) -> str:
    """Replace card numbers and IBANs with a masked form keeping the last four characters."""
    for value in find_card_numbers(text) + find_ibans(text):
        compact = re.sub(r"\s|-", "", value)
        text = text.replace(value, f"[redacted …{compact[-4:]}]")
    return text


def screen(text: str) -> Verdict | None:
    """The first guard that fires, or None. Order: numbers, injection, off-topic."""
    if find_card_numbers(text):
        return Verdict("card_number", "luhn")
    if find_ibans(text):
        return Verdict("iban", "mod97")
    for rule, pattern in INJECTION_RULES:
        if pattern.search(text):
            return Verdict("injection", rule)
    for rule, pattern in OFF_TOPIC_RULES:
        if pattern.search(text):
            return Verdict("off_topic", rule)
    return None
