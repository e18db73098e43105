"""A turn's cited sentences checked against their cited documents (issue 45), through ``turn_run``
with a scripted model on the sample knowledge base: what ``done`` carries, what the visitor sees
under each ``TWIN_UNSUPPORTED``, what the turn log, the trace, the admin and the why panel keep."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from chat.models import AgentTrace, TurnLog
from chat.providers.base import Usage
from chat.providers.scripted import ScriptedProvider, Step
from chat.services import conversation_create
from chat.texts import text as say
from chat.turns.run import turn_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("kb", "checkpoint_pool")]
CV = "[source: Curriculum Vitae]"
TRUE = f"She leads the platform team of six engineers at Lumora Health. {CV}"
DOUBTED = f"She also restores old sailing boats with her neighbours in a shed near the harbour. {CV}"
CHANGED = f"Her team moved the triage service from Flask to Django and cut the p95 time to 90 milliseconds. {CV}"


async def answered(text: str) -> tuple[dict, TurnLog, AgentTrace]:
    conversation = await database_sync_to_async(conversation_create)()
    events: list[dict] = []

    async def emit(event: dict) -> None:
        events.append(event)

    provider = ScriptedProvider([Step(text=text, usage=Usage(100, 0, 20))], name="openai", model="gpt-4.1-mini")
    await turn_run(conversation_id=conversation.pk, text="What does she do at Lumora?", emit=emit, provider=provider)
    done = next(e for e in events if e["type"] == "done")
    turn = await database_sync_to_async(TurnLog.objects.select_related("trace").get)(conversation=conversation)
    return done, turn, turn.trace


async def test_a_supported_answer_carries_an_empty_list():
    done, turn, trace = await answered(TRUE)
    assert done["unsupported"] == [] and done["answer"] == TRUE and done["outcome"] == "answered"
    assert turn.unsupported_claims == 0 and trace.unsupported == []


async def test_mark_keeps_the_sentence_without_its_citation_and_says_so(settings):
    settings.TWIN_UNSUPPORTED = "mark"
    done, turn, trace = await answered(f"{TRUE} {CHANGED}")
    [claim] = done["unsupported"]
    assert claim["title"] == "Curriculum Vitae" and claim["reason"] == "number" and "90" in claim["detail"]
    assert (claim["kind"], claim["certain"]) == ("figure", True)
    assert claim["sentence"].startswith("Her team moved the triage service")
    assert done["answer"] == (f"{TRUE} Her team moved the triage service from Flask to Django and cut the p95 "
                              f"time to 90 milliseconds {say('claims.not_in_source', 'en')}.")
    assert done["outcome"] == "answered" and done["citations"][0]["title"] == "Curriculum Vitae"
    assert turn.unsupported_claims == 1 and trace.unsupported == done["unsupported"]
    assert (turn.doubtful_claims, turn.claim_kinds) == (0, {"figure": 1})


async def test_a_doubt_reaches_the_owner_and_changes_nothing_the_visitor_reads(settings):
    settings.TWIN_UNSUPPORTED = "strip"
    done, turn, trace = await answered(DOUBTED)
    [claim] = done["unsupported"]
    assert claim["certain"] is False and claim["kind"] == "novel" and claim["reason"] == "meaning"
    assert done["answer"] == DOUBTED and done["citations"][0]["title"] == "Curriculum Vitae"
    assert (turn.unsupported_claims, turn.doubtful_claims, turn.claim_kinds) == (0, 1, {"novel?": 1})
    assert trace.unsupported == done["unsupported"]


async def test_strip_removes_the_sentence_and_an_answer_left_empty_is_declined(settings):
    settings.TWIN_UNSUPPORTED = "strip"
    done, _, _ = await answered(f"{TRUE} {CHANGED}")
    assert done["answer"] == TRUE and len(done["unsupported"]) == 1
    done, turn, _ = await answered(CHANGED)
    assert done["answer"] == say("offline.decline", "en") and done["outcome"] == "declined"
    assert done["citations"] == [] and turn.unsupported_claims == 1


async def test_log_shows_the_answer_unchanged_and_keeps_the_count(settings):
    settings.TWIN_UNSUPPORTED = "log"
    done, turn, _ = await answered(CHANGED)
    assert done["answer"] == CHANGED and done["unsupported"][0]["reason"] == "number"
    assert turn.unsupported_claims == 1


def test_the_admin_filters_on_it_and_the_why_panel_shows_each(client, settings):
    from django.contrib.auth.models import User

    from chat.checkpoints import close_pools

    async def two_turns():
        try:
            await answered(TRUE)
            await answered(CHANGED)
            await answered(DOUBTED)
        finally:
            await close_pools()

    asyncio.run(two_turns())
    client.force_login(User.objects.create_superuser("boss", password="pw-123456789"))
    flagged = client.get("/admin/chat/turnlog/?claims=unsupported").content.decode()
    clean = client.get("/admin/chat/turnlog/?claims=supported").content.decode()
    doubted = client.get("/admin/chat/turnlog/?claims=doubtful").content.decode()
    assert "1 turn log" in flagged and "1 turn log" in clean and "1 turn log" in doubted
    trace = AgentTrace.objects.get(turn__unsupported_claims=1)
    panel = client.get(f"/why/{trace.message_id}/").content.decode()
    assert "not in <b>Curriculum Vitae</b> (figure: 90)" in panel and "cut the p95 time to 90" in panel
    assert "<strong>certain</strong>" in panel and "<strong>doubt</strong>" not in panel
    doubt = AgentTrace.objects.get(turn__doubtful_claims=1)
    panel = client.get(f"/why/{doubt.message_id}/").content.decode()
    assert "<strong>doubt</strong> (the visitor saw it unchanged)" in panel and "restores old sailing boats" in panel
