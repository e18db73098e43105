"""Hybrid search over the knowledge base: one service for the agent's ``search_knowledge`` tool,
the admin's test page and the retrieval evals, so what the owner debugs is what the agent sees.
``query`` reads the question, ``rankings`` ranks and fuses, ``relevance`` judges each hit
(``relevance.relevance``: every hit of one search).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from django.conf import settings
from django.db import connection, transaction

from knowledge.embedders import Embedder, get_embedders
from knowledge.models import KnowledgeChunk
from knowledge.search.query import query_lexemes, query_terms, translations, warm_vocabulary, weighted_terms
from knowledge.search.rankings import (
    HEADING_WEIGHT,
    HNSW_EF_SEARCH,
    RRF_K,
    FulltextRanking,
    Key,
    Ranking,
    cosines,
    dense_rankings,
    fulltext_ranking,
    fuse,
    heading_ranking,
    primary_chunks,
)
from knowledge.selectors import public_url
from text.language import detect_language

__all__ = ["HEADING_WEIGHT", "RRF_K", "Mode", "SearchHit", "knowledge_search", "query_lexemes", "query_terms",
           "warm_vocabulary"]

Mode = Literal["hybrid", "dense", "fulltext"]


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
    fulltext_held: float = 0.0  # the share of the question's own words the chunk holds (questions of 2+ words)
    fulltext_translated: bool = False  # the full text matched only the question's words in the other language
    heading_rank: int | None = None  # in the ranking of headings that name the question's words
    agreement: int = 0  # how many rankings (each model, full text, headings) put it in their top 3
    other_language: bool = False  # the document is not in the question's language
    second_score: float | None = None  # the second model's cosine (None: one model, or a full-text search)

    def as_dict(self) -> dict:
        return asdict(self)

def knowledge_search(query: str, *, top_k: int | None = None, mode: Mode = "hybrid",
                     embedders: list[Embedder] | None = None,
                     query_vectors: dict[str, object] | None = None) -> list[SearchHit]:
    """Rank chunks for ``query``: each model's pgvector cosine ranking and Postgres full text,
    fused by weighted reciprocal-rank fusion. Vectors are only compared within one model.

    ``query_vectors`` (model name -> vector) lets async callers embed off the event loop; the
    vectors still missing are computed first, so no transaction stays open while a model runs.
    A search is one transaction (one for Postgres to count, not one a statement) and, when it
    opens that transaction itself, one snapshot (``REPEATABLE READ``; Postgres' default takes
    one a statement): a sync committing meanwhile cannot give rankings from before it and chunk
    rows from after it. Inside a caller's transaction it reads as that transaction does.
    """
    embedders = embedders or get_embedders()
    primary = embedders[0]
    query_vectors = dict(query_vectors or {})
    for embedder in embedders if mode in ("hybrid", "dense") else [primary]:
        if embedder.name not in query_vectors:
            query_vectors[embedder.name] = embedder.query(query)
    top_k = min(top_k or settings.TWIN_SEARCH_TOP_K, 50)
    candidates = max(settings.TWIN_SEARCH_CANDIDATES, top_k)
    # read before the search's transaction: the first search of a process embeds the vocabulary
    language = detect_language(query)  # read once: the translations, the headings and the hits ask it
    translated = translations(query, language) if mode in ("hybrid", "fulltext") else []
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        setup = ["SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"] if outermost else []
        if mode in ("hybrid", "dense"):
            setup.append(f"SET LOCAL hnsw.ef_search = {HNSW_EF_SEARCH:d}")  # lasts until the block ends
        if setup:
            with connection.cursor() as cursor:
                cursor.execute("; ".join(setup))  # one round trip
        rankings = dense_rankings(mode, embedders, query_vectors, candidates)
        fulltext: FulltextRanking = []
        headings: Ranking = []
        unsure: dict[int, set[Key]] = {}
        if mode in ("hybrid", "fulltext"):
            terms, words, only_translated = weighted_terms(query, translated)
            fulltext = fulltext_ranking(terms, words, primary, candidates, only_translated)
            # a translation ranks a chunk, but its rank is no agreement (``is_relevant``)
            unsure[len(rankings)] = {key for key, *_, by_translation in fulltext if by_translation}
            rankings.append((settings.TWIN_FULLTEXT_WEIGHT if mode == "hybrid" else 1.0,
                             [(key, score) for key, score, *_ in fulltext]))
            if mode == "hybrid":
                # the headings that name the visitor's words or their topic's
                given = {lex: weight for lex, weight in terms.items() if lex not in only_translated}
                headings = heading_ranking(query, given, primary, candidates, language)
                rankings.append((HEADING_WEIGHT, headings))
        fused, agreement = fuse(rankings, unsure)
        order = sorted(fused, key=lambda key: (-fused[key], key))[:top_k]
        if not order:
            return []
        by_key = primary_chunks(order, primary, query_vectors[primary.name])
        # the second model's cosine of every hit, not only of those its own ranking found (an HNSW
        # walk may miss a row, and is_relevant asks it of each hit)
        second = (cosines(order, embedders[1], query_vectors[embedders[1].name])
                  if mode != "fulltext" and len(embedders) > 1 else {})
    primary_ranking = rankings[0][1] if mode != "fulltext" else []
    return _hits(order, by_key, fused=fused, agreement=agreement, primary_ranking=primary_ranking,
                 fulltext=fulltext, headings=headings, language=language, second=second)


def _hits(order: list[Key], by_key: dict[Key, KnowledgeChunk], *, fused: dict[Key, float], agreement: dict[Key, int],
          primary_ranking: Ranking, fulltext: FulltextRanking, headings: Ranking, language: str,
          second: dict[Key, float]) -> list[SearchHit]:
    """The fused order as hits, each with what every ranking said of it (the trace shows them)."""
    primary_rank = {key: rank for rank, (key, _) in enumerate(primary_ranking, start=1)}
    fulltext_at = {key: (rank, score, held, only) for rank, (key, score, held, only) in enumerate(fulltext, start=1)}
    heading_at = {key: rank for rank, (key, _) in enumerate(headings, start=1)}
    hits = []
    for key in order:
        chunk = by_key.get(key)
        if chunk is None:
            continue
        f_rank, f_score, f_held, f_translated = fulltext_at.get(key, (None, None, 0.0, False))
        hits.append(SearchHit(
            chunk_id=chunk.pk, document_title=chunk.document.title,
            document_url=public_url(chunk.document.path, chunk.document.url), document_kind=chunk.document.kind,
            heading_path=chunk.heading_path, text=chunk.text,
            dense_score=1.0 - float(chunk.distance), dense_rank=primary_rank.get(key),
            fulltext_score=f_score, fulltext_rank=f_rank, fused_score=fused[key],
            fulltext_held=f_held, fulltext_translated=f_translated, heading_rank=heading_at.get(key),
            agreement=agreement.get(key, 0),
            other_language=chunk.document.lang != language, second_score=second.get(key),
        ))
    return hits
