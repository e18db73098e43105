"""A turn's record: the assistant message, TurnLog and AgentTrace in one transaction, its
model calls' costs settled and its ledger entries linked in the same one, an unanswered question
kept; and the one JSON log line per turn.

Written at a turn's end by ``chat.turns.run`` (and by ``chat.turns.recovery`` for a turn whose process
died). Everything a visitor typed is scrubbed (secrets, card and account numbers) first.
"""

from __future__ import annotations

import collections
import hashlib
import logging
import uuid

from django.conf import settings
from django.db import transaction

from approvals.drafts import CONTACT_TOOL
from budget import services as budget_services
from chat.agent.recorder import TurnRecorder
from chat.agent.state import Outcome
from chat.models import AgentTrace, Message, PromptSnapshot, TurnLog, UnansweredQuestion
from chat.providers.pricing import round_usd
from chat.selectors import question_subject_vector
from chat.texts import text as say
from guards import limits
from guards.scrub import scrub, scrub_text

turns_log = logging.getLogger("twinsite.turns")
log = logging.getLogger(__name__)


def turn_record(*, conversation_id: uuid.UUID | str, user_message: Message | None, recorder: TurnRecorder,
                state: dict, outcome: str, answer: str, error_code: str = "",
                slot: str = "") -> tuple[Message, TurnLog]:
    """Assistant message, TurnLog and AgentTrace, in one transaction (and for a declined
    question its UnansweredQuestion, grouped by subject: the subject is embedded first, outside
    the transaction), with the settlement of the calls the turn has not settled yet
    (``recorder.unsettled``) and the freeing of the address's running-turn ``slot``."""
    subject = None
    unanswered = outcome == Outcome.DECLINED and user_message is not None and not contact_handled(recorder, answer)
    if unanswered and recorder.question_vector:
        try:
            subject = question_subject_vector(scrub_text(user_message.content), settings.TWIN_OWNER_NAME)
        except Exception:  # the turn is recorded whatever the embedding model does
            log.warning("the unanswered question's subject could not be embedded; grouped by the whole question",
                        exc_info=True)
            subject = recorder.question_vector
    return _turn_rows(conversation_id=conversation_id, user_message=user_message, recorder=recorder, state=state,
                      outcome=outcome, answer=answer, error_code=error_code, subject_vector=subject,
                      unanswered=unanswered, slot=slot)


def contact_handled(recorder: TurnRecorder, answer: str) -> bool:
    """The turn was the visitor reaching the owner, and the twin took it up: it drafted the
    message (or tried to: a draft without an e-mail address goes back to the model), or asked for
    what a draft needs. A short uncited answer, so "declined"; but nothing the knowledge base
    lacked, so not an unanswered question for the owner to teach."""
    if any(call.get("name") == CONTACT_TOOL for call in recorder.tool_calls):
        return True
    owner = settings.TWIN_OWNER_NAME
    return any(say("offline.contact_ask", lang, owner=owner) in answer for lang in ("en", "nl"))


