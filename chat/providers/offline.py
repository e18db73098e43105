"""The offline provider: deterministic, no network, answers only from tool results.

It behaves the way a careful model is instructed to: it picks a tool from what the visitor
asked, then composes an answer that quotes the retrieved passages with the same citation
syntax the hosted models use, and declines when retrieval found nothing relevant.
"""

from __future__ import annotations

import json
import re
import uuid

from chat.citations import cite
from chat.lang import detect_language
from chat.providers.base import ChatRequest, ChatResult, OnToken, ToolCall, Usage
from chat.texts import text as say
from chat.tokens import approx_tokens

_CONTACT = re.compile(
    r"\b(?:contact|get in touch|reach (?:her|him|them|out)|put me in touch|hire (?:her|him|them)|"
    r"(?:send|pass|leave|forward|give|drop)\b[^.?!\n]{0,30}\b(?:message|note)|"
    r"(?:e-?mail|message) (?:her|him|them)\b|"
    r"neem contact|contact (?:op)?nemen|in contact|"
    r"bericht(?:je)?\b[^.?!\n]{0,30}\b(?:door(?:sturen|geven|spelen)|sturen|versturen|achterlaten)|"
    r"(?:stuur|geef|stuurt|geeft)\b[^.?!\n]{0,30}\bbericht|mail(?:en)? (?:haar|hem))",
    re.IGNORECASE,
)
_AVAILABILITY = re.compile(
    r"\b(availab\w*|free ?lance\w*|when can (?:she|mira) start|(?:day )?rates?|hourly|tarie\w*|"
    r"beschikba\w*|uurtarief|dagtarief|wat kost|how much does|kost ze|open to (?:work|new)|start date)\b",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NAME = re.compile(
    r"(?i:my name is|i am|i'm|this is|ik ben|mijn naam is|ik heet)\s+([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)"
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\w+", re.UNICODE)

# The tool result statuses of draft_contact_message and what the twin then says.
_CONTACT_OUTCOMES = {
    "awaiting_owner_approval": "approval.pending",
    "already_pending": "approval.already_pending",
    "approved_and_passed_on": "approval.approved",
    "rejected_by_owner": "approval.rejected",
    "expired": "approval.expired",
}


class OfflineProvider:
    name = "offline"
    model = "offline-extractive"
    offline = True

    def __init__(self, owner: str = "the owner", max_quotes: int = 2) -> None:
        self.owner = owner
        self.max_quotes = max_quotes

    async def complete(self, request: ChatRequest, on_token: OnToken) -> ChatResult:
        question, results = _active_turn(request.messages)
        prompt_tokens = sum(approx_tokens(m.get("content") or "") for m in request.messages)
        if not results and request.tool_choice != "none":
            call = self._choose_tool(question)
            return ChatResult(
                tool_calls=[call], finish_reason="tool_calls",
                usage=Usage(input_tokens=prompt_tokens, output_tokens=approx_tokens(call.arguments)),
            )
        text = self._compose(question, results)
        for piece in re.findall(r"\S+\s*", text):
            on_token(piece)
        return ChatResult(
            text=text, finish_reason="stop",
            usage=Usage(input_tokens=prompt_tokens, output_tokens=approx_tokens(text)),
        )

    def _choose_tool(self, question: str) -> ToolCall:
        if _CONTACT.search(question):
            email = _EMAIL.search(question)
            name = _NAME.search(question)
            args = {
                "visitor_name": name.group(1) if name else None,
                "visitor_email": email.group(0) if email else None,
                "message": question.strip(),
            }
            return ToolCall(id=_call_id(), name="draft_contact_message", arguments=json.dumps(args))
        if _AVAILABILITY.search(question):
            return ToolCall(id=_call_id(), name="check_availability",
                            arguments=json.dumps({"language": detect_language(question)}))
        return ToolCall(id=_call_id(), name="search_knowledge", arguments=json.dumps({"query": question.strip()}))

    def _compose(self, question: str, results: list[tuple[str, dict]]) -> str:
        lang = detect_language(question)

        def words(key: str) -> str:
            return say(key, lang, owner=self.owner)

        passages: list[dict] = []
        for name, result in results:
            if name == "draft_contact_message":
                return words(_CONTACT_OUTCOMES.get(result.get("status"), "approval.invalid"))
            if "error" in result:
                if not passages:
                    return words("offline.tool_error")
                continue
            passages.extend(result.get("results") or [])
        if not passages:
            return words("offline.decline")
        wanted = _stems(question)
        # Passages rank by the words they share with the question, the tool's top hit with one
        # word's head start; after the first quote, a passage sharing no word is left out.
        scored = sorted(
            range(len(passages)),
            key=lambda i: (-(len(_stems(passages[i]["text"]) & wanted) + (1 if i == 0 else 0)), i),
        )
        quotes: list[str] = []
        seen: set[tuple[str, str]] = set()
        for i in scored:
            passage = passages[i]
            key = (passage["title"], passage.get("heading", ""))
            if len(quotes) >= self.max_quotes or key in seen:
                continue
            if quotes and not (_stems(passage["text"]) & wanted):
                continue
            seen.add(key)
            quotes.append(f"{_best_sentences(question, passage['text'])} {cite(passage['title'])}")
        return " ".join([words("offline.found"), *quotes])


def _stems(text: str) -> set[str]:
    return {w[:5] for w in _WORD.findall(text.lower()) if len(w) > 3}


def _best_sentences(question: str, text: str, limit: int = 2) -> str:
    sentences = [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]
    if not sentences:
        return text.strip()
    wanted = _stems(question)
    scored = sorted(range(len(sentences)), key=lambda i: (-len(_stems(sentences[i]) & wanted), i))
    chosen = sorted(scored[:limit])  # keep the document's order
    return " ".join(sentences[i] for i in chosen)


def _call_id() -> str:
    """Unique per call, like a hosted model's: approvals are keyed by (conversation, call id)."""
    return f"call_{uuid.uuid4().hex[:24]}"


def _active_turn(messages: list[dict]) -> tuple[str, list[tuple[str, dict]]]:
    """The visitor's latest question and the tool results since the last text answer (a resumed
    turn has no new question: its results follow the previous answer)."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    question = str(messages[last_user].get("content") or "") if last_user >= 0 else ""
    last_answer = max((i for i, m in enumerate(messages)
                       if m.get("role") == "assistant" and m.get("content") and not m.get("tool_calls")), default=-1)
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
    return question, results
