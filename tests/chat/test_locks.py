"""The turn lock (chat.locks on twinsite.db.AdvisoryLocks): one Postgres connection per process
holds every running turn's lock; the lock still excludes a second turn of the same conversation
in this process and in any other, and survives its connection being killed."""

from __future__ import annotations

import asyncio
import uuid

import psycopg
import pytest

from chat.locks import ConversationBusy, conversation_lock, conversation_running, lock_key
from tests.backends import terminate, wait_for_exit
from twinsite.db import advisory_locks, conninfo

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("checkpoint_pool")]


def other_session_can_take(key: int) -> bool:
    """Whether another process's session could take ``key`` now (a transaction lock, let go at once)."""
    with psycopg.connect(conninfo(), autocommit=False) as conn:
        return conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (key,)).fetchone()[0]


def lock_connections() -> set[int]:
    """The backends of this database's lock connections. A test counts those it opened: a lock
    connection of an earlier test's event loop in this worker may still be open (each loop has its
    own, closed by ``checkpoint_pool``'s teardown or when the loop is collected)."""
    with psycopg.connect(conninfo(), autocommit=True) as conn:
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE application_name = 'twinsite-locks'"
                            " AND datname = current_database()")
        return {pid for pid, in rows}


async def test_fifty_running_turns_hold_their_locks_on_one_connection():
    ids = [uuid.uuid4() for _ in range(50)]
    holding, release = asyncio.Event(), asyncio.Event()
    entered = 0

    async def turn(conversation_id) -> None:
        nonlocal entered
        async with conversation_lock(conversation_id):
            entered += 1
            if entered == len(ids):
                holding.set()
            await release.wait()

    before = await asyncio.to_thread(lock_connections)
    tasks = [asyncio.create_task(turn(i)) for i in ids]
    await asyncio.wait_for(holding.wait(), 30)
    assert await asyncio.to_thread(lock_connections) - before == {advisory_locks().conn.info.backend_pid}
    taken = await asyncio.gather(*(asyncio.to_thread(other_session_can_take, lock_key(i)) for i in ids[:5]))
    assert taken == [False] * 5  # held for every other process
    release.set()
    await asyncio.gather(*tasks)
    assert await asyncio.to_thread(other_session_can_take, lock_key(ids[0]))
    assert advisory_locks().held == set()


async def test_a_second_turn_of_the_conversation_in_this_process_is_busy():
    conversation_id = uuid.uuid4()
    async with conversation_lock(conversation_id):
        # Postgres would let the same session take the key again: the process must not
        with pytest.raises(ConversationBusy):
            async with conversation_lock(conversation_id):
                pass
        assert await conversation_running(conversation_id)
    assert not await conversation_running(conversation_id)
    async with conversation_lock(conversation_id):  # free again, and taken once only
        pass
    assert await asyncio.to_thread(other_session_can_take, lock_key(conversation_id))


async def test_a_conversation_another_process_runs_is_busy():
    conversation_id = uuid.uuid4()
    with psycopg.connect(conninfo(), autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", (lock_key(conversation_id),))
        with pytest.raises(ConversationBusy):
            async with conversation_lock(conversation_id):
                pass
        pid = other.info.backend_pid
    # closing a connection does not wait for its backend to exit (the exit lets go of the lock)
    await asyncio.to_thread(wait_for_exit, pid)
    async with conversation_lock(conversation_id):  # that process is gone: its lock with it
        pass


async def test_a_killed_lock_connection_is_reopened_with_the_running_turns_locks():
    running, later = uuid.uuid4(), uuid.uuid4()
    before = await asyncio.to_thread(lock_connections)
    async with conversation_lock(running):
        locks = advisory_locks()
        pid = locks.conn.info.backend_pid
        await asyncio.to_thread(terminate, pid)
        # the next turn reopens the connection and takes the running turn's key again
        async with conversation_lock(later):
            assert locks.conn.info.backend_pid != pid
            assert not await asyncio.to_thread(other_session_can_take, lock_key(running))
            assert not await asyncio.to_thread(other_session_can_take, lock_key(later))
    assert await asyncio.to_thread(other_session_can_take, lock_key(running))
    assert await asyncio.to_thread(other_session_can_take, lock_key(later))
    assert await asyncio.to_thread(lock_connections) - before == {locks.conn.info.backend_pid}


async def test_a_turn_ending_on_a_dead_connection_lets_the_others_take_their_locks_again_at_once():
    ending, running = uuid.uuid4(), uuid.uuid4()
    locks = advisory_locks()
    assert await locks.try_lock(lock_key(ending)) and await locks.try_lock(lock_key(running))
    dead = locks.conn.info.backend_pid
    await asyncio.to_thread(terminate, dead)
    await locks.unlock(lock_key(ending))  # fails on the dead connection: dropped, reopened at once
    # no new turn needed; waited for without probing the key (a probe taking it while the new
    # connection re-takes it would be "another process" stealing it)
    for _ in range(100):
        if locks._usable() and locks.conn.info.backend_pid != dead:
            break
        await asyncio.sleep(0.05)
    async with locks._connecting:  # the re-take runs under it
        pass
    assert not await asyncio.to_thread(other_session_can_take, lock_key(running))
    assert await asyncio.to_thread(other_session_can_take, lock_key(ending))
    await locks.unlock(lock_key(running))
    assert locks.held == set()


async def test_a_lock_attempt_cancelled_mid_query_leaves_no_lock_behind():
    locks = advisory_locks()
    running = uuid.uuid4()
    assert await locks.try_lock(lock_key(running))
    for attempt in range(20):  # cancelled at different points of the attempt
        key = lock_key(uuid.uuid4())
        task = asyncio.create_task(locks.try_lock(key))
        for _ in range(attempt % 4):
            await asyncio.sleep(0)
        task.cancel()
        try:
            taken = await task
        except asyncio.CancelledError:
            taken = False
        if taken:
            await locks.unlock(key)
        assert key not in locks.held
        assert await asyncio.to_thread(other_session_can_take, key), attempt
    await asyncio.sleep(0.2)  # a reopened connection has taken the running turn's key again
    await locks.try_lock(lock_key(uuid.uuid4()))
    assert not await asyncio.to_thread(other_session_can_take, lock_key(running))
