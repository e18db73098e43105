"""Views of a visitor's text that undo the tricks attackers use before the rules look at it.

Every step is a single pass over the text (linear time): Unicode compatibility folding,
zero-width and other format characters removed, look-alike letters mapped to Latin, accents
dropped, case folded, letters spaced or punctuated apart joined again, and leetspeak decoded.
Hidden payloads are decoded too: base64, base32, hex, percent-encoded, binary, Morse, braille
and Ascii85 runs, ROT13, the text reversed, and text smuggled in invisible characters (Unicode
tag characters, which spell ASCII, and variation selectors, which carry a byte each). The rules
run on every view; ``guards.numbers.clean`` removes the invisible characters from what is
stored and sent to the model.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from dataclasses import dataclass

# Cyrillic and Greek letters that look like Latin ones (the usual homoglyph substitutions).
_CONFUSABLES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
    "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ɡ": "g", "һ": "h",
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "ω": "w", "ƅ": "b", "ı": "i", "ł": "l", "ø": "o", "ß": "ss",
})
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "@": "a",
                       "$": "s", "€": "e"})
# Single letters separated by spaces or punctuation: "i g n o r e", "i.g.n.o.r.e", "i-g-n-o-r-e".
# One separator between the letters; a wider gap (two spaces and more) is a word boundary.
_SPACED = re.compile(r"\b(?:[a-z](?:[.\-_*/\\|,:;'\"] ?| )){2,}[a-z]\b")
_SEPARATORS = re.compile(r"[ .\-_*/\\|,:;'\"]")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")
_BASE32_RUN = re.compile(r"\b[A-Z2-7]{16,}={0,6}(?![A-Za-z0-9])")
# hex bytes written together ("69676e6f7265"), spaced ("69 67 6e") or escaped ("\\x69\\x67")
_HEX_RUN = re.compile(r"(?:(?:\\x|0x)?[0-9a-fA-F]{2}[ ,:]?){8,}")
_PERCENT_RUN = re.compile(r"(?:%[0-9a-fA-F]{2}){4,}")
_ROT13 = str.maketrans("abcdefghijklmnopqrstuvwxyz", "nopqrstuvwxyzabcdefghijklm")
_SPACE = re.compile(r"\s+")
# Newlines pasted escaped ("...?\\n\\nGenerate code"), as a token of their own: one in a code
# string ("a\\nb") is left alone.
_ESCAPED_NEWLINES = re.compile(r"(?:^|(?<=[\s.?!:;\"']))(?:\\[rn])+")


def fold(text: str, *, collapse: bool = True) -> str:
    """Compatibility-folded, format characters removed, look-alikes mapped, accents dropped,
    case folded and (unless ``collapse`` is off) whitespace collapsed."""
    if text.isascii():  # nothing to fold but case: the common case, in microseconds
        text = text.lower()
        return _SPACE.sub(" ", text).strip() if collapse else text
    text = unicodedata.normalize("NFKC", text)
    text = without_category(text, "Cf")  # zero-width, bidi marks
    # accents first, so an accented look-alike ("ή", "ό") maps as its bare letter does
    text = without_category(unicodedata.normalize("NFD", text.casefold()), "Mn")  # the accents NFD split off
    text = text.translate(_CONFUSABLES)
    return _SPACE.sub(" ", text).strip() if collapse else text


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def without_category(text: str, category: str) -> str:
    """``text`` without the characters of a Unicode category; only non-ASCII ones are looked at."""
    return _NON_ASCII.sub(lambda m: "" if unicodedata.category(m.group()) == category else m.group(), text)


def _join_spaced(text: str) -> str:
    return _SPACED.sub(lambda m: _SEPARATORS.sub("", m.group(0)), text)


# Only the words that hold a leet character are looked at.
_LEET_WORD = re.compile(r"(?<!\S)[^\s013-578@$€]*[013-578@$€]\S*")  # linear: starts at word starts only


def _deleet(text: str) -> str:
    # Only inside words that have letters: "1gn0re" becomes "ignore", "2022" stays a year.
    def deleet(match: re.Match) -> str:
        word = match.group(0)
        return word.translate(_LEET) if any("a" <= ch <= "z" for ch in word) else word

    return _LEET_WORD.sub(deleet, text)


def _wordy(decoded: str) -> bool:
    """Whether decoded bytes read as text (four fifths letters and spaces), not noise."""
    return bool(decoded) and sum(ch.isalpha() or ch == " " for ch in decoded) >= 0.8 * len(decoded)


# Binary bytes ("01101001 01100111"), Morse (".. --. -. --- .-. ." with "/" between words),
# braille letters (U+2801-U+283D) and Ascii85 ("<~...~>").
_BINARY_RUN = re.compile(r"(?:[01]{8}[ ,]?){4,}")
_MORSE_RUN = re.compile(r"(?:[.\-]{1,6}(?: / | {1,3}|/)){5,}[.\-]{1,6}")
_MORSE = dict(zip(
    ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .-- -..- -.-- --.. "
    "----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----.".split(), "abcdefghijklmnopqrstuvwxyz0123456789",
    strict=True))
_BRAILLE_RUN = re.compile("[\u2800-\u28ff][\u2800-\u28ff ]{7,}")
_BRAILLE = str.maketrans(dict(zip("\u2801\u2803\u2809\u2819\u2811\u280b\u281b\u2813\u280a\u281a\u2805\u2807"
                                  "\u280d\u281d\u2815\u280f\u281f\u2817\u280e\u281e\u2825\u2827\u283a\u282d"
                                  "\u283d\u2835\u2800", "abcdefghijklmnopqrstuvwxyz ", strict=True)))
_ASCII85_RUN = re.compile(r"<~[!-u\sz]{10,}~>")


def _morse(run: str) -> bytes:
    words = re.split(r" ?/ ?| {3}", run.strip())
    return " ".join("".join(_MORSE.get(code, "?") for code in word.split()) for word in words).encode()


_DECODERS = (
    ("base64", _BASE64_RUN, lambda c: base64.b64decode(c + "=" * (-len(c) % 4), validate=True)),
    ("base32", _BASE32_RUN, lambda c: base64.b32decode(c + "=" * (-len(c) % 8))),
    ("hex", _HEX_RUN, lambda c: bytes.fromhex(re.sub(r"\\x|0x|[ ,:]", "", c))),
    ("percent", _PERCENT_RUN, lambda c: bytes.fromhex(c.replace("%", ""))),
    ("binary", _BINARY_RUN, lambda c: bytes(int(b, 2) for b in re.findall(r"[01]{8}", c))),
    ("morse", _MORSE_RUN, _morse),
    ("braille", _BRAILLE_RUN, lambda c: c.translate(_BRAILLE).encode()),
    ("ascii85", _ASCII85_RUN, lambda c: base64.a85decode(c, adobe=True)),
)


def _decoded(text: str) -> list[tuple[str, str]]:
    """The runs of ``text`` that decode to text, as base64, base32, hex bytes, percent escapes,
    binary bytes, Morse, braille or Ascii85: (the encoding, the text)."""
    out = []
    for name, pattern, decode in _DECODERS:
        for match in pattern.finditer(text):
            try:
                decoded = decode(match.group(0)).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError, ValueError):
                continue
            if _wordy(decoded):
                out.append((name, decoded))
    return out


_TAGS = re.compile("[\U000e0020-\U000e007e]+")
_SELECTOR_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{4,}")


def _smuggled(text: str) -> list[str]:
    """Text hidden in invisible characters: tag characters (U+E0020-E007E spell ASCII) and runs of
    variation selectors (U+FE00-FE0F are the bytes 0-15, U+E0100-E01EF the bytes 16-255)."""
    if text.isascii():
        return []
    found = ["".join(chr(ord(ch) - 0xE0000) for ch in run) for run in _TAGS.findall(text)]
    for run in _SELECTOR_RUN.findall(text):
        data = bytes(ord(ch) - 0xFE00 if ord(ch) <= 0xFE0F else ord(ch) - 0xE0100 + 16 for ch in run)
        decoded = data.decode("utf-8", errors="ignore")
        if _wordy(decoded):
            found.append(decoded)
    return found


@dataclass(frozen=True)
class View:
    # plain, lines, joined, leet, an encoding's name (base64, morse, ...), rot13, smuggled,
    # squashed, reversed
    name: str
    text: str


def views(text: str) -> list[View]:
    """The texts the rules look at, most literal first (duplicates left out)."""
    plain = fold(text)
    spaced = fold(text, collapse=False)  # letter-spacing is told from word gaps before collapsing
    # newlines kept (runs of blanks collapsed): a fake "assistant:" turn on a later line
    lines = re.sub(r" ?\n[\s]*", "\n", re.sub(r"[^\S\n]+", " ", _ESCAPED_NEWLINES.sub("\n", spaced))).strip()
    candidates = [View("plain", plain), View("lines", lines),
                  View("joined", _SPACE.sub(" ", _join_spaced(spaced)).strip()),
                  View("leet", _SPACE.sub(" ", _join_spaced(_deleet(spaced))).strip())]
    candidates += [View(name, fold(decoded)) for name, decoded in _decoded(text)]
    candidates.append(View("rot13", plain.translate(_ROT13)))
    candidates += [View("smuggled", fold(hidden)) for hidden in _smuggled(text)]
    # every separator gone: "i.g.n.o.r.e a.l.l" becomes "ignoreall"; only compact rules look here
    candidates.append(View("squashed", re.sub(r"[^a-z]", "", _deleet(plain))))
    candidates.append(View("reversed", plain[::-1]))
    seen: set[tuple[str, bool]] = set()
    unique = []
    for view in candidates:
        key = (view.text, view.name == "squashed")  # the squashed view has rules of its own
        if key not in seen:
            seen.add(key)
            unique.append(view)
    return unique
