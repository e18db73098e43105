"""The turn sweeper (chat.turns.recovery) on the states a dead process can leave, in-process: the record
lost after a finished checkpoint, a checkpoint that never saw the question, a turn still running.
The same with real killed processes: tests/faults/test_crashes.py."""

from __future__ import annotations

import asyncio
import threading

import pytest
from channels.db import database_sync_to_async

from chat.locks import conversation_lock
from chat.models import Message, TurnLog
from chat.services import conversation_create, message_create_user
from chat.texts import text as say
from chat.turns.recovery import turns_sweep
from chat.turns.run import compiled_graph, turn_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("kb", "checkpoint_pool")]


async def noop(event: dict) -> None:
    pass


async def graph_without_record(conversation_id, question: str) -> dict:
    """A turn that died after its graph finished and before its record was written."""
    from chat.agent.context import TurnContext
    from chat.agent.recorder import TurnRecorder
    from chat.providers import get_provider

    await database_sync_to_async(message_create_user)(conversation_id=conversation_id, text=question)
    provider = get_provider()
    context = TurnContext(provider=provider, recorder=TurnRecorder(provider=provider.name, model=provider.model),
                          conversation_id=str(conversation_id))
    graph = await compiled_graph()
    config = {"configurable": {"thread_id": str(conversation_id)}}
    async for _ in graph.astream({"messages": [{"role": "user", "content": question}]}, config, context=context):
        pass
    return (await graph.aget_state(config)).values


async def test_a_turn_whose_record_was_lost_is_recovered_from_its_finished_checkpoint():
    conversation = await database_sync_to_async(conversation_create)()
    state = await graph_without_record(conversation.pk, "What has she built?")
    assert state["outcome"] in ("answered", "declined") and not await TurnLog.objects.aexists()

    assert await database_sync_to_async(turns_sweep)() == {"aborted_turns": 0, "recovered_turns": 1}
    turn = await TurnLog.objects.select_related("assistant_message", "user_message").aget()
    assert (turn.outcome, turn.user_message.content) == (state["outcome"], "What has she built?")
    assert turn.assistant_message.content == state["answer"] and turn.assistant_message.citations == state["citations"]
    assert await database_sync_to_async(turns_sweep)() == {"aborted_turns": 0, "recovered_turns": 0}  # once


async def test_a_question_the_checkpoint_never_saw_is_aborted_and_the_next_turn_closes_it_first():
    conversation = await database_sync_to_async(conversation_create)()
    first = await turn_run(conversation_id=conversation.pk, text="What has she built?", emit=noop)
    graph = await compiled_graph()
    config = {"configurable": {"thread_id": str(conversation.pk)}}
    before = await graph.aget_state(config)
    # killed between storing the question and the graph's first checkpoint
    await database_sync_to_async(message_create_user)(conversation_id=conversation.pk, text="Where does she live?")

    result = await turn_run(conversation_id=conversation.pk, text="Where has she worked?", emit=noop)
    assert {first.outcome, result.outcome} <= {"answered", "declined"}
    turns = [t async for t in TurnLog.objects.select_related("user_message", "assistant_message").order_by("pk")]
    assert [(t.user_message.content, t.outcome) for t in turns] == [
        ("What has she built?", first.outcome), ("Where does she live?", "aborted"),
        ("Where has she worked?", result.outcome)]
    assert turns[1].assistant_message.content == say("error.aborted", "en")
    after = await graph.aget_state(config)
    # the checkpoint was left as it was; the new turn followed the first one
    assert after.values["messages"][:len(before.values["messages"])] == before.values["messages"]
    assert [m["content"] for m in after.values["messages"] if m["role"] == "user"] == [
        "What has she built?", "Where has she worked?"]


async def test_the_same_question_asked_again_and_killed_is_aborted_not_given_the_earlier_answer():
    """A run's checkpoint is written when it ends, so a process killed mid-run leaves the turn
    before's checkpoint; when that turn asked the same words, the Message it was for tells them
    apart (state ``user_message_id``)."""
    conversation = await database_sync_to_async(conversation_create)()
    first = await turn_run(conversation_id=conversation.pk, text="What has she built?", emit=noop)
    # killed mid-run: the same question stored again, its run never checkpointed
    await database_sync_to_async(message_create_user)(conversation_id=conversation.pk, text="What has she built?")

    assert await database_sync_to_async(turns_sweep)() == {"aborted_turns": 1, "recovered_turns": 0}
    turns = [t async for t in TurnLog.objects.select_related("user_message", "assistant_message").order_by("pk")]
    assert [t.outcome for t in turns] == [first.outcome, "aborted"]
    assert turns[1].assistant_message.content == say("error.aborted", "en")


async def test_a_turn_still_holding_its_lock_is_left_to_its_process():
    conversation = await database_sync_to_async(conversation_create)()
    await database_sync_to_async(message_create_user)(conversation_id=conversation.pk, text="What has she built?")
    holding, release = asyncio.Event(), threading.Event()

    async def running_turn() -> None:
        async with conversation_lock(conversation.pk):
            holding.set()
            await asyncio.to_thread(release.wait, 30)

    task = asyncio.create_task(running_turn())
    await holding.wait()
    try:
        assert await database_sync_to_async(turns_sweep)() == {"aborted_turns": 0, "recovered_turns": 0}
    finally:
        release.set()
        await task
    assert await database_sync_to_async(turns_sweep)() == {"aborted_turns": 1, "recovered_turns": 0}
    assert await Message.objects.filter(role="assistant").acount() == 1
