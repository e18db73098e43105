"""The Postgres LISTEN/NOTIFY channel layer: two layer instances stand for two processes."""

from __future__ import annotations

import asyncio

import pytest

from chat.layers import PostgresNotifyChannelLayer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("checkpoint_pool")]


@pytest.mark.parametrize("size", [10, 20_000])  # inline NOTIFY, and through the payload table
async def test_group_send_reaches_a_member_in_another_process(size):
    daphne, worker = PostgresNotifyChannelLayer(), PostgresNotifyChannelLayer()
    channel = await daphne.new_channel()
    await daphne.group_add("conversation.abc", channel)
    await daphne.group_add("conversation.other", await daphne.new_channel())
    receiving = asyncio.create_task(daphne.receive(channel))
    await asyncio.sleep(0.05)
    await worker.group_send("conversation.abc", {"type": "chat.event", "event": {"text": "x" * size}})
    message = await asyncio.wait_for(receiving, timeout=10)
    assert message == {"type": "chat.event", "event": {"text": "x" * size}}
    await daphne.group_discard("conversation.abc", channel)
    await worker.group_send("conversation.abc", {"type": "chat.event", "event": {}})
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(daphne.receive(channel), timeout=0.5)
