"""The offline provider: deterministic, no network, answers only from tool results.

It behaves the way a careful model is instructed to. It reads what the visitor asks for
(``intents``): a question, the owner's availability, a message for the owner (asking once for
an e-mail address when none was given), or several at once, and calls the matching tools. Then
it answers with the sentences of the retrieved passages that answer the question (``extract``),
each with the citation syntax the hosted models use, in the visitor's language where the
knowledge base has it; it declines when nothing retrieved answers, or when the question names
something the whole knowledge base never writes.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import uuid
from dataclasses import dataclass, replace

from chat.agent.tools import ToolStatus
from chat.citations import cite
from chat.providers.base import ChatRequest, ChatResult, OnToken, ToolCall, Usage
from chat.providers.offline import library
from chat.providers.offline.extract import choose
from chat.providers.offline.intents import IntentReader, Plan
from chat.providers.offline.names import MAX_ECHO, Vocabulary, unknown_name
from chat.providers.offline.overview import asks_profile, overview_kind
from chat.providers.offline.passage import Passage
from chat.texts import text as say
from text.language import detect_language
from text.names import name_words
from text.tokens import approx_tokens
from text.words import content_words

__all__ = ["OfflineProvider"]

# The tool result statuses of draft_contact_message and what the twin then says.
_CONTACT_OUTCOMES = {
    ToolStatus.AWAITING_OWNER: "approval.pending",
    ToolStatus.ALREADY_PENDING: "approval.already_pending",
    ToolStatus.PASSED_ON: "approval.approved",
    ToolStatus.REJECTED: "approval.rejected",
    ToolStatus.EXPIRED: "approval.expired",
}
_LOOKUPS = ("search_knowledge", "check_availability")


class OfflineProvider:
    name = "offline"
    model = "offline-extractive"
    offline = True

    def __init__(self, owner: str = "the owner", max_quotes: int = 2) -> None:
        self.owner = owner
        self.max_quotes = max_quotes
        self.intents = IntentReader(owner)

    async def complete(self, request: ChatRequest, on_token: OnToken) -> ChatResult:
        turn = _Turn.read(request.messages)
        plan = self._plan(turn)
        prompt_tokens = sum(approx_tokens(m.get("content") or "") for m in request.messages)
        if not turn.results and request.tool_choice != "none":
            calls = self._tool_calls(plan)
            if calls:
                return ChatResult(
                    tool_calls=calls, finish_reason="tool_calls",
                    usage=Usage(input_tokens=prompt_tokens,
                                output_tokens=sum(approx_tokens(c.arguments) for c in calls)),
                )
        # the sentence choice runs the embedding models (chat.providers.offline.dense): off the
        # event loop, which serves every other visitor's stream meanwhile
        text = await asyncio.to_thread(self._compose, plan, turn, library.documents(request.messages),
                                       library.complete(request.messages))
        for piece in re.findall(r"\S+\s*", text):
            on_token(piece)
        return ChatResult(
            text=text, finish_reason="stop",
            usage=Usage(input_tokens=prompt_tokens, output_tokens=approx_tokens(text)),
        )

    def _plan(self, turn: _Turn) -> Plan:
        asked = any(say("offline.contact_ask", lang, owner=self.owner) in turn.last_answer for lang in ("en", "nl"))
        return self.intents.plan(turn.question, turn.earlier_questions, asked_details=asked)

    def _tool_calls(self, plan: Plan) -> list[ToolCall]:
        calls: list[ToolCall] = []
        if plan.question:
            if plan.availability:
                language = detect_language(plan.question)
                calls.append(_call("check_availability", {"language": language}))
            else:
                query = f"{plan.context} {plan.question}" if plan.context else plan.question
                calls.append(_call("search_knowledge", {"query": self._query(query)}))
        if plan.contact:
            calls.append(_call("draft_contact_message", plan.contact))
        return calls

    def _query(self, question: str) -> str:
        """The question without the owner's name: every document is about the owner, and the name
        pulls the search towards the about pages ("Has Sam run Kafka?" finds the Kafka passage
        once it reads "Has run Kafka?"). A question that is only the name keeps it."""
        names = set(name_words(self.owner))
        kept = [w for w in question.split() if w.lower().strip("?!.,:;").removesuffix("'s").removesuffix("\u2019s")
                not in names]
        return " ".join(kept) if content_words(" ".join(kept)) else question.strip()

    def _from_library(self, question: str, docs: list[library.Document], lang: str) -> str:
        """The answer to a question about a kind of document ("Which projects has she done?": each
        one's title and opening line, cited) or about the owner in general (the profile), from the
        knowledge base in the prompt; "" for any other question."""
        kind = overview_kind(question, self.owner)
        listed = library.of_kind(docs, kind, lang) if kind else []
        if listed:
            lines = [" ".join(filter(None, (f"- **{d.title}**", _language_marker(d.lang, lang).strip(),
                                            " ".join(d.opening(of_itself=True)), cite(d.title))))
                     for d in listed]
            return say(f"offline.overview.{kind}", lang, owner=self.owner) + "\n\n" + "\n".join(lines)
        profile = library.profile(docs, lang) if asks_profile(question, self.owner) else None
        if profile is None or not profile.opening():
            return ""
        return (f"{say('offline.found', lang, owner=self.owner)} {_language_marker(profile.lang, lang)}"
                f"{' '.join(profile.opening(2))} {cite(profile.title)}")

    def _compose(self, plan: Plan, turn: _Turn, docs: list[library.Document], everything: bool = False) -> str:
        """The answer. ``everything``: ``docs`` is the whole knowledge base, so a name it never writes
        is one it knows nothing about."""
        lang = detect_language(turn.question)

        def words(key: str) -> str:
            return say(key, lang, owner=self.owner)

        if plan.refused:
            return words("refuse.injection")
        parts: list[str] = []
        if plan.question and turn.results and (whole := self._from_library(plan.question, docs, lang)):
            parts.append(whole)
            plan = replace(plan, question="")  # answered; a contact request in the same turn still is
        looked_up = [(name, result) for name, result in turn.results if name in _LOOKUPS]
        passages, failed = _passages(looked_up)
        if looked_up:
            question = plan.question or turn.question
            if plan.context:  # what "it" is: the earlier question's words, without its question words
                question = f"{question} ({' '.join(content_words(plan.context))})"
            subjects = frozenset(w for d in docs if d.kind != "availability" for w in content_words(d.title))
            unknown = self._unknown_name(plan.question, looked_up, docs) if everything else None
            quotes = choose(question, passages, lang=lang, owner=self.owner, limit=self.max_quotes,
                            subjects=subjects) if (plan.question or not parts) and not unknown else []
            languages = {d.title: d.lang for d in docs}
            if unknown:
                # the name said back, unless it is too long to be one (then the plain decline)
                parts.append(say("offline.decline_name", lang, owner=self.owner, name=unknown)
                             if len(unknown) <= MAX_ECHO else words("offline.decline"))
            elif quotes:
                parts.append(words("offline.found"))
                parts.extend(f"{_language_marker(languages.get(q.title), lang)}{' '.join(q.sentences)} {cite(q.title)}"
                             for q in quotes)
            elif plan.question:
                parts.append(words("offline.tool_error" if failed and not passages else "offline.decline"))
        elif not turn.results and not plan.ask_details:
            parts.append(words("offline.decline"))  # tools are off for this call
        for name, result in turn.results:
            if name == "draft_contact_message":
                parts.append(words(_CONTACT_OUTCOMES.get(result.get("status"), "approval.invalid")))
        if plan.ask_details:
            parts.append(words("offline.contact_ask"))
        return " ".join(parts)


    def _unknown_name(self, question: str, looked_up: list[tuple[str, dict]],
                      docs: list[library.Document]) -> str | None:
        """A name a searched question asks about that the knowledge base never writes
        (``names.unknown_name``). Not for the availability check: "Is she free to work for
        Acme in May?" names the visitor's company, and the agenda answers it all the same."""
        if not question or not any(name == "search_knowledge" for name, _ in looked_up):
            return None
        return unknown_name(question, _vocabulary(tuple(f"{d.title}\n{d.body}" for d in docs)), self.owner)


@functools.lru_cache(maxsize=4)
def _vocabulary(texts: tuple[str, ...]) -> Vocabulary:
    """The knowledge base's words, read once per version of it (the prompt holds the same text
    every turn). Per process; a few versions at most."""
    return Vocabulary.read(list(texts))


def _language_marker(source: str | None, lang: str) -> str:
    """"(in Dutch) " before a quote in another language than the visitor's (said in theirs)."""
    if source in (None, lang) or source not in ("en", "nl"):
        return ""
    return say(f"offline.in_{'dutch' if source == 'nl' else 'english'}", lang) + " "


def _call(name: str, arguments: dict) -> ToolCall:
    """A call id unique per call, like a hosted model's: approvals are keyed by (conversation, call id)."""
    return ToolCall(id=f"call_{uuid.uuid4().hex[:24]}", name=name, arguments=json.dumps(arguments, ensure_ascii=False))


@dataclass
class _Turn:
    """The request read as the offline provider needs it: the visitor's latest question, the
    tool results since the last text answer (a resumed turn has no new question: its results
    follow the previous answer), the visitor's earlier messages and the twin's last answer."""

    question: str
    results: list[tuple[str, dict]]
    earlier_questions: list[str]
    last_answer: str

    @classmethod
    def read(cls, messages: list[dict]) -> _Turn:
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        question = str(messages[last_user].get("content") or "") if last_user >= 0 else ""
        answers = [i for i, m in enumerate(messages)
                   if m.get("role") == "assistant" and m.get("content") and not m.get("tool_calls")]
        last_answer = max(answers, default=-1)
        earlier = [str(m.get("content") or "") for m in messages[:max(last_user, 0)] if m.get("role") == "user"]
        before = [i for i in answers if i < last_user]
        previous = str(messages[before[-1]].get("content") or "") if before else ""
        names: dict[str, str] = {}
        results: list[tuple[str, dict]] = []
        for message in messages[max(last_user, last_answer) + 1:]:
            for call in message.get("tool_calls") or []:
                names[call["id"]] = call["function"]["name"]
            if message.get("role") == "tool":
                try:
                    payload = json.loads(message.get("content") or "{}")
                except json.JSONDecodeError:
                    payload = {"error": "unreadable tool result"}
                if not isinstance(payload, dict):
                    payload = {"error": "unexpected tool result"}
                results.append((names.get(message.get("tool_call_id", ""), ""), payload))
        return cls(question, results, earlier, previous)


def _passages(looked_up: list[tuple[str, dict]]) -> tuple[list[Passage], bool]:
    """The passages the lookups returned, ranked as they came, and whether a lookup failed."""
    passages: list[Passage] = []
    failed = False
    for name, result in looked_up:
        if "error" in result:
            failed = True
            continue
        passages += [Passage(title=str(hit.get("title", "")), heading=str(hit.get("heading", "")),
                             text=str(hit.get("text", "")), rank=rank, on_topic=name == "check_availability")
                     for rank, hit in enumerate(result.get("results") or [])]
    return passages, failed
