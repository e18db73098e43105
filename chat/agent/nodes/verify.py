"""``verify``: citations checked against the knowledge base, each cited sentence against its
cited document (``knowledge.claims``), ungrounded answers flagged, the turn's outcome decided,
the checked answer appended to the history."""

from __future__ import annotations

import json
import logging
from functools import lru_cache

from django.conf import settings
from langgraph.runtime import Runtime

from chat.agent.context import TurnContext
from chat.agent.state import AgentState, Outcome
from chat.citations import cited_titles, strip_citations
from chat.texts import text as say
from knowledge import claims
from knowledge import selectors as knowledge
from knowledge.embedders import get_embedder
from text.language import detect_language
from twinsite.db import database_sync_to_async, kept_or_read

log = logging.getLogger(__name__)


async def verify(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """Check citations against the knowledge base and flag ungrounded answers. (Each model call's
    cost was settled to the budget by ``generate`` itself.)"""
    answer = state.get("answer") or ""
    known = await kept_or_read(knowledge.document_urls_kept, knowledge.document_urls)
    cited = cited_titles(answer)
    unknown = [t for t in cited if t not in known]
    if unknown:
        answer = strip_citations(answer, set(unknown))
    citations = [{"title": t, "url": known[t]} for t in cited if t in known]
    unsupported: list[claims.Unsupported] = []
    if citations and not state.get("error"):
        try:
            unsupported = await database_sync_to_async(_unsupported)(answer, list(known))
        except Exception:  # the answer was streamed and paid for: a failed check leaves it unchecked, logged
            log.exception("the claim check failed; the answer is shown unchecked")
    sourced = bool(citations)  # a marked sentence was still answered from a source the model named
    if any(u.certain for u in unsupported) and settings.TWIN_UNSUPPORTED != "log":  # a doubt changes nothing
        lang = detect_language(state.get("question") or "", runtime.context.lang)
        answer = claims.applied(answer, unsupported, settings.TWIN_UNSUPPORTED, say("claims.not_in_source", lang))
        kept = set(cited_titles(answer))
        citations = [c for c in citations if c["title"] in kept]
        if settings.TWIN_UNSUPPORTED == "strip":
            sourced = bool(citations)
            if not strip_citations(answer, kept).strip(" .\n"):  # every sentence went: nothing is left to say
                answer = say("offline.decline", lang)
    turn_messages = (state.get("messages") or [])[state.get("turn_start", 0):]
    used_tools = any(m.get("role") == "tool" and _succeeded(m) for m in turn_messages)
    long_answer = len(answer) >= settings.TWIN_GROUNDEDNESS_CHARS
    # Flagged for review: "I don't know that" has no citation either, so a short answer is not.
    risky = long_answer and not citations and not used_tools
    outcome = _outcome(state, cited=sourced, long_answer=long_answer)
    retract = risky and settings.TWIN_UNCITED == "retract" and outcome == Outcome.ANSWERED
    if retract:
        # the owner chose: an answer nothing backs is withdrawn; the visitor's screen shows the
        # decline instead (``done`` carries it), and so does the history the model sees next.
        # The withdrawn text stays in the trace, for the owner's review.
        responses = runtime.context.recorder.provider_responses
        if responses:
            responses[-1]["retracted_text"] = answer
        answer = say("offline.decline", detect_language(state.get("question") or "", runtime.context.lang))
        outcome = Outcome.DECLINED.value
    if citations:
        runtime.stream_writer({"type": "citations", "citations": citations})
    update: dict = {"answer": answer, "citations": citations, "unknown_citations": unknown,
                    "hallucination_risk": risky, "retracted": retract, "outcome": outcome,
                    "unsupported": [u.as_event() for u in unsupported]}
    if not state.get("error") and answer:
        # the answer as the visitor keeps it (unknown citations removed) becomes history
        update["messages"] = [{"role": "assistant", "content": answer}]
    return update


def _unsupported(answer: str, titles: list[str]) -> list[claims.Unsupported]:
    """The answer's cited sentences their documents do not say (a database read and one
    embedding of the sentences: on a thread, never on the event loop). The twin's own framing
    (the offline answerer's lead-ins, "(in Dutch)") is no claim."""
    owner = settings.TWIN_OWNER_NAME
    return claims.check(answer, knowledge.claim_sources(titles), get_embedder(), owner, _framing(owner))


@lru_cache(maxsize=4)
def _framing(owner: str) -> tuple[str, ...]:
    """The twin's own framing sentences in both languages, made once per owner, not per turn."""
    return tuple(say(key, lang, owner=owner) for key in ("offline.found", "offline.in_dutch", "offline.in_english",
                                                         "offline.overview.project", "offline.overview.article")
                 for lang in ("en", "nl"))


def _outcome(state: AgentState, *, cited: bool, long_answer: bool) -> str:
    if state.get("error"):
        return state.get("outcome") or Outcome.ERROR.value
    if state.get("budget_refused"):
        return Outcome.REFUSED.value  # the budget stopped the turn before this model call
    if state.get("resolved"):
        return Outcome.APPROVAL_RESOLVED.value  # the owner's decision, told to the visitor
    if state.get("queued_approval_id"):
        return Outcome.APPROVAL_PENDING.value
    if cited or long_answer:
        return Outcome.ANSWERED.value
    return Outcome.DECLINED.value  # a short answer without a source: the twin said it does not know


def _succeeded(tool_message: dict) -> bool:
    """A tool result without an error (a search that merely quotes the word "error" counts)."""
    try:
        payload = json.loads(tool_message.get("content") or "{}")
    except json.JSONDecodeError:
        return False
    return isinstance(payload, dict) and "error" not in payload
