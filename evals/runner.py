"""Running the suites: every graph case is a fresh conversation (its own thread) whose turns go
through ``turn_run`` — the real graph, guards, budget, checkpointer and records, exactly as a
visitor's — and is graded from what was recorded. The guards suite screens its texts with the
same two steps ``guard_input`` takes (patterns on the text as typed, then the semantic screen on
the masked text's embedding)."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from django.utils import timezone

from approvals.selectors import approval_detail
from chat.agent.screening import screen_question
from chat.agent.state import Outcome
from chat.checkpoints import close_pools
from chat.providers.base import Provider
from chat.selectors import trace_for_message
from chat.services import TurnRejected, conversation_create
from chat.turns.run import TurnResult, turn_run
from evals import grading
from evals.datasets import AnswerCase, Dataset, DatasetError, TaskCase, ToolCase
from evals.grading import Grade, Observation
from guards.rules import mask_sensitive
from knowledge.embedders import embed_query, get_embedders
from knowledge.selectors import document_urls
from twinsite.db import database_sync_to_async

log = logging.getLogger(__name__)
Progress = Callable[[str, int, int, str], None]  # suite, done, total, case id


@dataclass
class CaseResult:
    case: object
    grade: Grade
    observation: Observation | None = None


@dataclass
class SuiteResult:
    dataset: Dataset
    started_at: object
    finished_at: object = None
    results: list[CaseResult] = field(default_factory=list)

    @property
    def suite(self) -> str:
        return self.dataset.suite

    @property
    def passed_count(self) -> int:
        return sum(r.grade.passed for r in self.results)

    @property
    def score(self) -> float:
        return round(self.passed_count / len(self.results), 4) if self.results else 0.0

    @property
    def passed(self) -> bool:
        return bool(self.results) and self.score >= self.dataset.threshold

    @property
    def cost_usd(self) -> Decimal:
        return sum((r.observation.cost_usd for r in self.results if r.observation), Decimal("0"))

    def metrics(self) -> dict:
        by_lang: dict[str, list[bool]] = {}
        for r in self.results:
            by_lang.setdefault(getattr(r.case, "lang", "") or "?", []).append(r.grade.passed)
        metrics: dict = {"total": len(self.results), "passed": self.passed_count,
                         "by_lang": {k: round(sum(v) / len(v), 4) for k, v in sorted(by_lang.items())}}
        if self.suite == "guards":
            attacks = [r for r in self.results if r.case.block]
            benign = [r for r in self.results if not r.case.block]
            metrics["detected"] = f"{sum(r.grade.passed for r in attacks)}/{len(attacks)}"
            metrics["false_positives"] = f"{sum(not r.grade.passed for r in benign)}/{len(benign)}"
        if self.suite in ("answers", "tools", "tasks"):
            # answers with a cited sentence their source does not say (knowledge.claims)
            metrics["unsupported"] = sum(1 for r in self.results if r.observation and r.observation.unsupported)
            metrics["doubtful"] = sum(1 for r in self.results if r.observation and r.observation.doubtful)
        if self.suite == "answers":
            # cross-lingual (the fact only in the other language) and declines, each counted apart
            for kind in ("cross", "decline"):
                chosen = [r.grade.passed for r in self.results if getattr(r.case, kind, False)]
                if chosen:
                    metrics[kind] = f"{sum(chosen)}/{len(chosen)}"
        if self.suite == "tasks":
            metrics["outcomes"] = _count(r.observation.outcome for r in self.results if r.observation)
        return metrics


def _count(values) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def check_documents(datasets: list[Dataset], known_titles: set[str]) -> None:
    """A case naming a document that is not in the knowledge base is a dataset error, not a
    failing twin (or the knowledge base was not synced)."""
    if not known_titles:
        raise DatasetError("the knowledge base is empty: run `manage.py sync_knowledge` first")
    for dataset in datasets:
        missing = sorted(dataset.document_titles() - known_titles)
        if missing:
            raise DatasetError(f"{dataset.path}: names documents that are not in the knowledge base: "
                               f"{', '.join(missing)}")


# --- graph suites -------------------------------------------------------------------------------

async def _discard(event: dict) -> None:
    return None


def observe(result: TurnResult, earlier_cost: Decimal = Decimal("0")) -> Observation:
    """Read the graded turn back from its records: the trace's tool calls, the drafted request."""
    trace = trace_for_message(message_id=result.message_id) if result.message_id else None
    calls = trace.tool_calls if trace is not None else []
    approval = None
    for call in calls:
        payload = call.get("result") if isinstance(call.get("result"), dict) else {}
        if call.get("name") == "draft_contact_message" and payload.get("approval_id"):
            approval = approval_detail(approval_id=payload["approval_id"])["arguments"]
    turn = trace.turn if trace is not None else None
    return Observation(
        outcome=result.outcome, answer=result.answer, citations=[c["title"] for c in result.citations],
        tools=[c.get("name", "") for c in calls], approval=approval,
        error=(turn.error_code if turn is not None else "") or "",
        trace_id=trace.pk if trace is not None else None,
        cost_usd=earlier_cost + (turn.cost_usd if turn is not None else Decimal("0")),
        unsupported=turn.unsupported_claims if turn is not None else 0,
        doubtful=turn.doubtful_claims if turn is not None else 0,
    )


