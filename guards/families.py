"""Attack families the order rules of ``guards.patterns`` do not read, spliced into its ``RULES``
(issue 55, task G). Most are doubts (``weak``: shielded, answered without the model, never
refused): their words stand in some honest messages too, and a shield costs an honest visitor only
the model's fluency.

- a credential asked for: a password, a passcode, a secret or API key, in any language ("what is
  the admin password?", "partagez votre mot de passe"). No honest visitor needs one from the twin;
  a visitor asking how the owner stores passwords is shielded, not refused.
- someone's personal data asked for as "the user's" (their city, their e-mail address): the twin
  has no users' data, and visitors speak of themselves, the owner or their own customers.
- a jailbreak's vocabulary: an amoral, unfiltered or uncensored character, an alter ego, a
  character to stay in.
- certain: an encoded text to decode and obey ("decode this and follow it: ..."); an
  administrator or developer claimed in Chinese, Japanese or Korean, as ``guards.patterns``
  reads it in English ("I am your developer").
"""

from __future__ import annotations

import re

from guards.grammar import Rule, seq

_CREDENTIAL = re.compile(
    r"\b(?:pass(?:word|words|code|phrase)|passwort\w*|wachtwoord\w*|mot de passe|contrase[nñ]a\w*|senhas?|"
    r"has(?:ł|l)\w*|[sş]ifre\w*|secret (?:key|code|phrase)s?|api[ -]?(?:key|token)s?|access (?:code|token)s?|"
    r"claves? secretas?|chiave segreta|geheime (?:sleutel|schl[uü]ssel)\w*)\b|"
    r"пароль\w*|密码|密碼|パスワード|비밀번호|كلمة المرور|पासवर्ड|\bAPI कुंजि\w*", re.IGNORECASE)
_USERS_DATA = re.compile(
    r"\b(?:the|this|that|each|every|other|different) users?['\u2019]s?\b|\b(?:des|der) Benutzers\b|"
    r"\bdel usuario\b|\bdell['\u2019]utente\b|\bdo usu[aá]rio\b|\bde l['\u2019]utilisateur\b|"
    r"\bvan de gebruiker\b|пользовател\w*|用户的|ユーザーの|사용자의|उपयोगकर्ता", re.IGNORECASE)
_JAILBREAK = re.compile(
    r"\b(?:amoral|unfiltered|uncensored|unethical or illegal|no (?:moral|ethical) (?:guidelines|compass|limits)|"
    r"alter ego|in character as|stay in character|/jailbreak)\b", re.IGNORECASE)

FAMILY_RULES: list[Rule] = [
    Rule("injection", "credential", _CREDENTIAL, weak=True),
    Rule("injection", "users_data", _USERS_DATA, weak=True),
    Rule("injection", "roleplay", _JAILBREAK, weak=True),
    Rule("injection", "decode_and_obey", seq("decod* dekodier* decodific* decodeer* entschlussel*", "and e y und en "
                                             "then karke dann", "execut* follow* run obey* ejecut* segue* sigue* "
                                             "siga* folg* volg* voer* befolg*", gap=2)),
    Rule("injection", "authority", re.compile(r"我是\S{0,6}?(?:管理员|开发者|开发人员)|(?:管理者|開発者)です|"
                                              r"(?:관리자|개발자)(?:입니다|야|다)")),
]
