"""Writes to the knowledge tables. The only place that creates, changes or deletes them."""

from __future__ import annotations

import datetime as dt
import hashlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from django.db import connection, transaction
from django.db.models import CharField, Expression, Value
from django.db.models.functions import Cast, Concat
from django.utils import timezone

from knowledge.content import Chunk, ContentError, SourceDocument, chunk_markdown, read_folder, sha256
from knowledge.embedders import Embedder
from knowledge.models import Document, KnowledgeChunk, LexemeStat, TaughtAnswer

if TYPE_CHECKING:
    from knowledge.importing.fetch import Resolver
    from knowledge.importing.follow import Refresh

ProgressFn = Callable[[int, int], None]
EMBED_BATCH = 32
# New chunks (all models together) embedded and then written per transaction: a sync of 10,000
# chunks is many short transactions, not one that holds its locks for a quarter of an hour.
WRITE_BATCH = 256
SYNC_LOCK = int.from_bytes(hashlib.sha256(b"twinsite-knowledge-sync").digest()[:8], "big", signed=True)


class SyncBusy(Exception):
    """Another knowledge sync (the worker, a terminal) is running."""


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


@dataclass
class _Plan:
    """What one document needs: its new chunks per model, rows to delete, ordinals to move."""

    source: SourceDocument
    changed: bool  # the document row itself (metadata, body)
    new: dict[str, list[Chunk]] = field(default_factory=dict)
    gone: list[int] = field(default_factory=list)
    moved: list[tuple[int, int]] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(len(chunks) for chunks in self.new.values())

    @property
    def touched(self) -> bool:
        return self.changed or bool(self.size or self.gone or self.moved)


def progress_bar(done: int, total: int, note: str = "", *, label: str = "embedding",
                 minimum: int = 2 * EMBED_BATCH, finish: bool = True) -> None:
    """A bar on the terminal: ``label [###...] done/total note``; nothing for runs under
    ``minimum``; ``finish``: end the line when done reaches total (else the caller ends it)."""
    if total < minimum:
        return  # short runs need no bar
    width = 30
    filled = int(width * done / total) if total else width
    line = f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}"
    if note:  # padded: a shorter note overwrites a longer one
        line += f" {note if len(note) <= 50 else note[:49] + '…':<50}"
    sys.stderr.write(line)
    if finish and done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()


