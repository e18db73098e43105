"""knowledge.watch: each process hears of document changes from Postgres (a trigger's NOTIFY)
instead of reading the knowledge version on every turn, and falls back to reading it whenever
it is not listening."""

from __future__ import annotations

import time

import psycopg
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from knowledge.models import Document
from knowledge.prefix import knowledge_prefix, knowledge_version
from knowledge.selectors import document_urls
from knowledge.watch import WATCH
from twinsite.db import conninfo

pytestmark = pytest.mark.django_db(transaction=True)


def _until(check, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.fixture
def watching(settings):
    settings.TWIN_KNOWLEDGE_WATCH = True
    _until(lambda: WATCH.generation() is not None)
    yield WATCH
    WATCH.stop()  # its connection closed before the test database is dropped


def _document(title: str) -> Document:
    return Document.objects.create(path=f"{title}.md", title=title, kind="article", lang="en",
                                   body="A body.", content_hash="x" * 64)


def test_a_heard_version_is_read_once_per_change(watching):
    generation = watching.generation()
    _document("First")
    _until(lambda: watching.generation() != generation)
    first = knowledge_version()
    with CaptureQueriesContext(connection) as queries:
        assert knowledge_version() == first
        assert "First" in document_urls()
        document_urls()
    assert len(queries) == 1  # the links once; the version not at all

    generation = watching.generation()
    _document("Second")
    _until(lambda: watching.generation() != generation)
    assert knowledge_version() != first
    assert "Second" in document_urls()
    assert "Second" in knowledge_prefix()[0]


def test_a_change_while_not_listening_is_not_missed(watching):
    first = knowledge_version()
    with psycopg.connect(conninfo(), autocommit=True) as admin:
        killed = admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                               "WHERE application_name = 'twinsite-watch' AND datname = current_database()").fetchall()
        assert killed == [(True,)]
        _document("Written while the watch reconnects")
    # whether the watch has noticed yet or not, the version read now is the new one: while not
    # listening it is read from Postgres, and reopening the connection moves the generation
    _until(lambda: knowledge_version() != first)
    _until(lambda: watching.generation() is not None)
    assert "Written while the watch reconnects" in document_urls()


def test_off_reads_postgres_every_time(settings):
    settings.TWIN_KNOWLEDGE_WATCH = False
    assert WATCH.generation() is None
    with CaptureQueriesContext(connection) as queries:
        knowledge_version()
        knowledge_version()
    assert len(queries) == 2


def test_the_kept_readings_are_there_only_for_the_knowledge_as_it_is(watching):
    """What a turn reads on the event loop instead of handing a read to a database thread: the
    links and the prompt's knowledge while they are kept for the current generation, else None
    (and the turn reads them on a thread, as before)."""
    from knowledge.prefix import knowledge_prefix_kept
    from knowledge.selectors import document_urls_kept

    generation = watching.generation()
    _document("Kept")
    _until(lambda: watching.generation() != generation)
    assert document_urls_kept() is None and knowledge_prefix_kept() is None  # not read since the change
    urls, prefix = document_urls(), knowledge_prefix()
    with CaptureQueriesContext(connection) as queries:
        assert document_urls_kept() == urls and "Kept" in urls
        assert knowledge_prefix_kept() == prefix
    assert len(queries) == 0

    generation = watching.generation()
    _document("Later")
    _until(lambda: watching.generation() != generation)
    assert document_urls_kept() is None and knowledge_prefix_kept() is None


def test_off_nothing_is_kept(settings):
    from knowledge.prefix import knowledge_prefix_kept
    from knowledge.selectors import document_urls_kept

    settings.TWIN_KNOWLEDGE_WATCH = False
    document_urls(), knowledge_prefix()
    assert document_urls_kept() is None and knowledge_prefix_kept() is None
