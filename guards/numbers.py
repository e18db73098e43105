"""Sensitive numbers: payment cards (Luhn), IBANs of every registered country (mod 97 and the
registry's format, by python-stdnum) and bare bank account numbers written with bank context.

Never phone numbers, dates, KvK, BTW, order, invoice or version numbers: a card needs 13-19
digits in one run, a known issuer prefix, a length that scheme issues and the Luhn check; an
account number needs a bank word next to it. The groups may be written apart in any way a
visitor does: spaces, tabs, dots, commas, dashes, slashes, underscores or one group per line
(``5500,0055,5555,5559``), and in full-width digits (folded by ``clean`` first).
"""

from __future__ import annotations

import itertools
import re
import unicodedata

from stdnum import iban as stdnum_iban
from stdnum import luhn
from stdnum.exceptions import ValidationError

from guards.normalize import without_category

# Digits with up to three separators between them (spaces, tabs, newlines, dots, commas, dashes,
# slashes…): the checksum and the issuer prefix, not the spelling, tell a card from other digits.
_SEP = r"[\s.,\-\u2010-\u2015/_]"
_CARD_CANDIDATE = re.compile(rf"(?<![\w.,/-])\d(?:{_SEP}{{0,3}}\d){{12,60}}(?![\w/-]|[.,]\d)")
# A card written in its printed groups (fours with a shorter last group: 4-4-4-4, 4-4-4-3,
# 4-4-4-4-3; Amex and Diners 4-6-5, 4-6-4), or as one run: what a run of digits starts with when
# something follows the card in it (an expiry date, a CVC).
_PRINTED = re.compile(r"\d{13,19}|\d{4}(?:\D+\d{4}){2,3}(?:\D+\d{1,3})?|\d{4}\D+\d{6}\D+\d{4,5}")
# Compact, or in the printed groups of four (the last group shorter).
_IBAN_CANDIDATE = re.compile(
    r"\b[A-Z]{2}\d{2}(?:[A-Z0-9]{11,30}|(?:[\s.,\-/]{0,2}[A-Z0-9]{4}){2,7}(?:[\s.,\-/]{0,2}[A-Z0-9]{1,3})?)\b",
    re.IGNORECASE)
# Explicit account words only: "account manager" or a bank's name next to a number is not enough.
_BANK_WORDS = (r"(?:rekening(?:nummer)?|bankrekening(?:nummer)?|account\s+(?:number|no\.?|nr\.?)|bank\s*account|"
               r"acct\.?\s*(?:no\.?|nr\.?)?|konto(?:nummer)?|bankkonto|rek\.?\s*nr\.?|iban)")
_BANKS = (r"(?:abn\s*amro|ing|rabobank|rabo|sns|asn|triodos|bunq|knab|sparkasse|volksbank|commerzbank|"
          r"deutsche\s+bank|kbc|belfius|bnp(?:\s+paribas)?|barclays|hsbc|lloyds|santander)")
_ACCOUNT = re.compile(
    rf"\b{_BANK_WORDS}\b(?:\W+\w+){{0,4}}?\W+(\d(?:[ .]?\d){{6,9}})\b"
    rf"|\b(\d{{9,10}})\b(?:\W+\w+){{0,3}}?\W+{_BANK_WORDS}\b"
    # the word account, a number, then a bank's name ("my account 123456789 with Rabobank")
    rf"|\baccount\b(?:\W+\w+){{0,2}}?\W+(\d{{7,10}})\b(?:\W+\w+){{0,3}}?\W+{_BANKS}\b",
    re.IGNORECASE,
)
# Issuer prefixes of the card schemes and the lengths each issues (Visa 13, 16 or 19 digits;
# Mastercard 51-55 and 22-27, 16; Amex 34, 37, 15; JCB 35, 16-19; Diners 30, 36, 38, 39, 14, 16 or
# 19; Discover, UnionPay, RuPay and Maestro 50 and 56-69, 13-19 here, the shortest run read): a
# Luhn-valid run that starts otherwise (a timestamp, an order number, 31-33) or has another length
# (a 15-digit IMEI, whose makers' codes often start with 35, 30 or 33) is not a card. First match
# wins: "35" before "3".
_SCHEMES = ((re.compile(r"4"), {13, 16, 19}), (re.compile(r"3[47]"), {15}), (re.compile(r"5[1-5]|2[2-7]"), {16}),
            (re.compile(r"35"), set(range(16, 20))), (re.compile(r"3[0689]"), {14, 16, 19}),
            (re.compile(r"5[0-9]|6"), set(range(12, 20))))