@contextmanager
def _sync_lock() -> Iterator[None]:
    """One sync at a time, across processes: a session advisory lock on Django's connection."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [SYNC_LOCK])
        if not cursor.fetchone()[0]:
            raise SyncBusy("another knowledge sync is running")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [SYNC_LOCK])


def knowledge_sync(*, root: Path, embedders: list[Embedder], progress: ProgressFn | None = None,
                   batch_chunks: int = WRITE_BATCH) -> SyncReport:
    """Bring the tables in line with the folder, embedding only chunks whose hash is new.

    Every chunk is stored once per configured embedding model (its row records the model);
    chunk counts in the report are those of the primary model. A bad file changes nothing (the
    folder is read and checked first). Then documents are embedded outside any transaction and
    written in batches of about ``batch_chunks`` new chunks, each batch one transaction: every
    document is either as it was or fully synced (all its chunks, all models), never half. A
    failed embedding stops the sync with the earlier batches kept; the next sync embeds only
    what is still missing. Stale documents, rows of models no longer configured (switching
    models re-embeds instead of mixing vector spaces) and the full-text statistics follow last.
    """
    sources = read_folder(root)  # raises ContentError before anything is written
    with _sync_lock():
        # read under the lock: an answer taught meanwhile waits for it (``_teaching_lock``)
        sources += _taught_beside(sources)
        report = SyncReport()
        public = [s for s in sources if s.public]
        report.excluded = len(sources) - len(public)
        report.documents = len(public)
        stale = Document.objects.exclude(path__in=[s.path for s in public])
        report.documents_removed = stale.count()
        report.removed += KnowledgeChunk.objects.filter(document__in=stale, embed_model=embedders[0].name).count()

        plans = [_plan(source, embedders, report) for source in public]
        total = sum(plan.size for plan in plans)
        done = 0
        if progress is not None and total:
            progress(0, total)
        for group in _groups([p for p in plans if p.touched], batch_chunks):
            vectors: dict[str, list] = {}
            for embedder in embedders:
                texts = [c.embed_text for plan in group for c in plan.new.get(embedder.name, [])]
                vectors[embedder.name] = _embed(texts, embedder, progress, done, total)
                done += len(texts)
            with transaction.atomic():
                for plan in group:
                    _apply(plan, embedders, vectors)
        for embedder in embedders:
            report.embedded_per_model[embedder.name] = sum(len(p.new.get(embedder.name, [])) for p in plans)
        report.embedded = sum(report.embedded_per_model.values())
        with transaction.atomic():
            Document.objects.exclude(path__in=[s.path for s in public]).delete()
            KnowledgeChunk.objects.exclude(embed_model__in=[e.name for e in embedders]).delete()
            lexeme_stats_refresh(embed_model=embedders[0].name)
    return report


# --- answers the owner taught in the admin ------------------------------------------------------------
# A taught answer (knowledge.models.TaughtAnswer) is a document of kind ``faq`` at
# ``taught/<id>.md``: its question the title, its answer the body. The sync keeps it beside the
# folder's documents; the admin makes it searchable the moment it is saved.

TAUGHT = "taught/"


def taught_path(pk: int) -> str:
    return f"{TAUGHT}{pk}.md"


def taught_path_sql(pk: Expression) -> Concat:
    """``taught_path`` as a database expression, for a query over many answers at once."""
    return Concat(Value(TAUGHT), Cast(pk, CharField()), Value(".md"))


def taught_source(answer: TaughtAnswer) -> SourceDocument:
    """The answer as the sync reads a file."""
    title, body = answer.question.strip(), answer.answer.strip().replace("\r\n", "\n") + "\n"
    source = SourceDocument(
        path=taught_path(answer.pk), title=title, kind=Document.Kind.FAQ, lang=answer.lang, url="",
        updated=timezone.localdate(answer.updated_at) if answer.updated_at else None, public=True, body=body,
        content_hash=sha256(f"{title}\n{answer.lang}\n{body}"))
    source.chunks = chunk_markdown(title, body)
    return source


def _taught_beside(files: list[SourceDocument]) -> list[SourceDocument]:
    """The taught answers, checked against the folder's titles (a citation names one document)."""
    taught = [taught_source(answer) for answer in TaughtAnswer.objects.order_by("pk")]
    titles = {s.title: s.path for s in files}
    for source in taught:
        if source.title in titles:
            raise ContentError(f"{titles[source.title]}: field 'title' {source.title!r} is already the question of a "
                               f"taught answer (admin: Taught answers #{source.path.removeprefix(TAUGHT)[:-3]})")
    return taught


