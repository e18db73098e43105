"""Reads of the knowledge base: hybrid search and the system-prompt prefix.

One search service serves the agent's ``search_knowledge`` tool, the admin's test page and
the retrieval evals, so what the owner debugs is what the agent sees.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import Literal

from django.conf import settings
from django.db import connection
from django.db.models.functions import Cast
from django.urls import reverse
from django.utils.text import slugify
from pgvector.django import CosineDistance, VectorField

from knowledge.content import sha256
from knowledge.embedders import Embedder, get_embedders
from knowledge.models import Document, KnowledgeChunk, LexemeStat

Mode = Literal["hybrid", "dense", "fulltext"]
RRF_K = 60
_WORD = re.compile(r"\w+", re.UNICODE)
# Question words carry no content, and Postgres' stop lists keep some of them ("waar", "welke").
QUESTION_WORDS = frozenset(
    "what which who whom whose where when why how does did do can could would is are was "
    "wat welk welke wie waar wanneer waarom hoe hoeveel heeft hebben kan kun kunt zou".split()
)


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


def query_lexemes(query: str) -> list[str]:
    """The question's stems, in both stemmers' forms.

    A word that either language treats as a stop word is dropped: "die", "over" or "had" are
    noise in a bilingual index even where only one language lists them.
    """
    words = [w for w in dict.fromkeys(w.lower() for w in _WORD.findall(query)) if w not in QUESTION_WORDS][:64]
    if not words:
        return []
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
    return list(dict.fromkeys(lexemes))


def _quote(lexeme: str) -> str:
    """A lexeme as a quoted ``tsquery`` operand."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


Key = tuple[int, str]  # (document id, content hash): one chunk, whatever model embedded it


def _dense(query_vector, embedder: Embedder, limit: int) -> list[tuple[Key, float]]:
    vector_type = VectorField(dimensions=embedder.dimensions)
    rows = (
        KnowledgeChunk.objects.filter(embed_model=embedder.name)
        # the cast matches the partial HNSW index expression for this model's dimension
        .annotate(distance=CosineDistance(Cast("embedding", vector_type), query_vector))
        .order_by("distance")
        .values_list("document_id", "content_hash", "distance")[:limit]
    )
    return [((doc, digest), 1.0 - float(distance)) for doc, digest, distance in rows]


# A lexeme in more than this share of chunks says little about any of them (IDF < 1.6); it is
# left out of the query, which also keeps the number of rows to score small.
MAX_DOC_SHARE = 0.2


def _fulltext(query: str, embedder: Embedder, limit: int) -> list[tuple[Key, float]]:
    """IDF-weighted lexical match: rare words count, words found in many chunks do not.

    ``ts_rank`` alone has no notion of rarity, so an OR-query over a question ranks chunks by
    how often they say "werkt" or "she". Each lexeme weighs ln(N / df), with document
    frequencies from ``LexemeStat`` (kept by the sync); ``ts_rank`` only breaks ties.
    """
    lexemes = query_lexemes(query)
    if not lexemes:
        return []
    stats = dict(LexemeStat.objects.filter(lexeme__in=[*lexemes, ""]).values_list("lexeme", "ndoc"))
    total = stats.pop("", 0)
    weights = {lex: math.log(total / df) for lex, df in stats.items() if df and df <= MAX_DOC_SHARE * total}
    if not weights:
        return []
    score = " + ".join("CASE WHEN search_vector @@ to_tsquery('simple', %s) THEN %s ELSE 0 END" for _ in weights)
    params: list = []
    for lex, weight in weights.items():
        params.extend([_quote(lex), weight])
    tsquery = " | ".join(_quote(lex) for lex in weights)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT document_id, content_hash, ({score}) + ts_rank(search_vector, q, 1) AS rank "
            "FROM knowledge_knowledgechunk, to_tsquery('simple', %s) AS q "
            "WHERE embed_model = %s AND search_vector @@ q "
            "ORDER BY rank DESC, id LIMIT %s",
            [*params, tsquery, embedder.name, limit],
        )
        return [((doc, digest), float(rank)) for doc, digest, rank in cursor.fetchall()]


