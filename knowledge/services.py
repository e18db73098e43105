"""Writes to the knowledge tables. The only place that creates, changes or deletes them."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import connection, transaction

from knowledge.content import SourceDocument, read_folder
from knowledge.embedders import Embedder
from knowledge.models import Document, KnowledgeChunk, LexemeStat

ProgressFn = Callable[[int, int], None]
EMBED_BATCH = 32


@dataclass
class SyncReport:
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    embedded: int = 0
    documents: int = 0
    documents_removed: int = 0
    excluded: int = 0
    embedded_per_model: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        return (
            f"{self.documents} documents ({self.documents_removed} removed, {self.excluded} not public); "
            f"chunks: {self.added} added, {self.changed} changed, {self.removed} removed, "
            f"{self.unchanged} unchanged; embedded: "
            + (", ".join(f"{n} {name}" for name, n in self.embedded_per_model.items()) or "0")
        )


def progress_bar(done: int, total: int) -> None:
    if total < 2 * EMBED_BATCH:
        return  # short runs need no bar
    width = 30
    filled = int(width * done / total) if total else width
    sys.stderr.write(f"\rembedding [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()


@transaction.atomic
def knowledge_sync(*, root: Path, embedders: list[Embedder], progress: ProgressFn | None = None) -> SyncReport:
    """Bring the tables in line with the folder, embedding only chunks whose hash is new.

    Every chunk is stored once per configured embedding model (its row records the model);
    chunk counts in the report are those of the primary model. One transaction: a bad file or
    a failed embedding leaves the previous knowledge intact. Rows of models no longer
    configured are deleted, so switching models re-embeds instead of mixing vector spaces.
    """
    sources = read_folder(root)  # raises ContentError before anything is written
    report = SyncReport()
    public = [s for s in sources if s.public]
    report.excluded = len(sources) - len(public)
    report.documents = len(public)

    stale = Document.objects.exclude(path__in=[s.path for s in public])
    report.documents_removed = stale.count()
    report.removed += KnowledgeChunk.objects.filter(document__in=stale, embed_model=embedders[0].name).count()
    stale.delete()
    KnowledgeChunk.objects.exclude(embed_model__in=[e.name for e in embedders]).delete()

    documents = {source.path: _upsert_document(source) for source in public}
    for position, embedder in enumerate(embedders):
        counts = report if position == 0 else SyncReport()
        to_embed: list[tuple[Document, object]] = []
        for source in public:
            document = documents[source.path]
            to_embed.extend((document, chunk) for chunk in _diff_chunks(document, source, embedder, counts))
        vectors = _embed([chunk.embed_text for _, chunk in to_embed], embedder, progress)
        KnowledgeChunk.objects.bulk_create([
            KnowledgeChunk(
                document=document,
                ordinal=chunk.ordinal,
                heading_path=chunk.heading_path,
                text=chunk.text,
                content_hash=chunk.content_hash,
                embed_model=embedder.name,
                embedding=vector,
                search_text=chunk.embed_text,
            )
            for (document, chunk), vector in zip(to_embed, vectors, strict=True)
        ])
        report.embedded += len(to_embed)
        report.embedded_per_model[embedder.name] = len(to_embed)
    lexeme_stats_refresh(embed_model=embedders[0].name)
    return report


def lexeme_stats_refresh(*, embed_model: str) -> None:
    """Recount document frequencies for full-text ranking (one pass, inside the sync's transaction)."""
    LexemeStat.objects.all().delete()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO knowledge_lexemestat (lexeme, ndoc) "
            "SELECT word, ndoc FROM ts_stat(%s) "
            "UNION ALL SELECT '', count(*) FROM knowledge_knowledgechunk WHERE embed_model = %s",
            [f"SELECT search_vector FROM knowledge_knowledgechunk WHERE embed_model = {_literal(embed_model)}",
             embed_model],
        )


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _upsert_document(source: SourceDocument) -> Document:
    fields = {
        "title": source.title, "kind": source.kind, "lang": source.lang, "url": source.url,
        "updated": source.updated, "body": source.body, "content_hash": source.content_hash,
    }
    document = Document.objects.filter(path=source.path).first()
    if document is None:
        # A title moved to another file: free it first (titles are unique, citations use them).
        Document.objects.filter(title=source.title).delete()
        return Document.objects.create(path=source.path, **fields)
    if document.content_hash != source.content_hash:
        if document.title != source.title:
            Document.objects.filter(title=source.title).exclude(pk=document.pk).delete()
        for name, value in fields.items():
            setattr(document, name, value)
        document.save()
    return document


def _diff_chunks(document: Document, source: SourceDocument, embedder: Embedder,
                 report: SyncReport) -> list:
    existing = {c.content_hash: c for c in document.chunks.filter(embed_model=embedder.name)}

    wanted = {chunk.content_hash: chunk for chunk in source.chunks}
    gone = [c for h, c in existing.items() if h not in wanted]
    gone_headings = {c.heading_path for c in gone}
    new = [chunk for h, chunk in wanted.items() if h not in existing]

    for chunk in new:
        if chunk.heading_path in gone_headings:
            report.changed += 1
        else:
            report.added += 1
    report.removed += max(0, len(gone) - sum(1 for c in new if c.heading_path in gone_headings))
    if gone:
        KnowledgeChunk.objects.filter(pk__in=[c.pk for c in gone]).delete()

    for content_hash, chunk in wanted.items():
        row = existing.get(content_hash)
        if row is None:
            continue
        report.unchanged += 1
        if row.ordinal != chunk.ordinal:  # moved within the file: no re-embedding needed
            row.ordinal = chunk.ordinal
            row.save(update_fields=["ordinal"])
    return new


def _embed(texts: list[str], embedder: Embedder, progress: ProgressFn | None) -> list:
    vectors: list = []
    for start in range(0, len(texts), EMBED_BATCH):
        batch = embedder.passages(texts[start:start + EMBED_BATCH])
        vectors.extend(list(batch))
        if progress is not None:
            progress(min(start + EMBED_BATCH, len(texts)), len(texts))
    return vectors
