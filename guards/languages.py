"""Instruction override, prompt extraction and persona set-ups in the languages the word rules of
``guards.patterns`` do not speak: "ignore/forget ... the instructions", "show ... your system
prompt" in the order each language puts them, and "from now on you are", "pretend to be".

Visitors come from everywhere, and so do attacks: public injection sets machine-translate the
same override into a dozen languages. Each language here is a list of verbs (ignore, forget,
disregard) and of nouns (instructions, rules, commands), and whether the verb comes first
(Russian, Arabic, Indonesian, ...) or last (Hindi, Japanese, Korean, Turkish). Both are written
as a speaker writes them and compiled in the screen's folded form (``guards.normalize.fold``:
accents dropped, look-alike letters mapped), so they match the views the rules read. Between
them at most ``GAP`` characters on the same line and in the same sentence (bounded: linear
time; full-width marks are folded to ASCII first), so a verb in one sentence and a noun in the
next do not pair.

Words alone are not an attack: "забудь мой вопрос" (forget my question) names no instructions;
overrides and personas count as orders only (``orders_only``: a question that mentions them is
asked, "Czy od teraz jesteś dostępna?"), extraction asked as a question counts too, as in
English. A word that is also something else was left out ("команда" is a team too, "说明" an
explanation, Romanian "uită-te" is "look"), and a negated verb is none ("glöm inte").
"""

from __future__ import annotations

import re

from guards.grammar import needing, words_of
from guards.normalize import fold

GAP = 40  # characters between the verb and the noun, on one line
CJK_GAP = 12  # languages written without spaces say it in fewer characters

