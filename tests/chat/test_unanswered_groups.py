"""The owner's list of unanswered questions holds one subject per group, headed by the question
that sits in the middle of it, and a visitor asking to reach the owner is not on it: the twin took
that request up (drafted the message, or asked for what a draft needs)."""

from __future__ import annotations

import asyncio
import datetime as dt
import math

import pytest
from django.utils import timezone

from chat.models import TurnLog, UnansweredQuestion
from chat.selectors import GROUP_THRESHOLD, group_questions

START = timezone.now()


def at(degrees: float) -> list[float]:
    """A unit vector at ``degrees`` in one plane: two of them are as similar as the cosine of
    the angle between them (29.5 degrees apart is the threshold, 0.87)."""
    return [math.cos(math.radians(degrees)), math.sin(math.radians(degrees)), 0.0]


def row(n: int, question: str, degrees: float) -> dict:
    return {"id": n, "question": question, "embedding": at(degrees), "source": f"address-{n}",
            "created_at": START - dt.timedelta(minutes=n)}  # n = 0 the newest


def test_a_one_off_between_two_subjects_stays_alone_and_the_middle_question_heads_its_group():
    # the newest row is a one-off near only the edge of the workshop subject: it came first, and a
    # grouping around the first question of each group made it the headline of two workshop questions
    rows = [row(0, "One-off: could you forward my note about a fence repair?", 0),
            row(1, "Workshop question, edge wording", 25),
            row(2, "Workshop question, the central wording", 40),
            row(3, "Workshop question, the other edge", 50)]
    assert math.cos(math.radians(25)) >= GROUP_THRESHOLD > math.cos(math.radians(40))
    groups = group_questions(rows)
    assert [(g["question"], g["count"]) for g in groups] == [("Workshop question, the central wording", 3),
                                                             ("One-off: could you forward my note about a fence "
                                                              "repair?", 1)]
    assert sorted(groups[0]["ids"]) == [1, 2, 3]
    assert groups[0]["last_seen"] == rows[1]["created_at"]


def test_a_question_joins_a_group_only_when_it_resembles_every_question_in_it():
    # a chain: each one near the next, the ends 40 degrees apart (0.77): two groups, not one
    rows = [row(n, f"chain {n}", degrees) for n, degrees in enumerate((0, 20, 40))]
    groups = group_questions(rows)
    assert len(groups) == 2
    assert all(len(g["ids"]) in (1, 2) for g in groups)


def test_more_askers_still_make_the_headline_before_the_middle_does():
    rows = [row(0, "Workshop question, the central wording", 40),
            row(1, "Workshop question, edge wording", 25),
            {**row(2, "Workshop question, edge wording", 25), "source": "address-9"},
            row(3, "Workshop question, the other edge", 50)]
    [group] = group_questions(rows)
    assert group["question"] == "Workshop question, edge wording" and group["count"] == 4


@pytest.mark.django_db(transaction=True)
def test_a_contact_request_the_twin_takes_up_is_not_an_unanswered_question(kb, settings):
    from chat.services import conversation_create
    from chat.turns.run import turn_run

    settings.TWIN_PROVIDER = "offline"

    async def turn(question: str) -> str:
        conversation = await asyncio.to_thread(conversation_create)
        outcomes = []

        async def emit(event: dict) -> None:
            if event["type"] == "done":
                outcomes.append(event["outcome"])

        await turn_run(conversation_id=conversation.pk, text=question, emit=emit, visitor_ip="10.9.8.7")
        return outcomes[0]

    # no e-mail address: the twin asks for one before it drafts, a short answer with no source
    asking = asyncio.run(turn("Could you let her know I would like to talk about a bakery's ordering system?"))
    drafted = asyncio.run(turn("Please pass a message on: I'm Lotte, lotte@example.org, and I'd like to discuss "
                               "a bakery's ordering system."))
    unknown = asyncio.run(turn("Which football club does she support?"))
    assert (asking, drafted, unknown) == ("declined", "approval_pending", "declined")
    assert TurnLog.objects.filter(outcome="declined").count() == 2
    assert list(UnansweredQuestion.objects.values_list("question", flat=True)) == [
        "Which football club does she support?"]
