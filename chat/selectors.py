"""Reads of chat's tables: the staff "why" panel (one turn's trace, shaped to be read in thirty
seconds), what a reconnecting page missed, the transcript behind a contact request."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import TYPE_CHECKING

import numpy as np
from django.db.models import Case, CharField, F, IntegerField, OuterRef, Subquery, Value, When, Window
from django.db.models.functions import Cast, Coalesce, NullIf, RowNumber

from approvals.selectors import approval_states
from chat.models import AgentTrace, Message, UnansweredQuestion
from chat.texts import text as say
from knowledge.embedders import embed_query_futures, get_embedders
from knowledge.models import Document
from knowledge.watch import WATCH

if TYPE_CHECKING:
    from approvals.models import PendingApproval


def starter_questions(lang: str = "en", limit: int = 4) -> list[str]:
    """A few questions the knowledge base can answer, made from its documents' titles and kinds,
    preferring documents in the visitor's language. Read once per announced knowledge change
    (``knowledge.watch``; on every page while the process hears none), not four queries a page."""
    return list(WATCH.cached(f"starter_questions:{lang}:{limit}", lambda: _starter_questions(lang, limit)))


def _starter_questions(lang: str, limit: int) -> tuple[str, ...]:
    kinds = ("cv", "project", "availability", "article")
    # each kind's first document by path in each language (DISTINCT ON): one query
    firsts = (Document.objects.filter(kind__in=kinds).order_by("kind", "lang", "path").distinct("kind", "lang")
              .values_list("kind", "lang", "path", "title"))
    chosen: dict[str, tuple[bool, str, str]] = {}
    for kind, language, path, title in firsts:
        rank = (language != lang, path, title)  # the visitor's language first, then the first by path
        chosen[kind] = min(chosen.get(kind, rank), rank)
    questions = [say(f"starter.{kind}", lang, name=chosen[kind][2].split(":", 1)[-1].strip())
                 for kind in kinds if kind in chosen]
    return tuple(questions[:limit])


def trace_for_message(*, message_id: int) -> AgentTrace | None:
    return (AgentTrace.objects.select_related("turn__user_message", "message", "system_prompt")
            .filter(message_id=message_id).first())


def incident_trace_id() -> Case:
    """For annotating GuardIncidents: the trace of the turn an incident happened in.

    An incident has no link to its turn, but the link is exact by time: a guard records it
    after the turn stored the visitor's message and before the TurnLog is written, and a
    conversation runs one turn at a time (advisory lock), so exactly one turn of the
    conversation brackets it. Rate-limit incidents happen outside any turn (the question was
    refused before one started) and get none."""
    bracketing = (AgentTrace.objects
                  .filter(turn__conversation_id=OuterRef("conversation_id"),
                          turn__user_message__created_at__lte=OuterRef("created_at"),
                          turn__created_at__gte=OuterRef("created_at"))
                  .order_by("turn__created_at").values("pk")[:1])
    return Case(When(guard="rate_limit", then=Value(None)), default=Subquery(bracketing),
                output_field=IntegerField())


def why_context(trace: AgentTrace) -> dict:
    turn = trace.turn
    latency = (turn.node_latency_ms if turn is not None else None) or {}
    slowest = max(latency.values(), default=0) or 1
    retrieved = sorted(trace.retrieved or [], key=lambda h: -(h.get("fused_score") or 0))
    return {
        "trace": trace,
        "turn": turn,
        "question": turn.user_message.content if turn and turn.user_message else "",
        "answer": trace.message.content,
        "verdict": (trace.guard or {}).get("verdict"),
        "semantic": (trace.guard or {}).get("semantic") or {},
        "retrieved": [{**hit, "dense": _num(hit.get("dense_score")), "second": _num(hit.get("second_score")),
                       "fulltext": _num(hit.get("fulltext_score")),
                       "fused": _num(hit.get("fused_score"), 4)} for hit in retrieved],
        "tool_calls": [{**call, "result_text": json.dumps(call.get("result"), indent=2, ensure_ascii=False)}
                       for call in trace.tool_calls or []],
        "latency": [{"node": node, "ms": ms, "of": slowest} for node, ms in latency.items()],
        "raw": json.dumps(trace.provider_responses, indent=2, ensure_ascii=False, default=str),
    }


def _num(value, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def conversation_since(*, conversation_id, after: int) -> dict:
    """The answers of a conversation after message ``after`` and its contact requests' states:
    what a page that lost its socket missed (the ``history`` event, docs/PROTOCOL.md)."""
    answers = (Message.objects.filter(conversation_id=conversation_id, role=Message.Role.ASSISTANT, pk__gt=after)
               .select_related("turn").order_by("pk"))
    return {
        "messages": [{"message_id": m.pk, "answer": m.content, "citations": m.citations,
                      "outcome": getattr(getattr(m, "turn", None), "outcome", "")} for m in answers],
        "approvals": approval_states(conversation_id=conversation_id),
    }


def approval_transcript(approval: PendingApproval) -> list[dict]:
    """The conversation's messages up to a contact request (the owner reads what led to it)."""
    return list(Message.objects.filter(conversation_id=approval.conversation_id,
                                       created_at__lte=approval.created_at)
                .values("role", "content", "created_at"))