# language: (verbs, nouns, verb first); stems match as prefixes of longer word forms
OVERRIDES: dict[str, tuple[tuple[str, ...], tuple[str, ...], bool]] = {
    "ru": (("игнорир", "проигнорир", "забудь", "забудьте", "забыть", "не обращай внимания на", "не учитывай",
            "отбрось"), ("инструкц", "указани", "правил", "директив"), True),  # not "команд": a team
    "uk": (("ігнору", "проігнору", "забудь", "забудьте", "не зважай на"), ("інструкц", "вказівк", "правил",
                                                                          "команд"), True),
    "el": (("αγνοησ", "αγνοηστε", "ξεχασ"), ("οδηγι", "εντολ", "κανον"), True),
    "ar": (("تجاهل", "أهمل", "لا تلتزم"), ("التعليمات", "تعليمات", "بالتعليمات", "الأوامر", "أوامر", "القواعد",
                                           "بالقواعد", "التوجيهات"), True),
    "he": (("התעלם", "תתעלם", "שכח", "תשכח"), ("הוראות", "ההוראות", "מההוראות", "הנחיות", "ההנחיות", "הכללים"),
           True),
    "vi": (("bỏ qua", "phớt lờ", "lờ đi"), ("hướng dẫn", "chỉ dẫn", "chỉ thị", "lệnh", "quy tắc"), True),
    "id": (("abaikan", "lupakan", "hiraukan", "acuhkan"), ("instruksi", "perintah", "aturan", "petunjuk",
                                                            "arahan"), True),
    "sv": (("ignorera", "glöm", "bortse från", "strunta i"), ("instruktion", "regler", "direktiv"), True),
    "da": (("ignorer", "glem", "se bort fra"), ("instruktion", "instruks", "regler"), True),
    "cs": (("ignoruj", "zapomeň", "zapomeňte", "zabudni", "nevšímej si"), ("instrukc", "pokyn", "pravidl",
                                                                         "inštrukci"), True),
    "ro": (("ignoră", "ignorați"), ("instrucțiuni", "instrucțiunile", "regulile"), True),  # "uită-te" is "look"
    "hu": (("hagyd figyelmen kívül", "felejtsd el", "ne törődj"), ("utasítás", "szabály"), True),
    "fi": (("unohda", "ohita", "älä välitä"), ("ohje", "sääntö", "käsky"), True),
    "hi": (("अनदेखा", "अनदेखी", "नज़रअंदाज़", "नजरअंदाज", "भूल जा"), ("निर्देश", "आदेश", "नियम"), False),
    # "unut" as an order only: "unutmayın" is "don't forget"
    "tr": (("unut ", "unut,", "unut.", "unut!", "unutun", "yok say", "görmezden gel", "boşver", "boş ver",
            "dikkate alma"), ("talimat", "yönerge", "kural"), False),
    "ja": (("無視", "忘れ"), ("指示", "命令", "ルール", "規則", "プロンプト", "指令"), False),
    "ko": (("무시", "잊어", "잊고"), ("지시", "지침", "명령", "규칙", "프롬프트"), False),
    "zh": (("忽略", "忽视", "忽視", "无视", "無視", "忘记", "忘記", "忘掉", "不要理会", "不要理會", "别管", "別管"),
           ("指示", "指令", "规则", "規則", "提示", "命令", "设定", "設定"), True),  # not 说明: an explanation
}
# language: (verbs, what they are done to, verb first); the second list must be named outright
# ("your instructions", "system prompt"): "muestra las instrucciones de instalación" asks for a
# manual, not for the screen's instructions
EXTRACTION: dict[str, tuple[tuple[str, ...], tuple[str, ...], bool]] = {
    "es": (("muestra", "muéstrame", "revela", "revélame", "imprime", "repite", "dime", "escribe", "copia",
            "enséñame"), ("tus instrucciones", "tu prompt", "prompt del sistema", "mensaje del sistema",
                          "instrucciones del sistema", "instrucciones ocultas",
                          "instrucciones iniciales"), True),
    "fr": (("affiche", "montre", "révèle", "imprime", "répète", "donne-moi", "dis-moi", "écris", "recopie"),
           ("tes instructions", "tes consignes", "ton prompt", "prompt système", "message système",
            "instructions système", "instructions cachées",
            "instructions initiales", "vos instructions", "votre prompt", "vos consignes"), True),
    "pt": (("mostre", "mostra", "revele", "revela", "imprima", "repita", "diga", "escreva", "copie"),
           ("suas instruções", "tuas instruções", "seu prompt", "prompt do sistema", "mensagem do sistema",
            "instruções do sistema", "instruções ocultas",
            "instruções iniciais"), True),
    "it": (("mostra", "mostrami", "rivela", "stampa", "ripeti", "dimmi", "scrivi", "copia"),
           ("tue istruzioni", "il tuo prompt", "prompt di sistema", "messaggio di sistema", "istruzioni di sistema",
            "istruzioni nascoste", "istruzioni iniziali"), True),
    "ru": (("покажи", "выведи", "раскрой", "повтори", "напиши", "скажи", "распечатай", "процитируй"),
           ("свои инструкции", "твои инструкции", "системный промпт", "системное сообщение",
            "системные инструкции", "твой промпт", "свой промпт",
            "скрытые инструкции", "исходные инструкции"), True),
    "pl": (("pokaż", "wypisz", "ujawnij", "powtórz", "napisz", "podaj", "wydrukuj"),
           ("swoje instrukcje", "twoje instrukcje", "prompt systemowy", "wiadomość systemową",
            "instrukcje systemowe", "swój prompt", "twój prompt", "ukryte instrukcje"), True),
    "id": (("tampilkan", "tunjukkan", "cetak", "ulangi", "beritahu", "sebutkan", "tuliskan"),
           ("instruksimu", "instruksi kamu", "instruksi sistem", "prompt sistem", "pesan sistem",
            "instruksi tersembunyi"), True),
    "vi": (("hiển thị", "in ra", "tiết lộ", "lặp lại", "cho tôi biết", "viết ra", "cho tôi xem"),
           ("hướng dẫn của bạn", "chỉ dẫn của bạn", "lời nhắc hệ thống", "prompt hệ thống", "thông điệp hệ thống",
            "hướng dẫn hệ thống"), True),
    "ar": (("اعرض", "اكشف", "اطبع", "كرر", "أخبرني", "اكتب", "أظهر"),
           ("تعليماتك", "موجه النظام", "رسالة النظام", "تعليمات النظام", "التعليمات المخفية"), True),
    "tr": (("göster", "yazdır", "tekrarla", "söyle", "açıkla"),
           ("talimatlarını", "sistem istemini", "sistem promptunu", "system promptunu", "gizli talimat"), False),
    "hi": (("दिखाओ", "दिखाइए", "बताओ", "बताइए", "दोहराओ", "लिखो", "प्रकट करो"),
           ("अपने निर्देश", "तुम्हारे निर्देश", "सिस्टम प्रॉम्प्ट", "सिस्टम संदेश", "छिपे निर्देश"),
           False),
    "ja": (("表示", "出力", "教えて", "繰り返", "見せて", "書き出", "印刷"),
           ("システムプロンプト", "あなたの指示", "初期指示", "隠された指示", "システムメッセージ"), False),
    "ko": (("보여", "출력", "알려", "반복", "말해", "공개"),
           ("시스템 프롬프트", "너의 지시", "당신의 지시", "지시사항", "너의 지침", "당신의 지침", "초기 지시",
            "숨겨진 지시", "시스템 메시지"), False),
    "zh": (("显示", "顯示", "输出", "輸出", "打印", "告诉我", "告訴我", "重复", "重複", "透露", "泄露", "写出",
            "列出"), ("系统提示", "系統提示", "系统指令", "系統指令", "你的指令", "你的指示", "你的提示词",
                      "你的提示詞",
                      "初始指令", "隐藏指令", "系统消息", "系統訊息"), True),
}

