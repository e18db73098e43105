"""chat.checkpoints.PooledSaver (LangGraph's saver over a pool, without its process-wide lock): a
checkpoint's blobs and its row are kept together or not at all."""

from __future__ import annotations

import uuid

import pytest
from langgraph.checkpoint.base import empty_checkpoint

from chat.checkpoints import PooledSaver, async_saver, close_pools

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_checkpoint_is_written_whole_or_not_at_all(monkeypatch):
    saver = await async_saver()
    assert isinstance(saver, PooledSaver)
    thread = str(uuid.uuid4())
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"messages": [{"role": "user", "content": "hi"}]}  # a blob, not inline
    checkpoint["channel_versions"] = {"messages": 1}

    async def counts() -> tuple[int, int]:
        async with saver.conn.connection() as conn:
            blobs = await (await conn.execute("SELECT count(*) FROM checkpoint_blobs WHERE thread_id = %s",
                                              [thread])).fetchone()
            rows = await (await conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s",
                                             [thread])).fetchone()
        return blobs["count"], rows["count"]

    # the checkpoint row's statement fails after the blobs were sent: nothing of it stays
    monkeypatch.setattr(saver, "UPSERT_CHECKPOINTS_SQL", "INSERT INTO no_such_table VALUES (%s, %s, %s, %s, %s, %s)")
    with pytest.raises(Exception):  # noqa: B017 -- psycopg's UndefinedTable, raised from the pipeline
        await saver.aput(config, checkpoint, {}, {"messages": 1})
    assert await counts() == (0, 0)

    monkeypatch.undo()
    await saver.aput(config, checkpoint, {}, {"messages": 1})
    assert await counts() == (1, 1)
    assert (await saver.aget_tuple(config)).checkpoint["channel_values"]["messages"][0]["content"] == "hi"
    await close_pools()
