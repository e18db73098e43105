from __future__ import annotations

import pytest
from django.db.models import Count

from knowledge.content import ContentError
from knowledge.models import Document, KnowledgeChunk
from knowledge.search import knowledge_search
from knowledge.services import knowledge_sync
from tests.conftest import HashEmbedder

pytestmark = pytest.mark.django_db

ALPHA = """---
title: Alpha
kind: project
lang: en
---
Alpha intro about databases.

## One
Alpha one talks about PostgreSQL replication.

## Two
Alpha two talks about Kafka pipelines.
"""
BETA = """---
title: Beta
kind: article
lang: nl
---
Beta gaat over fietsen in Utrecht.
"""
DRAFT = """---
title: Secret draft
kind: article
lang: en
public: false
---
The unannounced book deal.
"""


class CountingEmbedder(HashEmbedder):
    def __init__(self, fail_after: int | None = None) -> None:
        self.embedded: list[str] = []
        self.fail_after = fail_after

    def passages(self, texts):
        if self.fail_after is not None and len(self.embedded) + len(texts) > self.fail_after:
            raise RuntimeError("embedding backend down")
        self.embedded.extend(texts)
        return super().passages(texts)


def folder(tmp_path, **files: str):
    for name, text in files.items():
        (tmp_path / f"{name}.md").write_text(text, encoding="utf-8")
    return tmp_path


def test_first_sync_adds_everything_and_second_embeds_nothing(tmp_path):
    root = folder(tmp_path, alpha=ALPHA, beta=BETA)
    embedder = CountingEmbedder()
    first = knowledge_sync(root=root, embedders=[embedder])
    assert (first.added, first.changed, first.removed, first.unchanged) == (4, 0, 0, 0)
    assert len(embedder.embedded) == 4
    second = knowledge_sync(root=root, embedders=[embedder])
    assert (second.added, second.changed, second.removed, second.unchanged, second.embedded) == (0, 0, 0, 4, 0)
    assert len(embedder.embedded) == 4
    assert KnowledgeChunk.objects.count() == 4


def test_change_one_chunk_reembeds_only_that_chunk(tmp_path):
    root = folder(tmp_path, alpha=ALPHA, beta=BETA)
    embedder = CountingEmbedder()
    knowledge_sync(root=root, embedders=[embedder])
    untouched = KnowledgeChunk.objects.get(heading_path="One")
    folder(tmp_path, alpha=ALPHA.replace("Kafka pipelines", "Kafka pipelines and Flink jobs"))
    report = knowledge_sync(root=root, embedders=[embedder])
    assert (report.added, report.changed, report.removed, report.unchanged) == (0, 1, 0, 3)
    assert embedder.embedded[-1].endswith("Alpha two talks about Kafka pipelines and Flink jobs.")
    assert len(embedder.embedded) == 5
    same = KnowledgeChunk.objects.get(heading_path="One")
    assert (same.pk, same.created_at) == (untouched.pk, untouched.created_at)  # not touched


def test_removed_chunks_and_documents_are_deleted(tmp_path):
    root = folder(tmp_path, alpha=ALPHA, beta=BETA)
    embedder = CountingEmbedder()
    knowledge_sync(root=root, embedders=[embedder])
    folder(tmp_path, alpha=ALPHA.split("## Two", maxsplit=1)[0])
    (tmp_path / "beta.md").unlink()
    report = knowledge_sync(root=root, embedders=[embedder])
    assert (report.removed, report.documents_removed, report.unchanged) == (2, 1, 2)
    assert list(Document.objects.values_list("title", flat=True)) == ["Alpha"]
    assert sorted(KnowledgeChunk.objects.values_list("heading_path", flat=True)) == ["", "One"]


def test_failed_embedding_rolls_back_everything(tmp_path):
    root = folder(tmp_path, alpha=ALPHA)
    knowledge_sync(root=root, embedders=[CountingEmbedder()])
    before = list(KnowledgeChunk.objects.order_by("id").values_list("id", "content_hash"))
    folder(tmp_path, alpha=ALPHA.replace("replication", "logical replication"), beta=BETA)
    with pytest.raises(RuntimeError, match="embedding backend down"):
        knowledge_sync(root=root, embedders=[CountingEmbedder(fail_after=1)])
    assert list(KnowledgeChunk.objects.order_by("id").values_list("id", "content_hash")) == before
    assert list(Document.objects.values_list("title", flat=True)) == ["Alpha"]


def test_bad_file_changes_nothing(tmp_path):
    root = folder(tmp_path, alpha=ALPHA)
    knowledge_sync(root=root, embedders=[CountingEmbedder()])
    folder(tmp_path, beta=BETA, broken="---\ntitle: Broken\nkind: nonsense\nlang: en\n---\nx\n")
    with pytest.raises(ContentError, match=r"broken\.md: field 'kind'"):
        knowledge_sync(root=root, embedders=[CountingEmbedder()])
    assert list(Document.objects.values_list("title", flat=True)) == ["Alpha"]


def test_private_documents_never_reach_the_tables(tmp_path):
    root = folder(tmp_path, alpha=ALPHA, draft=DRAFT)
    report = knowledge_sync(root=root, embedders=[CountingEmbedder()])
    assert report.excluded == 1
    assert not Document.objects.filter(title="Secret draft").exists()
    assert not KnowledgeChunk.objects.filter(text__icontains="book deal").exists()
    # a document made private later is removed
    folder(tmp_path, alpha=ALPHA.replace("lang: en", "lang: en\npublic: false"))
    knowledge_sync(root=root, embedders=[CountingEmbedder()])
    assert Document.objects.count() == 0


