"""Calls that race: each in a thread of its own, released together, each thread's database
connection closed when it ends (a transactional test's flush waits for every connection)."""

from __future__ import annotations

import threading
from collections.abc import Callable


def at_once(*calls: Callable[[], object], timeout: float = 60) -> None:
    """Run ``calls`` at the same moment and wait for all of them (``timeout`` seconds each)."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[], object]) -> None:
        from django.db import connection

        barrier.wait()
        try:
            call()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