def question_subject(question: str, owner: str) -> str:
    """What a question is about, without whom: the owner's name (and its possessive) and "the
    owner" taken out. Every question a visitor asks names the owner, and the model puts two
    questions that share only the name close together ("Where did Anna study?" and "What is
    Anna's salary?"; measured on the sample owner's questions: 0.90-0.94 with the name, 0.80-0.81
    without)."""
    names = "|".join(re.escape(word) for word in owner.split() if len(word) > 1)
    pattern = r"\b(?:the owner|de eigenaar" + (rf"|(?:{names})(?:['\u2019]s)?" if names else "") + r")\b"
    subject = re.sub(r"\s+([?!.,;:])", r"\1", " ".join(re.sub(pattern, " ", question, flags=re.IGNORECASE).split()))
    return subject if re.search(r"\w", subject) else question


def question_subject_vector(question: str, owner: str) -> list[float]:
    """The primary model's vector of the question's subject (``question_subject``), for grouping."""
    embedder = get_embedders()[0]
    vector = embed_query_futures([embedder], question_subject(question, owner))[embedder.name].result()
    return [float(x) for x in vector]


# Two questions on one subject, as the owner would group them: measured on two small labelled sets
# of questions naming the owner (5 and 6 subjects, 12 and 14 questions; the second written after
# the threshold was chosen on the first). Subjects at 0.87: pairs together 4/9 and 5/8, apart
# 53/57 and 68/70; the whole question at 0.90 (before): together 2/9 and 1/8, apart 35/57 and 55/70.
GROUP_THRESHOLD = 0.87


def group_questions(rows: list[dict], threshold: float = GROUP_THRESHOLD) -> list[dict]:
    """Questions of one subject together, by cosine similarity (e5 vectors are normalised) of the
    stored subject vectors (``question_subject_vector``). The questions with the most near
    neighbours (at least ``threshold``) found groups first; a question joins the group it resembles
    best, and only when it resembles every question already there by at least ``threshold``
    (complete linkage). Resembling one member is not enough: a one-off that happens to sit between
    two subjects, or to come first, would otherwise gather both under one headline."""
    if not rows:
        return []
    vectors = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
    similar = vectors @ vectors.T
    neighbours = (similar >= threshold).sum(axis=1)
    order = sorted(range(len(rows)), key=lambda n: (-neighbours[n], n))  # ties: the input's order (newest first)
    members: list[list[int]] = []
    placed = np.zeros(0, dtype=np.int64)  # the questions placed so far, and their groups
    labels = np.zeros(0, dtype=np.int64)
    for n in order:
        best = -1
        if members:
            weakest = np.full(len(members), np.inf, dtype=np.float32)
            np.minimum.at(weakest, labels, similar[n, placed])  # each group's least similar question
            best = int(np.argmax(weakest))
            if weakest[best] < threshold:
                best = -1
        if best < 0:
            best = len(members)
            members.append([])
        members[best].append(n)
        placed, labels = np.append(placed, n), np.append(labels, best)
    groups = []
    for group in members:
        group.sort()
        block = similar[np.ix_(group, group)]
        # how central each question is: its mean similarity to the group's other questions
        centrality = (block.sum(axis=1) - block.diagonal()) / max(len(group) - 1, 1)
        grouped = [{**rows[n], "centrality": float(c)} for n, c in zip(group, centrality, strict=True)]
        groups.append({"last_seen": max(row["created_at"] for row in grouped),
                       "ids": [row.get("id") for row in grouped],
                       "sources": {row.get("source") or row.get("id") for row in grouped}, "rows": grouped})
    return sorted((_summary(g) for g in groups), key=lambda g: (-g["count"], -g["last_seen"].timestamp()))


