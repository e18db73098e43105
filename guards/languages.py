"""Instruction override in the languages the word rules of ``guards.patterns`` do not speak:
"ignore/forget ... the instructions/rules/commands", in the order each language puts them.

Visitors come from everywhere, and so do attacks: public injection sets machine-translate the
same override into a dozen languages. Each language here is a list of verbs (ignore, forget,
disregard) and of nouns (instructions, rules, commands), and whether the verb comes first
(Russian, Arabic, Indonesian, ...) or last (Hindi, Japanese, Korean, Turkish). Both are written
as a speaker writes them and compiled in the screen's folded form (``guards.normalize.fold``:
accents dropped, look-alike letters mapped), so they match the views the rules read. Between
them at most ``GAP`` characters on the same line and in the same sentence (bounded: linear
time; full-width marks are folded to ASCII first), so a verb in one sentence and a noun in the
next do not pair.

Words alone are not an attack: "забудь мой вопрос" (forget my question) names no instructions,
and a question that merely mentions them is asked, not ordered (the rules are ``orders_only``).
"""

from __future__ import annotations

import re

from guards.normalize import fold

GAP = 40  # characters between the verb and the noun, on one line
CJK_GAP = 12  # languages written without spaces say it in fewer characters

# language: (verbs, nouns, verb first); stems match as prefixes of longer word forms
OVERRIDES: dict[str, tuple[tuple[str, ...], tuple[str, ...], bool]] = {
    "ru": (("игнорир", "проигнорир", "забудь", "забудьте", "забыть", "не обращай внимания на", "не учитывай",
            "отбрось", "отмени"), ("инструкц", "указани", "правил", "команд", "директив"), True),
    "uk": (("ігнору", "проігнору", "забудь", "забудьте", "не зважай на"), ("інструкц", "вказівк", "правил",
                                                                          "команд"), True),
    "el": (("αγνοησ", "αγνοηστε", "ξεχασ"), ("οδηγι", "εντολ", "κανον"), True),
    "ar": (("تجاهل", "انس", "إنس", "أهمل", "لا تلتزم ب"), ("التعليمات", "تعليمات", "الأوامر", "أوامر",
                                                         "القواعد", "التوجيهات"), True),
    "he": (("התעלם", "תתעלם", "שכח", "תשכח"), ("הוראות", "ההוראות", "מההוראות", "הנחיות", "ההנחיות", "הכללים"),
           True),
    "vi": (("bỏ qua", "phớt lờ", "quên", "lờ đi"), ("hướng dẫn", "chỉ dẫn", "chỉ thị", "lệnh", "quy tắc"), True),
    "id": (("abaikan", "lupakan", "hiraukan", "acuhkan"), ("instruksi", "perintah", "aturan", "petunjuk",
                                                            "arahan"), True),
    "sv": (("ignorera", "glöm", "bortse från", "strunta i"), ("instruktion", "regler", "direktiv"), True),
    "da": (("ignorer", "glem", "se bort fra"), ("instruktion", "instruks", "regler"), True),
    "cs": (("ignoruj", "zapomeň", "zapomeňte", "zabudni", "nevšímej si"), ("instrukc", "pokyn", "pravidl",
                                                                         "inštrukci"), True),
    "ro": (("ignoră", "ignorați", "uită", "uitați"), ("instrucțiuni", "instrucțiunile", "regulile", "comenzile"),
           True),
    "hu": (("hagyd figyelmen kívül", "felejtsd el", "ne törődj"), ("utasítás", "szabály"), True),
    "fi": (("unohda", "ohita", "älä välitä"), ("ohje", "sääntö", "käsky"), True),
    "hi": (("अनदेखा", "अनदेखी", "नज़रअंदाज़", "नजरअंदाज", "भूल जा", "भूल"), ("निर्देश", "आदेश", "नियम"), False),
    "tr": (("unut", "yok say", "görmezden gel", "boşver", "boş ver", "dikkate alma"), ("talimat", "yönerge", "kural",
                                                                           "komut"), False),
    "ja": (("無視", "忘れ"), ("指示", "命令", "ルール", "規則", "プロンプト", "指令"), False),
    "ko": (("무시", "잊어", "잊고"), ("지시", "지침", "명령", "규칙", "프롬프트"), False),
    "zh": (("忽略", "忽视", "忽視", "无视", "無視", "忘记", "忘記", "忘掉", "不要理会", "不要理會", "别管", "別管"),
           ("指示", "指令", "说明", "說明", "规则", "規則", "提示", "命令", "设定", "設定"), True),
}
_CJK = {"ja", "ko", "zh"}


def _alternation(words: tuple[str, ...]) -> str:
    return "(?:" + "|".join(sorted({re.escape(fold(w)) for w in words}, key=len, reverse=True)) + ")"


def _pattern(first: tuple[str, ...], second: tuple[str, ...], gap: int, cjk: bool) -> re.Pattern:
    start = "" if cjk else r"(?<!\w)"  # a word's start, where words have spaces
    ends = r"\n.!?\u3002" if cjk else r"\n.!?\u3002\u0964"  # the sentence: Hindi and CJK full stops too
    return re.compile(rf"{start}{_alternation(first)}[^{ends}]{{0,{gap}}}?{_alternation(second)}")


class Overrides:
    """The override patterns of every language, read like one compiled pattern (``finditer``).
    A language's pattern runs only on a text that holds one of its nouns (a substring test, in
    microseconds), so the common text, which names no instructions, costs almost nothing."""

    def __init__(self) -> None:
        self.languages = []
        for language, (verbs, nouns, verb_first) in OVERRIDES.items():
            cjk = language in _CJK
            first, second = (verbs, nouns) if verb_first else (nouns, verbs)
            patterns = [_pattern(first, second, CJK_GAP if cjk else GAP, cjk)]
            if language in ("ja", "zh"):  # the object first too: "指示を無視して", "把指示忘掉"
                patterns.append(_pattern(nouns, verbs, CJK_GAP, cjk))
            self.languages.append((tuple({fold(n) for n in nouns}), patterns))

    def finditer(self, text: str):
        for nouns, patterns in self.languages:
            if any(noun in text for noun in nouns):
                for pattern in patterns:
                    yield from pattern.finditer(text)


OVERRIDE = Overrides()