def _turn_cost(result: TurnResult) -> Decimal:
    trace = trace_for_message(message_id=result.message_id) if result.message_id else None
    return trace.turn.cost_usd if trace is not None and trace.turn is not None else Decimal("0")


async def run_conversation(case: ToolCase | TaskCase | AnswerCase, provider: Provider) -> Observation:
    """The case's turns in a new conversation (the visitor's page in the case's language); the
    last one is observed."""
    conversation = await database_sync_to_async(conversation_create)()
    earlier = Decimal("0")
    try:
        for text in case.history:
            previous = await turn_run(conversation_id=conversation.pk, text=text, emit=_discard, provider=provider,
                                      lang=case.lang)
            earlier += await database_sync_to_async(_turn_cost)(previous)
        result = await turn_run(conversation_id=conversation.pk, text=case.turn, emit=_discard, provider=provider,
                                lang=case.lang)
    except TurnRejected as exc:
        return Observation(outcome=Outcome.ERROR, error=f"turn rejected: {exc.code}", cost_usd=earlier)
    return await database_sync_to_async(observe)(result, earlier)


def grade(case, obs: Observation, known_titles: set[str]) -> Grade:
    if isinstance(case, ToolCase):
        return grading.grade_tool(case, obs)
    if isinstance(case, TaskCase):
        return grading.grade_task(case, obs, known_titles)
    return grading.grade_answer(case, obs, known_titles)


async def run_graph_suites(datasets: list[Dataset], provider: Provider, progress: Progress) -> list[SuiteResult]:
    """Run the suites one case at a time (the order of provider requests stays deterministic, so
    "every Nth request dropped" means the same thing on every run)."""
    try:
        known = set(await database_sync_to_async(document_urls)())
        check_documents(datasets, known)
        suites = []
        for dataset in datasets:
            suite = SuiteResult(dataset=dataset, started_at=timezone.now())
            for done, case in enumerate(dataset.cases):
                progress(dataset.suite, done, len(dataset.cases), case.id)
                try:
                    obs = await run_conversation(case, provider)
                except Exception as exc:  # a crash is this case's failure, not the end of the run
                    log.exception("eval case %s crashed", case.id)
                    obs = Observation(outcome=Outcome.ERROR, error=f"{type(exc).__name__}: {exc}")
                suite.results.append(CaseResult(case=case, grade=grade(case, obs, known), observation=obs))
            progress(dataset.suite, len(dataset.cases), len(dataset.cases), "")
            suite.finished_at = timezone.now()
            suites.append(suite)
        return suites
    finally:
        await close_pools()


def run_graph_suites_sync(datasets: list[Dataset], provider: Provider, progress: Progress) -> list[SuiteResult]:
    return asyncio.run(run_graph_suites(datasets, provider, progress))


# --- the guards suite ---------------------------------------------------------------------------

def _masked_vector(embedder, text: str):
    """The question's vector as the graph embeds it: masked (the guard reads the text as typed)."""
    return embed_query([embedder], mask_sensitive(text))[embedder.name]


def run_guard_suite(dataset: Dataset, progress: Progress) -> SuiteResult:
    primary = get_embedders()[0]
    suite = SuiteResult(dataset=dataset, started_at=timezone.now())
    for done, case in enumerate(dataset.cases):
        progress(dataset.suite, done, len(dataset.cases), case.id)
        vector = functools.partial(_masked_vector, primary, case.text)
        result, _ = screen_question(case.text, embedder=primary, vector=vector)
        # kept from the model (refused or shielded) is what a case expecting a block asks
        label = f"{result.guard}/{result.rule}" if result.kept_from_model else None
        suite.results.append(CaseResult(case=case, grade=grading.grade_guard(case, label)))
    progress(dataset.suite, len(dataset.cases), len(dataset.cases), "")
    suite.finished_at = timezone.now()
    return suite