@transaction.atomic
def _turn_rows(*, conversation_id: uuid.UUID | str, user_message: Message | None, recorder: TurnRecorder,
               state: dict, outcome: str, answer: str, error_code: str,
               subject_vector: list[float] | None, unanswered: bool, slot: str = "") -> tuple[Message, TurnLog]:
    citations = state.get("citations") or []
    message = Message.objects.create(
        conversation_id=conversation_id, role=Message.Role.ASSISTANT, content=answer, citations=citations
    )
    usage = recorder.usage
    screen = state.get("screen") or {}
    verdict = screen.get("verdict") or TurnLog.ScreenVerdict.PASS
    turn = TurnLog.objects.create(
        conversation_id=conversation_id, user_message=user_message, assistant_message=message,
        outcome=outcome, provider=recorder.provider, model=recorder.model,
        input_tokens=usage.input_tokens, cached_tokens=usage.cached_tokens, output_tokens=usage.output_tokens,
        cost_usd=round_usd(recorder.cost_usd), latency_ms=recorder.elapsed_ms(),
        node_latency_ms=recorder.node_latency_ms, tool_rounds=state.get("tool_rounds") or 0,
        hallucination_risk=bool(state.get("hallucination_risk")), retracted=bool(state.get("retracted")),
        usage_estimated=recorder.usage_estimated, **claim_counts(state.get("unsupported") or []),
        unknown_citations=state.get("unknown_citations") or [], state_tokens=recorder.state_tokens,
        view_tokens=recorder.view_tokens, error_code=error_code, screen_verdict=verdict,
        shield_reason=scrub_text(screen.get("reason") or "")[:200] if verdict == TurnLog.ScreenVerdict.SHIELD else "",
    )
    AgentTrace.objects.create(
        message=message, turn=turn, system_prompt=_prompt_snapshot(recorder.system_prompt),
        knowledge_sha256=recorder.knowledge_sha256, retrieved=scrub(recorder.retrieved),
        guard=scrub({"verdict": state.get("guard"), "screen": screen, "semantic": recorder.guard_scores}),
        tool_calls=scrub(recorder.tool_calls), provider_responses=scrub(recorder.provider_responses),
        unsupported=scrub(state.get("unsupported") or []), error=scrub_text(recorder.error),
    )
    if unanswered:
        UnansweredQuestion.objects.create(
            conversation_id=conversation_id, question=scrub_text(user_message.content), reason="no_source",
            embedding=subject_vector,
        )
    if slot:  # the turn's work is done: its address may start another (one transaction less a turn)
        limits.turn_slot_free(slot=slot)
    # last: the day's meter stays locked from here to the commit (budget_services.budgets_settle)
    # which also links the entries it settles to the turn; the rest (settled by a reservation of a
    # later call, or expired meanwhile) in one statement more
    settled = budget_services.budgets_settle(recorder.unsettled, turn_id=turn.pk)
    if rest := set(recorder.ledger_entry_ids) - settled:
        budget_services.entries_link(entry_ids=rest, turn_id=turn.pk)
    return message, turn


def claim_counts(findings: list[dict]) -> dict:
    """The claim check's findings as the turn log keeps them: the certain ones (shown to the
    visitor) and the doubts (kept for the owner), and how many of each kind ("name", "far", …),
    a doubt's kind marked with a trailing "?"."""
    certain = sum(1 for f in findings if f.get("certain"))
    kinds = collections.Counter(f"{f.get('kind') or f.get('reason')}{'' if f.get('certain') else '?'}"
                                for f in findings)
    return {"unsupported_claims": min(certain, 32767), "doubtful_claims": min(len(findings) - certain, 32767),
            "claim_kinds": dict(sorted(kinds.items()))}


def _prompt_snapshot(system_prompt: str) -> PromptSnapshot | None:
    if not system_prompt:
        return None
    digest = hashlib.sha256(system_prompt.encode()).hexdigest()
    # The prompt is the same for most turns: scrub it (~18k characters) only when it is new.
    # only its key: the row's text is the prompt itself, 18k characters read back for nothing
    return PromptSnapshot.objects.only("pk").filter(sha256=digest).first() or PromptSnapshot.objects.get_or_create(
        sha256=digest, defaults={"text": scrub_text(system_prompt)})[0]


def turn_logged(turn: TurnLog, *, refusal: str = "") -> None:
    """Write the turn's JSON line (logger ``twinsite.turns``): what happened, what it used, what it
    cost, how long it took. Only values the code computed, never visitor text."""
    fields = {
        "event": "turn", "turn_id": turn.pk, "conversation": str(turn.conversation_id), "outcome": turn.outcome,
        "refusal": refusal, "error_code": turn.error_code, "provider": turn.provider, "model": turn.model,
        "input_tokens": turn.input_tokens, "cached_tokens": turn.cached_tokens, "output_tokens": turn.output_tokens,
        "cost_usd": float(turn.cost_usd), "latency_ms": turn.latency_ms, "tool_rounds": turn.tool_rounds,
        "hallucination_risk": turn.hallucination_risk, "retracted": turn.retracted,
        "unsupported_claims": turn.unsupported_claims, "doubtful_claims": turn.doubtful_claims,
        "screen_verdict": turn.screen_verdict,
    }
    turns_log.info("turn %s %s", turn.pk, turn.outcome, extra={"fields": fields})