# A persona set up for the assistant, as a speaker of each language says "from now on you are" or
# "pretend to be" (never a bare "now you are": "теперь ты можешь сказать..." asks a question).
PERSONA: dict[str, tuple[str, ...]] = {
    "es": ("a partir de ahora eres", "desde ahora eres", "de ahora en adelante eres", "finge ser",
           "finge que eres", "haz de cuenta que eres", "actúa como si fueras"),
    "fr": ("désormais tu es", "dorénavant tu es", "à partir de maintenant tu es", "fais semblant d'être",
           "fais comme si tu étais", "joue le rôle de", "joue le rôle d'", "agis comme si tu étais",
           "désormais vous êtes"),
    "pt": ("a partir de agora você é", "de agora em diante você é", "a partir de agora és", "finja ser",
           "finja que é", "finja que você é", "faça de conta que", "aja como se fosse", "interprete o papel de"),
    "it": ("d'ora in poi sei", "da adesso sei", "da ora in poi sei", "da questo momento sei", "fingi di essere",
           "fai finta di essere", "comportati come se fossi"),
    "ru": ("отныне ты", "с этого момента ты", "притворись", "представь, что ты", "веди себя как", "играй роль"),
    "uk": ("віднині ти", "з цього моменту ти", "прикинься", "уяви, що ти"),
    "el": ("από τώρα είσαι", "προσποιήσου", "παίξε τον ρόλο"),
    "he": ("מעכשיו אתה", "תעמיד פנים", "העמד פנים", "שחק את התפקיד"),
    "ar": ("من الآن أنت", "من الآن فصاعدا أنت", "تظاهر بأنك", "تظاهر أنك", "تقمص دور", "العب دور"),
    "tr": ("bundan sonra sen", "şu andan itibaren sen", "rolüne bürün", "rolünü oyna", "gibi davran"),
    "vi": ("từ giờ bạn là", "từ bây giờ bạn là", "giả vờ là", "giả vờ bạn là", "hãy đóng vai", "hãy nhập vai"),
    "id": ("mulai sekarang kamu", "mulai sekarang anda", "berpura-puralah", "pura-pura jadi", "berperanlah sebagai",
           "bertindaklah sebagai"),
    "pl": ("od teraz jesteś", "od tej chwili jesteś", "udawaj, że jesteś", "udawaj że jesteś", "wciel się w",
           "zachowuj się jak"),
    "hi": ("होने का नाटक", "की भूमिका निभाओ", "की भूमिका निभाइए"),
    "zh": ("现在开始你是", "從現在開始你是", "从现在开始你是", "从现在起你是", "从今以后你是", "假装你是", "假裝你是",
           "请你扮演", "請你扮演"),
    "ja": ("ふりをして", "になりきって", "の役を演じて", "として振る舞って"),
    "ko": ("지금부터 너는", "이제부터 너는", "지금부터 당신은", "이제부터 당신은", "척해줘", "척 해줘",
           "역할을 맡아줘"),
}
_CJK = {"ja", "ko", "zh"}
# Scripts whose words the rules' pre-check does not see whole (no spaces, or marks folded away
# inside a word): their patterns run on a text in that script only (``_OnScript``).
_JOINED = _CJK | {"hi"}
_JOINED_SCRIPT = re.compile("[\u0900-\u097f\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u9fff"
                            "\uac00-\ud7af]")  # Devanagari, Hangul (decomposed too), kana, CJK


def _alternation(words: tuple[str, ...]) -> str:
    return "(?:" + "|".join(sorted({re.escape(fold(w)) for w in words}, key=len, reverse=True)) + ")"


