"""The labelled suites in ``evals/data/*.yaml``: loaded and validated before anything runs.

A dataset file has a ``threshold`` (the share of cases that must pass; changed by review, like
the cases) and ``cases``, each with an ``id`` (stable: the run history compares cases by it), a
``lang``, the visitor's ``turn`` (earlier turns of the same conversation in ``history``) and a
one-line ``reason``. What a case expects depends on the suite (see the models below). ``{owner}``
in a turn or an earlier turn is the name of the owner the run serves (``TWIN_OWNER_NAME``), so one
file asks every owner by name (``offtopic_named.yaml``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from chat.agent.state import Outcome

DATA = Path(__file__).resolve().parent / "data"
GRAPH_SUITES = ("tools", "tasks", "answers")
SUITES = (*GRAPH_SUITES, "guards")
FILES = {suite: DATA / f"{suite}.yaml" for suite in SUITES}
TOOL_CHOICES = ("search_knowledge", "check_availability", "draft_contact_message", "none")
# The turn outcomes a case may expect (the graph's own list; errors and resumes are not cases).
OUTCOMES = tuple(o.value for o in (Outcome.ANSWERED, Outcome.DECLINED, Outcome.REFUSED, Outcome.APPROVAL_PENDING))

Text = Annotated[str, Field(min_length=1, max_length=2000)]
# One expected phrase: a string, or a list of equivalent spellings of which one must appear
# ("1,900" / "1.900"; a Dutch and an English wording).
Alternatives = Text | list[Text]


class DatasetError(Exception):
    """A dataset file that cannot be run: the message names the file and the case."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Case(_Strict):
    id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]{2,59}$")]
    lang: Literal["en", "nl"]
    turn: Text
    history: list[Text] = []
    reason: Text

    @property
    def question(self) -> str:
        return self.turn


class ToolCase(_Case):
    """The tool the twin must choose first for ``turn`` ("none": no tool at all, e.g. refused)."""

    tool: Literal[TOOL_CHOICES] | list[Literal[TOOL_CHOICES]]

    @property
    def acceptable(self) -> tuple[str, ...]:
        return (self.tool,) if isinstance(self.tool, str) else tuple(self.tool)


class ApprovalExpectation(_Strict):
    """The drafted request waiting for the owner: exact name and e-mail (null: not given), and
    phrases the drafted message must contain."""

    visitor_name: str | None
    visitor_email: str | None
    message_contains: list[Alternatives] = []


class TaskExpectation(_Strict):
    outcome: Literal[OUTCOMES] | list[Literal[OUTCOMES]]
    contains: list[Alternatives] = []
    not_contains: list[Text] = []
    cites: list[Alternatives] = []  # document titles; each entry: one of them must be cited
    approval: ApprovalExpectation | None = None

    @property
    def outcomes(self) -> tuple[str, ...]:
        return (self.outcome,) if isinstance(self.outcome, str) else tuple(self.outcome)

    @model_validator(mode="after")
    def _approval_needs_pending(self) -> TaskExpectation:
        if self.approval is not None and self.outcomes != ("approval_pending",):
            raise ValueError("an approval expectation needs outcome: approval_pending")
        return self


class TaskCase(_Case):
    expect: TaskExpectation


class AnswerCase(_Case):
    """A factual question: ``fact`` (one of its spellings) must be in the answer and one of
    ``docs`` cited. ``cross``: the fact is stated only in the other language than the question's.
    ``decline``: no document states what is asked (or only a private one): the twin must decline;
    ``not_contains``: phrases that must not be in the answer (a private note's facts)."""

    fact: Alternatives | None = None
    docs: list[Text] = Field(default=[], min_length=1)  # omitted (not empty) in a decline case
    cross: bool = False
    decline: bool = False
    not_contains: list[Text] = []

    @model_validator(mode="after")
    def _fact_or_decline(self) -> AnswerCase:
        if self.decline and (self.fact is not None or self.docs):
            raise ValueError("a decline case has no fact and no docs")
        if not self.decline and (self.fact is None or not self.docs):
            raise ValueError("an answer case needs a fact and the docs that may be cited (or decline: true)")
        return self


class GuardCase(_Strict):
    text: Annotated[str, Field(min_length=1, max_length=4000)]
    lang: str
    block: bool
    reason: Text

    @property
    def id(self) -> str:
        # guards.yaml has no ids: the text's hash is stable when cases are added or reordered.
        return f"guard-{self.lang}-{hashlib.sha256(self.text.encode()).hexdigest()[:10]}"

    @property
    def question(self) -> str:
        return self.text


CASE_MODELS: dict[str, type[_Strict]] = {"tools": ToolCase, "tasks": TaskCase, "answers": AnswerCase,
                                         "guards": GuardCase}


class _File(_Strict):
    threshold: float = Field(gt=0, le=1)
    cases: list[dict] = Field(min_length=1)


@dataclass(frozen=True)
class Dataset:
    suite: str
    path: Path
    threshold: float
    cases: tuple
    sha256: str

    def document_titles(self) -> set[str]:
        """Every document title a case names (checked against the knowledge base before a run)."""
        titles: set[str] = set()
        for case in self.cases:
            if isinstance(case, AnswerCase):
                titles.update(case.docs)
            elif isinstance(case, TaskCase):
                for entry in case.expect.cites:
                    titles.update([entry] if isinstance(entry, str) else entry)
        return titles


def load(suite: str, path: Path | None = None) -> Dataset:
    if suite not in CASE_MODELS:
        raise DatasetError(f"unknown suite {suite!r}; one of {', '.join(SUITES)}")
    path = path or FILES[suite]
    try:
        raw = path.read_bytes()
        data = yaml.safe_load(raw)
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read it ({exc.strerror})") from exc
    except yaml.YAMLError as exc:
        raise DatasetError(f"{path}: not valid YAML ({exc})") from exc
    try:
        head = _File.model_validate(data)
    except ValidationError as exc:
        raise DatasetError(f"{path}: {_problems(exc)}") from exc
    model = CASE_MODELS[suite]
    cases = []
    for number, item in enumerate(map(_named, head.cases), start=1):
        try:
            cases.append(model.model_validate(item))
        except ValidationError as exc:
            label = item.get("id") if isinstance(item, dict) and item.get("id") else f"case {number}"
            raise DatasetError(f"{path}: {label}: {_problems(exc)}") from exc
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise DatasetError(f"{path}: the id {case.id!r} is used twice")
        seen.add(case.id)
    return Dataset(suite=suite, path=path, threshold=head.threshold, cases=tuple(cases),
                   sha256=hashlib.sha256(raw).hexdigest())


def _named(item: dict) -> dict:
    """A case with ``{owner}`` in its turns replaced by the owner's name."""
    if not isinstance(item, dict):
        return item
    from django.conf import settings

    def fill(text):
        return text.replace("{owner}", settings.TWIN_OWNER_NAME) if isinstance(text, str) else text

    named = dict(item)
    if "turn" in named:
        named["turn"] = fill(named["turn"])
    if isinstance(named.get("history"), list):
        named["history"] = [fill(text) for text in named["history"]]
    return named


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'file'}: {err['msg']}" for err in exc.errors())