@contextmanager
def _teaching_lock() -> Iterator[None]:
    """The sync's lock for the rest of the caller's transaction (taken inside one, released when
    it commits or rolls back): an answer taught in the admin commits before a sync can read the
    taught answers, so the sync neither misses it nor deletes its document. ``SyncBusy`` while a
    sync runs."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [SYNC_LOCK])
            if not cursor.fetchone()[0]:
                raise SyncBusy("a knowledge sync is running")
        yield


def knowledge_teach(*, answer: TaughtAnswer, embedders: list[Embedder]) -> Document:
    """Make or update a taught answer's document now, embedded with every configured model.
    Raises ``ContentError`` when another document has its question as title, ``SyncBusy``
    while a sync runs."""
    source = taught_source(answer)
    with _teaching_lock():
        if Document.objects.filter(title=source.title).exclude(path=source.path).exists():
            raise ContentError(f"a document titled {source.title!r} exists already")
        plan = _plan(source, embedders, SyncReport())
        vectors = {e.name: _embed([c.embed_text for c in plan.new.get(e.name, [])], e, None, 0, 0)
                   for e in embedders}
        _apply(plan, embedders, vectors)
        lexeme_stats_refresh(embed_model=embedders[0].name)
        return Document.objects.get(path=source.path)


def knowledge_unteach(*, pk: int, embedders: list[Embedder]) -> int:
    """Remove a taught answer's document and its chunks; the number of documents removed.
    ``SyncBusy`` while a sync runs."""
    with _teaching_lock():
        removed, _ = Document.objects.filter(path=taught_path(pk)).delete()
        lexeme_stats_refresh(embed_model=embedders[0].name)
    return 1 if removed else 0


def _groups(plans: list[_Plan], batch_chunks: int) -> Iterator[list[_Plan]]:
    group: list[_Plan] = []
    size = 0
    for plan in plans:
        if group and size + plan.size > batch_chunks:
            yield group
            group, size = [], 0
        group.append(plan)
        size += plan.size
    if group:
        yield group


def _plan(source: SourceDocument, embedders: list[Embedder], report: SyncReport) -> _Plan:
    document = Document.objects.filter(path=source.path).first()
    plan = _Plan(source=source, changed=document is None or document.content_hash != source.content_hash)
    for position, embedder in enumerate(embedders):
        counts = report if position == 0 else SyncReport()
        existing = {} if document is None else {
            c.content_hash: c for c in document.chunks.filter(embed_model=embedder.name).only(
                "pk", "content_hash", "heading_path", "ordinal")}
        wanted = {chunk.content_hash: chunk for chunk in source.chunks}
        gone = [c for h, c in existing.items() if h not in wanted]
        gone_headings = {c.heading_path for c in gone}
        new = [chunk for h, chunk in wanted.items() if h not in existing]
        for chunk in new:
            if chunk.heading_path in gone_headings:
                counts.changed += 1
            else:
                counts.added += 1
        counts.removed += max(0, len(gone) - sum(1 for c in new if c.heading_path in gone_headings))
        plan.new[embedder.name] = new
        plan.gone += [c.pk for c in gone]
        for content_hash, chunk in wanted.items():
            row = existing.get(content_hash)
            if row is None:
                continue
            counts.unchanged += 1
            if row.ordinal != chunk.ordinal:  # moved within the file: no re-embedding needed
                plan.moved.append((row.pk, chunk.ordinal))
    return plan


def _apply(plan: _Plan, embedders: list[Embedder], vectors: dict[str, list]) -> None:
    document = _upsert_document(plan.source)
    if plan.gone:
        KnowledgeChunk.objects.filter(pk__in=plan.gone).delete()
    for pk, ordinal in plan.moved:
        KnowledgeChunk.objects.filter(pk=pk).update(ordinal=ordinal)
    for embedder in embedders:
        chunks = plan.new.get(embedder.name, [])
        mine, vectors[embedder.name] = vectors[embedder.name][:len(chunks)], vectors[embedder.name][len(chunks):]
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
            for chunk, vector in zip(chunks, mine, strict=True)
        ])


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
        _free_title(source.title, keep=None)
        return Document.objects.create(path=source.path, **fields)
    if document.content_hash != source.content_hash:
        if document.title != source.title:
            _free_title(source.title, keep=document.pk)
        for name, value in fields.items():
            setattr(document, name, value)
        document.save()
    return document


def _free_title(title: str, *, keep: int | None) -> None:
    """A title moved to another file (titles are unique, citations use them): the document that
    holds it gets a placeholder title until its own batch (it was renamed too) or the final
    clean-up (it is gone) reaches it. Renamed, not deleted: its chunks stay valid for its plan."""
    for other in Document.objects.filter(title=title).exclude(pk=keep):
        other.title = f"{title[:250]} (moving, #{other.pk})"
        other.save(update_fields=["title"])


def _embed(texts: list[str], embedder: Embedder, progress: ProgressFn | None, done: int, total: int) -> list:
    vectors: list = []
    for start in range(0, len(texts), EMBED_BATCH):
        batch = embedder.passages(texts[start:start + EMBED_BATCH])
        vectors.extend(list(batch))
        if progress is not None:
            progress(done + min(start + EMBED_BATCH, len(texts)), total)
    return vectors


REFRESH_LOCK = 4_707_114_706  # pg_try_advisory_lock key of "following the owner's sources" (unique to this use)


def knowledge_refresh(*, root: Path, now: dt.datetime | None = None, force: bool = False,
                      resolve: Resolver | None = None) -> Refresh | None:
    """Read the sources the owner imported again when they are due (``TWIN_IMPORT_EVERY``; every
    time with ``force``) and sync what changed: ``knowledge.importing.follow``. One refresh at a
    time across workers (a session advisory lock; a second finds it busy and returns None, as when
    nothing is due). Returns the refresh's report, or None."""
    from django.conf import settings

    from knowledge.embedders import get_embedders
    from knowledge.importing.followed import due, followed

    now = now or timezone.now()
    if not followed(root) or not (force or due(root, settings.TWIN_IMPORT_EVERY, now)):
        return None
    from knowledge.importing import follow  # the readers load only when a refresh is due
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [REFRESH_LOCK])
        if not cursor.fetchone()[0]:
            return None
    try:
        taken = set(TaughtAnswer.objects.values_list("question", flat=True))
        report = follow.refresh(root, now=now, taken_titles=taken, resolve=resolve)
        if report.changed_files:  # incremental: only the changed chunks are embedded again
            knowledge_sync(root=root, embedders=get_embedders())
        return report
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [REFRESH_LOCK])