# "Don't forget the rules" is no override: the negation before the verb (Hungarian "ne",
# Finnish "älä", folded) or after it (Swedish "inte", Danish and Norwegian "ikke").
_NOT_BEFORE = {"hu": ("ne ",), "fi": ("ala ",)}
_NOT_AFTER = {"sv": "inte", "da": "ikke"}
# Hangul is decomposed by the folding: a syllable is two or three characters.
_GAPS = {"ko": 36}


def _pattern(language: str, first: tuple[str, ...], second: tuple[str, ...]) -> re.Pattern:
    cjk = language in _CJK
    gap = _GAPS.get(language, CJK_GAP if cjk else GAP)
    start = "" if cjk else r"(?<!\w)"  # a word's start, where words have spaces
    start += "".join(rf"(?<!\b{re.escape(word)})" for word in _NOT_BEFORE.get(language, ()))
    after = rf"(?!\W+{_NOT_AFTER[language]}\b)" if language in _NOT_AFTER else ""
    ends = r"\n.!?\u3002" if cjk else r"\n.!?\u3002\u0964"  # the sentence: Hindi and CJK full stops too
    return re.compile(rf"{start}{_alternation(first)}{after}[^{ends}]{{0,{gap}}}?{_alternation(second)}")


class Pairs:
    """The patterns of some languages of a table of (verbs, objects, verb first), read like one
    compiled pattern (``finditer``): a language's pattern runs only on a text that holds one of
    its objects (a substring test)."""

    def __init__(self, table: dict[str, tuple[tuple[str, ...], tuple[str, ...], bool]], languages: set[str]) -> None:
        self.languages = []
        for language, (verbs, nouns, verb_first) in table.items():
            if language not in languages:
                continue
            first, second = (verbs, nouns) if verb_first else (nouns, verbs)
            patterns = [_pattern(language, first, second)]
            if language in ("ja", "zh"):  # the object first too: "指示を無視して", "把指示忘掉"
                patterns.append(_pattern(language, nouns, verbs))
            self.languages.append((tuple({fold(n) for n in nouns}), patterns))

    def finditer(self, text: str):
        for nouns, patterns in self.languages:
            if any(noun in text for noun in nouns):
                for pattern in patterns:
                    yield from pattern.finditer(text)


class _OnScript:
    """A pattern (or ``Pairs``) run only on a text that has one of the joined scripts."""

    def __init__(self, pattern) -> None:
        self.pattern = pattern

    def finditer(self, text: str):
        if _JOINED_SCRIPT.search(text):
            yield from self.pattern.finditer(text)


def _first_words(phrases) -> frozenset[str]:
    return frozenset(words_of(fold(p))[0] for p in phrases)


def pairs(table: dict[str, tuple[tuple[str, ...], tuple[str, ...], bool]]) -> tuple[Pairs, _OnScript]:
    """The table's spaced languages, skipped unless the text has a word starting like one of
    their verbs and one like one of their objects (``guards.grammar.needing``: the rules' word
    check, done once per text), and its joined ones, run on their scripts only."""
    spaced = {language for language in table if language not in _JOINED}
    verbs = _first_words(v for language in spaced for v in table[language][0])
    nouns = _first_words(n for language in spaced for n in table[language][1])
    return (needing(Pairs(table, spaced), (frozenset(), verbs), (frozenset(), nouns)),
            _OnScript(Pairs(table, _JOINED & set(table))))


def _phrases(table: dict[str, tuple[str, ...]]) -> tuple[re.Pattern, _OnScript]:
    """The phrases of spaced languages as one pattern, run only on a text holding the longest word
    of one of them (``guards.grammar.needing``), and those of the joined scripts."""
    spaced = sorted({fold(p) for language, phrases in table.items() if language not in _JOINED for p in phrases},
                    key=len, reverse=True)
    ends = [re.escape(p) + ("" if p.endswith("'") else r"(?!\w)") for p in spaced]  # "joue le rôle d'…"
    pattern = re.compile(rf"(?<!\w)(?:{'|'.join(ends)})")
    joined = sorted({fold(p) for language, phrases in table.items() if language in _JOINED for p in phrases},
                    key=len, reverse=True)
    longest = frozenset(max(words_of(p), key=len) for p in spaced)  # the rarest word, likely
    return needing(pattern, (longest, frozenset())), _OnScript(re.compile("|".join(map(re.escape, joined))))


# each: the spaced languages' pattern and the joined ones'
OVERRIDE_PATTERNS = pairs(OVERRIDES)
EXTRACTION_PATTERNS = pairs(EXTRACTION)
PERSONA_PATTERNS = _phrases(PERSONA)