def _summary(group: dict) -> dict:
    """A group as the lists show it: counted in distinct sources (conversations' addresses), not
    rows, so one address asking twenty variants is one; its wordings most-asked first, then the
    most central (the one nearest all the others: what the group is about, not its one-off), then
    the oldest; the first of them the headline (not the newest, which anyone can make a group's
    latest)."""
    wordings = ranked_wordings(group["rows"])
    return {"question": wordings[0], "count": len(group["sources"]), "last_seen": group["last_seen"],
            "examples": wordings[1:4], "wordings": wordings, "ids": group["ids"]}


def ranked_wordings(rows: list[dict]) -> list[str]:
    """The distinct wordings of questions (``question``, ``source``, ``created_at`` and, when
    grouped, ``centrality`` each), asked by the most distinct sources first, then the most central,
    then the oldest first."""
    seen: dict[str, tuple[set, object, float]] = {}
    for row in rows:
        sources, first, central = seen.get(row["question"], (set(), row["created_at"], float("-inf")))
        sources.add(row.get("source") or row.get("id"))
        seen[row["question"]] = (sources, min(first, row["created_at"]), max(central, row.get("centrality", 0.0)))
    return [q for q, _ in sorted(seen.items(), key=lambda item: (-len(item[1][0]), -item[1][2], item[1][1]))]


# The open questions grouped: at most this many of the newest, so a flood of declined questions
# cannot make the admin's pages slow (grouping is quadratic in the number of groups).
OPEN_QUESTIONS_GROUPED = 1000
PER_SOURCE = 3  # questions of one address in that window
# where a question came from: its conversation's address (hashed), else the conversation itself
_SOURCE = Coalesce(NullIf(F("conversation__visitor_ip_hash"), Value("")), Cast("conversation_id", CharField()))


def question_groups(*, since: dt.datetime | None = None, until: dt.datetime | None = None,
                    open_only: bool = True) -> tuple[int, list[dict]]:
    """Unanswered questions, similar ones grouped, the largest groups first, and how many were
    read: the open ones (neither taught nor put aside) for the admin's list and the dashboard, a
    period's for the digest. A question without a subject vector (the model failed) stands alone."""
    rows = UnansweredQuestion.objects.all()
    if open_only:
        rows = rows.filter(handled_at__isnull=True)
    if since is not None:
        rows = rows.filter(created_at__gte=since)
    if until is not None:
        rows = rows.filter(created_at__lt=until)
    # the newest questions, at most PER_SOURCE of each address: one address cannot fill the window
    rows = rows.annotate(source=_SOURCE,
                         rank=Window(RowNumber(), partition_by=[F("source")], order_by=F("created_at").desc()))
    rows = list(rows.filter(rank__lte=PER_SOURCE).order_by("-created_at")
                .values("id", "question", "embedding", "created_at", "source")[:OPEN_QUESTIONS_GROUPED])
    groups = group_questions([r for r in rows if r["embedding"] is not None]) + [
        {"question": r["question"], "count": 1, "last_seen": r["created_at"], "examples": [],
         "wordings": [r["question"]], "ids": [r["id"]]}
        for r in rows if r["embedding"] is None]
    groups.sort(key=lambda g: (-g["count"], -g["last_seen"].timestamp()))
    return len(rows), groups


def open_question_groups() -> list[dict]:
    """The open unanswered questions grouped (``question_groups``)."""
    return question_groups()[1]


def question_before(answer: Message) -> str | None:
    """The visitor's question an answer replied to: its turn's, else the conversation's last
    visitor message before it (an answer recorded without a turn)."""
    turn = getattr(answer, "turn", None)
    if turn is not None and turn.user_message is not None:
        return turn.user_message.content
    return (Message.objects.filter(conversation_id=answer.conversation_id, role="user",
                                   created_at__lte=answer.created_at)
            .order_by("-created_at").values_list("content", flat=True).first())


def question_wordings(*, ids: list[int] = (), feedback_id: int | None = None) -> list[str]:
    """What visitors asked, as they wrote it, for the teach form: the open questions ``ids`` (a
    group) most-asked by distinct addresses and oldest first, or the question behind a rated
    answer (``feedback_id``)."""
    from chat.models import Feedback

    if feedback_id is not None:
        feedback = Feedback.objects.select_related("message__turn__user_message").filter(pk=feedback_id).first()
        asked = question_before(feedback.message) if feedback is not None else None
        return [asked] if asked else []
    rows = UnansweredQuestion.objects.filter(pk__in=list(ids)).annotate(source=_SOURCE).values(
        "id", "question", "source", "created_at")
    return ranked_wordings(list(rows))
