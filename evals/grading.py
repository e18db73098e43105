"""Deterministic grading of what a turn did against what a case expects. Pure functions: the
runner observes the turn (outcome, answer, citations, tools, drafted request) and these decide.

Two checks hold for every graph case with an answer: a citation must name a document that
exists in the knowledge base (checked here against the documents table, independently of the
graph's own verification), and a turn that failed (``error``/``aborted``) never passes.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal

from chat.agent.state import Outcome
from chat.citations import cited_titles
from evals.datasets import AnswerCase, GuardCase, TaskCase, ToolCase
from text.quotes import straighten

NO_TOOL = "none"


@dataclass
class Observation:
    """What one graded turn did, read back from its records."""

    outcome: str
    answer: str = ""
    citations: list[str] = field(default_factory=list)  # titles the visitor was shown as sources
    tools: list[str] = field(default_factory=list)  # tools called in the graded turn, in order
    approval: dict | None = None  # the drafted request's arguments, when the turn queued one
    error: str = ""
    trace_id: int | None = None
    cost_usd: Decimal = Decimal("0")
    unsupported: int = 0  # cited sentences the claim check did not find in their source (certain)
    doubtful: int = 0  # cited sentences the claim check doubts (the visitor's text unchanged)

    def as_dict(self) -> dict:
        return {"outcome": self.outcome, "answer": self.answer[:2000], "citations": self.citations,
                "tools": self.tools, "approval": self.approval, "error": self.error,
                "unsupported": self.unsupported, "doubtful": self.doubtful}


@dataclass
class Grade:
    passed: bool
    expected: str  # one line for the table
    got: str
    failures: list[str] = field(default_factory=list)


_SPACES = re.compile(r"\s+")
_DASHES = str.maketrans({"\u2013": "-", "\u2014": "-"})


def normalise(text: str) -> str:
    """Case, width, non-breaking spaces and typographic quotes do not decide a grade."""
    return _SPACES.sub(" ", straighten(unicodedata.normalize("NFKC", text)).translate(_DASHES)).casefold().strip()


def _options(entry: str | list[str]) -> list[str]:
    return [entry] if isinstance(entry, str) else list(entry)


def contains(text: str, entry: str | list[str]) -> bool:
    haystack = normalise(text)
    return any(normalise(option) in haystack for option in _options(entry))


def _label(entry: str | list[str]) -> str:
    return " / ".join(_options(entry))


def invented_citations(answer: str, known_titles: set[str]) -> list[str]:
    """Citations in the answer the visitor reads that name no document of the knowledge base."""
    return [title for title in cited_titles(answer) if title not in known_titles]


def _common(obs: Observation, known_titles: set[str]) -> list[str]:
    failures = []
    if obs.outcome in (Outcome.ERROR, Outcome.ABORTED) or obs.error:
        failures.append(f"turn failed: {obs.error or obs.outcome}")
    invented = invented_citations(obs.answer, known_titles)
    if invented:
        failures.append(f"cites documents that do not exist: {', '.join(invented)}")
    return failures


def grade_tool(case: ToolCase, obs: Observation) -> Grade:
    chosen = obs.tools[0] if obs.tools else NO_TOOL
    failures = [] if chosen in case.acceptable else [f"chose {chosen}"]
    if obs.outcome in (Outcome.ERROR, Outcome.ABORTED) or obs.error:
        failures.append(f"turn failed: {obs.error or obs.outcome}")
    return Grade(passed=not failures, expected=" | ".join(case.acceptable), got=", ".join(obs.tools) or NO_TOOL,
                 failures=failures)


def grade_task(case: TaskCase, obs: Observation, known_titles: set[str]) -> Grade:
    expect = case.expect
    failures = _common(obs, known_titles)
    if obs.outcome not in expect.outcomes:
        failures.append(f"outcome {obs.outcome}")
    failures += [f"missing {_label(e)!r}" for e in expect.contains if not contains(obs.answer, e)]
    failures += [f"contains {p!r}" for p in expect.not_contains if contains(obs.answer, p)]
    failures += [f"does not cite {_label(e)}" for e in expect.cites if not set(_options(e)) & set(obs.citations)]
    if expect.approval is not None:
        failures += _approval_failures(expect.approval, obs.approval)
    parts = [" | ".join(expect.outcomes)]
    parts += [f"+{_label(e)}" for e in expect.contains] + [f"-{p}" for p in expect.not_contains]
    parts += [f"cites {_label(e)}" for e in expect.cites]
    if expect.approval is not None:
        parts.append(f"draft from {expect.approval.visitor_name} <{expect.approval.visitor_email}>")
    got = obs.outcome + (f" ({'; '.join(failures)})" if failures else "")
    return Grade(passed=not failures, expected="; ".join(parts), got=got, failures=failures)


def _approval_failures(expected, drafted: dict | None) -> list[str]:
    if drafted is None:
        return ["no request waits for the owner"]
    failures = []
    for key in ("visitor_name", "visitor_email"):
        want, have = getattr(expected, key), drafted.get(key)
        same = (want is None and not have) or (want is not None and have is not None
                                                and normalise(want) == normalise(have))
        if not same:
            failures.append(f"{key} {have!r}, expected {want!r}")
    message = str(drafted.get("message") or "")
    failures += [f"draft lacks {_label(e)!r}" for e in expected.message_contains if not contains(message, e)]
    return failures


def grade_answer(case: AnswerCase, obs: Observation, known_titles: set[str]) -> Grade:
    failures = _common(obs, known_titles)
    failures += [f"says {phrase!r}" for phrase in case.not_contains if contains(obs.answer, phrase)]
    if case.decline:
        if obs.outcome != Outcome.DECLINED:
            failures.append(f"{obs.outcome}, not declined")
        expected = Outcome.DECLINED + (f", never {', '.join(case.not_contains)}" if case.not_contains else "")
    else:
        if not contains(obs.answer, case.fact):
            failures.append(f"missing {_label(case.fact)!r}")
        if not set(case.docs) & set(obs.citations):
            failures.append(f"cites {', '.join(obs.citations) or 'nothing'}")
        expected = f"{_label(case.fact)} [{' | '.join(case.docs)}]"
    return Grade(passed=not failures, expected=expected,
                 got=obs.outcome + (f" ({'; '.join(failures)})" if failures else ""), failures=failures)


def grade_guard(case: GuardCase, verdict: str | None) -> Grade:
    """``verdict`` is ``guard/rule`` when the screen kept the text from the model (refused or shielded), else None."""
    blocked = verdict is not None
    ok = blocked == case.block
    return Grade(passed=ok, expected="block" if case.block else "pass", got=verdict or "pass",
                 failures=[] if ok else ["missed" if case.block else "false positive"])