def test_switching_model_reembeds_and_never_mixes(tmp_path, embedders):
    """Another model (here 8-d, with no HNSW index of its own) replaces the old vectors."""
    root = folder(tmp_path, alpha=ALPHA, beta=BETA)
    knowledge_sync(root=root, embedders=[embedders[0]])
    hash8 = CountingEmbedder()
    report = knowledge_sync(root=root, embedders=[hash8])
    assert report.embedded == 4 and report.added == 4
    assert set(KnowledgeChunk.objects.values_list("embed_model", flat=True)) == {"test/hash-8"}
    assert {len(c.embedding) for c in KnowledgeChunk.objects.all()} == {8}
    exact = KnowledgeChunk.objects.get(heading_path="Two").search_text
    hits = knowledge_search(exact, embedders=[hash8], mode="dense", top_k=2)
    assert hits[0].heading_path == "Two"
    assert hits[0].dense_score == pytest.approx(1.0, abs=1e-5)


def test_several_models_store_one_row_per_model(tmp_path, embedders):
    root = folder(tmp_path, alpha=ALPHA)
    hash8 = CountingEmbedder()
    report = knowledge_sync(root=root, embedders=[embedders[0], hash8])
    assert report.embedded_per_model == {embedders[0].name: 3, "test/hash-8": 3}
    per_model = dict(KnowledgeChunk.objects.values_list("embed_model").annotate(n=Count("id")))
    assert per_model == {embedders[0].name: 3, "test/hash-8": 3}
    # dropping a model from the configuration deletes its rows
    knowledge_sync(root=root, embedders=[embedders[0]])
    assert set(KnowledgeChunk.objects.values_list("embed_model", flat=True)) == {embedders[0].name}


def test_sync_keeps_document_frequencies_for_full_text(tmp_path):
    from knowledge.models import LexemeStat

    root = folder(tmp_path, alpha=ALPHA, beta=BETA)
    knowledge_sync(root=root, embedders=[CountingEmbedder()])
    stats = dict(LexemeStat.objects.values_list("lexeme", "ndoc"))
    assert stats[""] == 4  # chunks
    assert stats["kafka"] == 1 and stats["alpha"] == 3
    (tmp_path / "alpha.md").unlink()
    knowledge_sync(root=root, embedders=[CountingEmbedder()])
    stats = dict(LexemeStat.objects.values_list("lexeme", "ndoc"))
    assert stats[""] == 1 and "kafka" not in stats


GAMMA = """---
title: Gamma
kind: article
lang: en
---
Gamma is about trains.
"""


def test_a_failed_embedding_keeps_whole_earlier_batches_and_the_next_sync_finishes(tmp_path):
    """Batches of about ``batch_chunks`` new chunks, one transaction each: a failure keeps the
    documents written so far, each one whole, and the next sync embeds only what is missing."""
    root = folder(tmp_path, alpha=ALPHA, beta=BETA, gamma=GAMMA)  # 3 + 1 + 1 chunks
    with pytest.raises(RuntimeError, match="embedding backend down"):
        knowledge_sync(root=root, embedders=[CountingEmbedder(fail_after=3)], batch_chunks=2)
    assert list(Document.objects.values_list("title", flat=True)) == ["Alpha"]
    assert KnowledgeChunk.objects.count() == 3

    embedder = CountingEmbedder()
    report = knowledge_sync(root=root, embedders=[embedder], batch_chunks=2)
    assert (report.added, report.unchanged, report.embedded) == (2, 3, 2)
    assert len(embedder.embedded) == 2
    assert sorted(Document.objects.values_list("title", flat=True)) == ["Alpha", "Beta", "Gamma"]


def test_progress_counts_every_embedding_of_every_model(tmp_path, embedders):
    root = folder(tmp_path, alpha=ALPHA, beta=BETA)
    seen: list[tuple[int, int]] = []
    knowledge_sync(root=root, embedders=[embedders[0], CountingEmbedder()], batch_chunks=2,
                   progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 8) and seen[-1] == (8, 8)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_two_files_swapping_titles_keep_all_their_chunks(tmp_path):
    root = folder(tmp_path, alpha=ALPHA, beta=BETA)
    knowledge_sync(root=root, embedders=[CountingEmbedder()])
    folder(tmp_path, alpha=ALPHA.replace("title: Alpha", "title: Beta"),
           beta=BETA.replace("title: Beta", "title: Alpha"))
    knowledge_sync(root=root, embedders=[CountingEmbedder()], batch_chunks=1)
    titles = dict(Document.objects.values_list("path", "title"))
    assert titles == {"alpha.md": "Beta", "beta.md": "Alpha"}
    counts = dict(Document.objects.values_list("title").annotate(n=Count("chunks")))
    assert counts == {"Beta": 3, "Alpha": 1}


def test_a_second_sync_while_one_runs_is_refused_and_changes_nothing(tmp_path):
    import psycopg

    from knowledge.services import SYNC_LOCK, SyncBusy
    from twinsite.db import conninfo

    root = folder(tmp_path, alpha=ALPHA)
    with psycopg.connect(conninfo(), autocommit=True) as other:  # another process syncing
        other.execute("SELECT pg_advisory_lock(%s)", [SYNC_LOCK])
        with pytest.raises(SyncBusy):
            knowledge_sync(root=root, embedders=[CountingEmbedder()])
        other.execute("SELECT pg_advisory_unlock(%s)", [SYNC_LOCK])  # that sync is over
    assert not Document.objects.exists()
    knowledge_sync(root=root, embedders=[CountingEmbedder()])
    assert Document.objects.count() == 1
