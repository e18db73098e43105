"""Reads of the knowledge base: hybrid search and the system-prompt prefix.

One search service serves the agent's ``search_knowledge`` tool, the admin's test page and
the retrieval evals, so what the owner debugs is what the agent sees.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Literal

from django.conf import settings
from django.db import connection
from django.db.models.functions import Cast
from pgvector.django import CosineDistance, VectorField

from knowledge.content import sha256
from knowledge.embedders import Embedder, get_embedder
from knowledge.models import Document, KnowledgeChunk

Mode = Literal["hybrid", "dense", "fulltext"]
RRF_K = 60
_WORD = re.compile(r"\w+", re.UNICODE)
KIND_ORDER = ["about", "cv", "skills", "project", "article", "availability"]


@dataclass
class SearchHit:
    chunk_id: int
    document_title: str
    document_url: str
    document_kind: str
    heading_path: str
    text: str
    dense_score: float | None = None  # cosine similarity
    dense_rank: int | None = None
    fulltext_score: float | None = None
    fulltext_rank: int | None = None
    fused_score: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


def fulltext_query(query: str) -> str:
    """An OR-query of the question's stems, in both stemmers' forms.

    A word that either language treats as a stop word is dropped: "die", "over" or "had" are
    noise in a bilingual index even where only one language lists them.
    """
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))[:64]
    if not words:
        return ""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tsvector_to_array(to_tsvector('english', w)), "
            "tsvector_to_array(to_tsvector('dutch', w)) FROM unnest(%s::text[]) AS w",
            [words],
        )
        rows = cursor.fetchall()
    lexemes: list[str] = []
    for english, dutch in rows:
        if english and dutch:
            lexemes.extend(english + dutch)
    unique = dict.fromkeys(lex.replace("'", "''") for lex in lexemes)
    return " | ".join(f"'{lex}'" for lex in unique)


def _dense(query_vector, embedder: Embedder, limit: int) -> list[tuple[int, float]]:
    vector_type = VectorField(dimensions=embedder.dimensions)
    rows = (
        KnowledgeChunk.objects.filter(embed_model=embedder.name)
        # the cast matches the partial HNSW index expression for this model's dimension
        .annotate(distance=CosineDistance(Cast("embedding", vector_type), query_vector))
        .order_by("distance")
        .values_list("id", "distance")[:limit]
    )
    return [(pk, 1.0 - float(distance)) for pk, distance in rows]


def _fulltext(query: str, embedder: Embedder, limit: int) -> list[tuple[int, float]]:
    tsquery = fulltext_query(query)
    if not tsquery:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, ts_rank(search_vector, q, 1) AS rank "
            "FROM knowledge_knowledgechunk, to_tsquery('simple', %s) AS q "
            "WHERE embed_model = %s AND search_vector @@ q "
            "ORDER BY rank DESC, id LIMIT %s",
            [tsquery, embedder.name, limit],
        )
        return [(pk, float(rank)) for pk, rank in cursor.fetchall()]


def knowledge_search(query: str, *, top_k: int | None = None, mode: Mode = "hybrid",
                     embedder: Embedder | None = None, query_vector=None) -> list[SearchHit]:
    """Rank chunks for ``query``: pgvector cosine + Postgres full text, fused by RRF.

    ``query_vector`` lets async callers embed off the event loop and pass the result in.
    """
    embedder = embedder or get_embedder()
    top_k = min(top_k or settings.TWIN_SEARCH_TOP_K, 50)
    candidates = max(settings.TWIN_SEARCH_CANDIDATES, top_k)
    dense: list[tuple[int, float]] = []
    fulltext: list[tuple[int, float]] = []
    if mode in ("hybrid", "dense"):
        if query_vector is None:
            query_vector = embedder.query(query)
        dense = _dense(query_vector, embedder, candidates)
    if mode in ("hybrid", "fulltext"):
        fulltext = _fulltext(query, embedder, candidates)

    fused: dict[int, float] = {}
    for ranking in (dense, fulltext):
        for rank, (pk, _score) in enumerate(ranking, start=1):
            fused[pk] = fused.get(pk, 0.0) + 1.0 / (RRF_K + rank)
    order = sorted(fused, key=lambda pk: (-fused[pk], pk))[:top_k]
    chunks = KnowledgeChunk.objects.select_related("document").in_bulk(order)
    dense_at = {pk: (rank, score) for rank, (pk, score) in enumerate(dense, start=1)}
    fulltext_at = {pk: (rank, score) for rank, (pk, score) in enumerate(fulltext, start=1)}
    hits = []
    for pk in order:
        chunk = chunks[pk]
        d_rank, d_score = dense_at.get(pk, (None, None))
        f_rank, f_score = fulltext_at.get(pk, (None, None))
        hits.append(SearchHit(
            chunk_id=pk, document_title=chunk.document.title, document_url=chunk.document.url,
            document_kind=chunk.document.kind, heading_path=chunk.heading_path, text=chunk.text,
            dense_score=d_score, dense_rank=d_rank, fulltext_score=f_score, fulltext_rank=f_rank,
            fused_score=fused[pk],
        ))
    return hits


def document_titles() -> set[str]:
    return set(Document.objects.values_list("title", flat=True))


def document_urls() -> dict[str, str]:
    return dict(Document.objects.values_list("title", "url"))


def knowledge_prefix() -> tuple[str, str]:
    """All public knowledge as one Markdown text in a fixed order, and its sha256.

    Byte-identical between calls until content changes, so providers can cache it as a prompt
    prefix. Only public documents are in the tables, so drafts never reach it.
    """
    documents = sorted(
        Document.objects.only("title", "kind", "url", "body", "path"),
        key=lambda d: (KIND_ORDER.index(d.kind) if d.kind in KIND_ORDER else 99, d.path),
    )
    parts = []
    for doc in documents:
        source = f"source: {doc.title}" + (f" ({doc.url})" if doc.url else "")
        parts.append(f"# {doc.title}\n[{source}]\n\n{doc.body.strip()}\n")
    text = "\n".join(parts)
    return text, sha256(text)


def is_relevant(hit: SearchHit, embedder: Embedder) -> bool:
    """Whether a hit is good enough to answer from (fail closed: no answer beats a guess).

    Cosine scores of one model bunch together, so the floor is per model and a lexical match
    lowers it a little: a passage sharing the question's words needs less semantic evidence.
    """
    floor = settings.TWIN_RELEVANCE_FLOOR or getattr(embedder, "relevance_floor", 0.0)
    dense = hit.dense_score if hit.dense_score is not None else 0.0
    if hit.fulltext_rank is not None:
        return dense >= floor - 0.03
    return dense >= floor


def availability_chunks(language: str) -> list[dict]:
    """All chunks of the availability documents, in the visitor's language when there is one."""
    chunks = list(
        KnowledgeChunk.objects.filter(document__kind=Document.Kind.AVAILABILITY)
        .select_related("document")
        .order_by("document__path", "ordinal")
    )
    preferred = [c for c in chunks if c.document.lang == language] or chunks
    return [
        {"chunk_id": c.pk, "document_title": c.document.title, "document_url": c.document.url,
         "heading_path": c.heading_path, "text": c.text}
        for c in preferred
    ]