def knowledge_search(query: str, *, top_k: int | None = None, mode: Mode = "hybrid",
                     embedders: list[Embedder] | None = None,
                     query_vectors: dict[str, object] | None = None) -> list[SearchHit]:
    """Rank chunks for ``query``: each model's pgvector cosine ranking and Postgres full text,
    fused by weighted reciprocal-rank fusion. Vectors are only compared within one model.

    ``query_vectors`` (model name -> vector) lets async callers embed off the event loop.
    """
    embedders = embedders or get_embedders()
    primary = embedders[0]
    query_vectors = dict(query_vectors or {})
    top_k = min(top_k or settings.TWIN_SEARCH_TOP_K, 50)
    candidates = max(settings.TWIN_SEARCH_CANDIDATES, top_k)
    rankings: list[tuple[float, list[tuple[Key, float]]]] = []
    if mode in ("hybrid", "dense"):
        for embedder in embedders:
            if embedder.name not in query_vectors:
                query_vectors[embedder.name] = embedder.query(query)
            rankings.append((1.0, _dense(query_vectors[embedder.name], embedder, candidates)))
    fulltext: list[tuple[Key, float]] = []
    if mode in ("hybrid", "fulltext"):
        fulltext = _fulltext(query, primary, candidates)
        rankings.append((settings.TWIN_FULLTEXT_WEIGHT if mode == "hybrid" else 1.0, fulltext))

    fused: dict[Key, float] = {}
    for weight, ranking in rankings:
        for rank, (key, _score) in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (RRF_K + rank)
    order = sorted(fused, key=lambda key: (-fused[key], key))[:top_k]
    if not order:
        return []

    # One row per chunk: the primary model's, with its cosine to the question for every hit
    # (relevance is judged on the primary model's scale).
    rows = (
        KnowledgeChunk.objects.filter(embed_model=primary.name, content_hash__in={h for _, h in order})
        .only("id", "document_id", "content_hash", "heading_path", "text",
              "document__title", "document__url", "document__kind", "document__path")
    )
    if primary.name not in query_vectors:
        query_vectors[primary.name] = primary.query(query)
    rows = rows.annotate(distance=CosineDistance(
        Cast("embedding", VectorField(dimensions=primary.dimensions)), query_vectors[primary.name]
    )).select_related("document")
    by_key = {(row.document_id, row.content_hash): row for row in rows}
    primary_rank = {key: rank for rank, (key, _) in enumerate(rankings[0][1], start=1)} if mode != "fulltext" else {}
    fulltext_at = {key: (rank, score) for rank, (key, score) in enumerate(fulltext, start=1)}
    hits = []
    for key in order:
        chunk = by_key.get(key)
        if chunk is None:
            continue
        f_rank, f_score = fulltext_at.get(key, (None, None))
        hits.append(SearchHit(
            chunk_id=chunk.pk, document_title=chunk.document.title,
            document_url=public_url(chunk.document.path, chunk.document.url), document_kind=chunk.document.kind,
            heading_path=chunk.heading_path, text=chunk.text,
            dense_score=1.0 - float(chunk.distance), dense_rank=primary_rank.get(key),
            fulltext_score=f_score, fulltext_rank=f_rank, fused_score=fused[key],
        ))
    return hits


def source_slug(path: str) -> str:
    """The public page of a document: ``/sources/<slug>/``, the slug from its file's path."""
    return slugify(str(PurePosixPath(path).with_suffix("")).replace("/", "-"))


def public_url(path: str, url: str) -> str:
    """Where a citation links: the document's own absolute address, else its source page."""
    if url.startswith(("https://", "http://")):
        return url
    return reverse("source", args=[source_slug(path)])


def document_urls() -> dict[str, str]:
    return {title: public_url(path, url) for title, path, url in Document.objects.values_list("title", "path", "url")}


def document_by_slug(slug: str) -> Document | None:
    """A public document by its source-page slug (only public documents are in the table)."""
    return next((d for d in Document.objects.all() if source_slug(d.path) == slug), None)


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
        {"chunk_id": c.pk, "document_title": c.document.title,
         "document_url": public_url(c.document.path, c.document.url), "heading_path": c.heading_path, "text": c.text}
        for c in preferred
    ]
