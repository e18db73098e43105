"""The input screen's three verdicts: ``refuse``, ``shield``, ``pass``. Pure: no Django.

- ``refuse``: what is certainly not a question for the twin. A sensitive number (a card by Luhn,
  an IBAN by mod 97, an account number with bank words), a pattern of an order given to the model
  (override, extraction of the instructions, a persona set up, fake turns and role markers, an
  authority claimed, a dictated answer), off-topic work. The visitor gets the polite refusal.
- ``shield``: what is doubtful. An order's words asked inside a question, or quoted; an
  instruction that only reads as one across the visitor's last messages; off-topic work asked
  about the owner ("write a blog post about her project": the knowledge base has her words); a
  weak family (``guards.families``: a credential or "the user's" data asked for, a jailbreak's
  words); a semantic score in the doubt band. The turn is answered without the model: the
  offline answerer quotes and cites the knowledge base (or declines), spends nothing, and calls
  no tool the model chose.
- ``pass``: the model answers, as it always did.

The semantic screen alone never refuses: its margin says how a message sounds, not what it
asks, and honest questions reach any margin an attack reaches (docs/GUARDS.md has the curve).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from guards.rules import Verdict

REFUSE, SHIELD, PASS = "refuse", "shield", "pass"

# What each doubt says, for the reason an owner reads in the admin.
_DOUBTS = {
    "asked": "an order's words asked in a question",
    "quoted": "an order's words quoted",
    "turns": "an order read across the visitor's last messages",
    "weak": "a weak pattern",
    "owner": "work or a set-up about the owner's content",
}


@dataclass(frozen=True)
class ScreenResult:
    verdict: str  # refuse | shield | pass
    guard: str = ""  # GuardIncident.Guard value of what fired ("" for pass)
    rule: str = ""  # the pattern rule, or "semantic"
    score: float | None = None  # the semantic margin (attack - benign), when it was computed
    reason: str = ""  # why, in a few words (TurnLog.shield_reason for a shield)
    view: str = ""
    matched: str = ""  # the matched words (sensitive numbers masked)

    @property
    def kept_from_model(self) -> bool:
        return self.verdict != PASS

    def as_dict(self) -> dict:
        return {key: value for key, value in asdict(self).items() if value not in ("", None)}


def decide(pattern: Verdict | None, margin: float | None, *, shield_from: float | None) -> ScreenResult:
    """The verdict from the pattern screen's verdict (``guards.rules.screen`` or ``screen_turns``)
    and the semantic margin (None when the screen did not judge the text): a certain pattern
    refuses; a doubtful pattern, or a margin at or above ``shield_from``, shields."""
    score = None if margin is None else round(margin, 4)
    if pattern is not None and pattern.certain:
        return ScreenResult(REFUSE, pattern.guard, pattern.rule, score, f"{pattern.guard}/{pattern.rule}",
                            pattern.view, pattern.matched)
    if pattern is not None:
        reason = f"{_DOUBTS.get(pattern.doubt, pattern.doubt)}: {pattern.guard}/{pattern.rule}"
        return ScreenResult(SHIELD, pattern.guard, pattern.rule, score, reason[:200], pattern.view, pattern.matched)
    if margin is not None and shield_from is not None and margin >= shield_from:
        return ScreenResult(SHIELD, "injection", "semantic", score,
                            f"semantic margin {margin:.4f} >= {shield_from:.4f}", "embedding")
    return ScreenResult(PASS, score=score)
