"""The pool of database threads (``twinsite.db.database_sync_to_async``): under DEBUG each call
starts its own statement log, as a request does, instead of each thread keeping up to 9,000."""

from __future__ import annotations

import asyncio

import pytest
from django.db import connection
from django.test import override_settings

from twinsite.db import database_sync_to_async

pytestmark = pytest.mark.django_db(transaction=True)


def _statements_logged(count: int) -> int:
    with connection.cursor() as cursor:
        for _ in range(count):
            cursor.execute("SELECT 1")
    return len(connection.queries)


@override_settings(DEBUG=True)
def test_each_call_on_the_database_threads_logs_only_its_own_statements():
    async def calls() -> list[int]:
        return [await database_sync_to_async(_statements_logged)(3) for _ in range(20)]

    # 20 calls on at most TWIN_DB_THREADS threads: without the reset a thread's log would hold
    # the statements of every call it ran
    assert asyncio.run(calls()) == [3] * 20