def luhn_valid(digits: str) -> bool:
    return digits.isdigit() and luhn.is_valid(digits)


def iban_valid(candidate: str) -> bool:
    """Registry length and format of the country, and mod 97 (not the national check digits,
    which some published example IBANs do not carry)."""
    try:
        stdnum_iban.validate(re.sub(r"[\s.,\-/]", "", candidate), check_country=False)
    except ValidationError:
        return False
    return True


def _is_card(written: str) -> bool:
    digits = re.sub(r"\D", "", written)
    lengths = next((lengths for prefix, lengths in _SCHEMES if prefix.match(digits)), set())
    return 13 <= len(digits) <= 19 and len(digits) in lengths and len(set(digits)) > 1 and luhn_valid(digits)


def find_card_numbers(text: str) -> list[str]:
    """Card numbers as written. A run of digits is a card as a whole, or it starts with a card in
    its printed groups followed by more digits (``4111 1111 1111 1111 12/27 123``): the checksum
    of the whole run fails there, the card's does not."""
    found = []
    for match in _CARD_CANDIDATE.finditer(text):
        run = match.group(0)
        if _is_card(run):
            found.append(run)
            continue
        ends = [group.end() for group in re.finditer(r"\d+", run)][-2::-1]  # the longest start first
        card = next((run[:end] for end in ends if _PRINTED.fullmatch(run[:end]) and _is_card(run[:end])), None)
        if card is not None:
            found.append(card)
    return found


def find_ibans(text: str) -> list[str]:
    """IBANs as written. A candidate may have run on into the next word ("... 00, thanks" reads
    "than" as a group of four): then the IBAN ends before the first group of letters that passes
    the check. It never ends before more digits: a longer number is no IBAN."""
    found = []
    for match in _IBAN_CANDIDATE.finditer(text):
        written = match.group(0)
        groups = list(re.finditer(r"[A-Z0-9]+", written, re.IGNORECASE))
        cuts = [before.end() for before, after in itertools.pairwise(groups) if after.group(0).isalpha()]
        ends = [len(written), *reversed(cuts)]
        iban = next((written[:end] for end in ends if end >= 15 and iban_valid(written[:end])), None)
        if iban is not None:
            found.append(iban)
    return found


def find_account_numbers(text: str) -> list[str]:
    return [m.group(1) or m.group(2) or m.group(3) for m in _ACCOUNT.finditer(text)]


_ODD_SPACE = re.compile(r"[^\S\n\t ]")  # whitespace other than newline, tab and the plain space
# Variation selectors (U+FE00-FE0F, U+E0100-E01EF) change nothing a reader sees and can carry a
# hidden payload a byte each; tag characters (U+E0000-E007F, format characters) are removed with
# the rest of their category. Neither reaches a table or the model (guards.normalize decodes both
# for the screen).
_SELECTORS = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]")


def clean(text: str) -> str:
    """Compatibility-folded (full-width digits become plain ones), format characters (zero-width,
    soft hyphens, tag characters) and variation selectors removed, exotic spaces made plain: what
    is stored and what the model reads is what was screened."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        # only the non-ASCII characters need looking at: one regex pass, not a call per character
        text = _SELECTORS.sub("", without_category(text, "Cf"))
    return _ODD_SPACE.sub(" ", text)


def contains_sensitive(text: str) -> bool:
    return bool(find_card_numbers(text) or find_ibans(text) or find_account_numbers(text))


def mask_sensitive(text: str) -> str:
    """The text cleaned (see ``clean``) with card numbers, IBANs and account numbers replaced by a
    masked form keeping the last four characters."""
    text = clean(text)
    for value in sorted({*find_card_numbers(text), *find_ibans(text), *find_account_numbers(text)},
                        key=len, reverse=True):
        compact = re.sub(r"[^A-Za-z0-9]", "", value)
        text = text.replace(value, f"[redacted ...{compact[-4:]}]")  # ASCII: stays as it is when cleaned again
    return text
