"""Sensitive numbers: payment cards (Luhn), IBANs of every registered country (mod 97 and the
registry's format, by python-stdnum) and bare bank account numbers written with bank context.

Never phone numbers, dates, KvK, BTW, order, invoice or version numbers: a card needs 13-19
digits in one run (spaces or dashes between groups), a known issuer prefix and the Luhn check;
an account number needs a bank word next to it.
"""

from __future__ import annotations

import re

from stdnum import iban as stdnum_iban
from stdnum import luhn
from stdnum.exceptions import ValidationError

_CARD_CANDIDATE = re.compile(r"(?<![\w.,/-])\d(?:[ -]?\d){12,18}(?![\w/-]|[.,]\d)")
# Compact, or in the printed groups of four (the last group shorter).
_IBAN_CANDIDATE = re.compile(r"\b[A-Z]{2}\d{2}(?:[A-Z0-9]{11,30}|(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?)\b",
                             re.IGNORECASE)
_BANK_WORDS = (r"(?:rekening(?:nummer)?|bankrekening|account(?:\s+(?:number|no\.?|nr\.?))?|acct|konto(?:nummer)?|"
               r"bank\s*account|rek\.?\s*nr\.?|abn\s*amro|ing|rabo(?:bank)?|sns|asn|triodos|bunq|knab|"
               r"sparkasse|volksbank|commerzbank|deutsche\s+bank|kbc|belfius|bnp)")
_ACCOUNT = re.compile(
    rf"\b{_BANK_WORDS}\b(?:\W+\w+){{0,4}}?\W+(\d{{7,10}})\b|\b(\d{{9,10}})\b(?:\W+\w+){{0,3}}?\W+{_BANK_WORDS}\b",
    re.IGNORECASE,
)
# Issuer prefixes of the card schemes (Visa, Mastercard, Amex, Discover, Diners, JCB, UnionPay,
# Maestro): a Luhn-valid run that starts otherwise (a timestamp, an order number) is not a card.
_ISSUER = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|3[0689]|6(?:011|5|4[4-9]|2)|35|50|5[6-9])")


def luhn_valid(digits: str) -> bool:
    return digits.isdigit() and luhn.is_valid(digits)


def iban_valid(candidate: str) -> bool:
    """Registry length and format of the country, and mod 97 (not the national check digits,
    which some published example IBANs do not carry)."""
    try:
        stdnum_iban.validate(re.sub(r"\s", "", candidate), check_country=False)
    except ValidationError:
        return False
    return True


def find_card_numbers(text: str) -> list[str]:
    found = []
    for match in _CARD_CANDIDATE.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        if 13 <= len(digits) <= 19 and len(set(digits)) > 1 and _ISSUER.match(digits) and luhn_valid(digits):
            found.append(match.group(0))
    return found


def find_ibans(text: str) -> list[str]:
    return [m.group(0) for m in _IBAN_CANDIDATE.finditer(text) if iban_valid(m.group(0))]


def find_account_numbers(text: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in _ACCOUNT.finditer(text)]


def mask_sensitive(text: str) -> str:
    """Replace card numbers, IBANs and account numbers with a masked form keeping the last four."""
    for value in sorted({*find_card_numbers(text), *find_ibans(text), *find_account_numbers(text)},
                        key=len, reverse=True):
        compact = re.sub(r"\s|-", "", value)
        text = text.replace(value, f"[redacted …{compact[-4:]}]")
    return text
