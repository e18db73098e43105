"""The rankings a search fuses: each model's cosine ranking, the IDF-weighted full text, and the
headings that name what was asked; weighted reciprocal-rank fusion over them."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import connection
from django.db.models.functions import Cast
from pgvector.django import CosineDistance, VectorField

from knowledge import topics
from knowledge.embedders import Embedder
from knowledge.models import KnowledgeChunk, LexemeStat
from knowledge.search.query import quote_lexeme
from text.forms import same_word
from text.words import content_words
from text.words import words as words_of_text

if TYPE_CHECKING:
    from knowledge.search import Mode

RRF_K = 60
# The RRF weight of the heading ranking: sections whose heading names what was asked ("Education"
# for "Where did she study?", "Opleiding" for "Waar heeft ze gestudeerd?").
HEADING_WEIGHT = 1.0
# A ranking "agrees" on a chunk when it puts it this high (see is_relevant).
AGREE_TOP = 3

Key = tuple[int, str]  # (document id, content hash): one chunk, whatever model embedded it
Ranking = list[tuple[Key, float]]
# (chunk, score, share of the visitor's words held, matched only their words in the other language)
FulltextRanking = list[tuple[Key, float, float, bool]]


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


def _term_weights(terms: dict[str, float]) -> dict[str, float]:
    """Each query lexeme's weight: its inverse document frequency ln(N / df), times its term
    weight. ``ts_rank`` alone has no notion of rarity, so an OR-query over a question would rank
    chunks by how often they say "werkt" or "she"; document frequencies come from
    ``LexemeStat`` (kept by the sync)."""
    if not terms:
        return {}
    stats = dict(LexemeStat.objects.filter(lexeme__in=[*terms, ""]).values_list("lexeme", "ndoc"))
    total = stats.pop("", 0)
    return {lex: math.log(total / df) * terms[lex] for lex, df in stats.items()
            if df and df <= MAX_DOC_SHARE * total}


def fulltext_ranking(terms: dict[str, float], words: list[list[str]], embedder: Embedder,
              limit: int, translated: set[str] = frozenset()) -> FulltextRanking:
    """IDF-weighted lexical match: rare words count, words found in many chunks do not;
    ``ts_rank`` only breaks ties. Also the share of the visitor's own words each chunk holds, and
    whether it matched only lexemes of ``translated`` (the question's words in the other language)."""
    weights = _term_weights(terms)
    if not weights:
        return []
    score = " + ".join("CASE WHEN search_vector @@ to_tsquery('simple', %s) THEN %s ELSE 0 END" for _ in weights)
    params: list = []
    for lex, weight in weights.items():
        params.extend([quote_lexeme(lex), weight])
    held = " + ".join("CASE WHEN search_vector @@ to_tsquery('simple', %s) THEN 1 ELSE 0 END" for _ in words) or "0"
    params.extend(" | ".join(quote_lexeme(lex) for lex in lexemes) for lexemes in words)
    given = [lex for lex in weights if lex not in translated]
    matched_given = "search_vector @@ to_tsquery('simple', %s)" if given else "false"
    if given:
        params.append(" | ".join(quote_lexeme(lex) for lex in given))
    tsquery = " | ".join(quote_lexeme(lex) for lex in weights)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT document_id, content_hash, ({score}) + ts_rank(search_vector, q, 1) AS rank, ({held}), "
            f"{matched_given} "
            "FROM knowledge_knowledgechunk, to_tsquery('simple', %s) AS q "
            "WHERE embed_model = %s AND search_vector @@ q "
            "ORDER BY rank DESC, id LIMIT %s",
            [*params, tsquery, embedder.name, limit],
        )
        return [((doc, digest), float(rank), count / len(words) if len(words) >= 2 else 0.0, not matched_given)
                for doc, digest, rank, count, matched_given in cursor.fetchall()]


_HEADING_VECTOR = "(to_tsvector('english', heading_path) || to_tsvector('dutch', heading_path))"
# A heading names the asked thing when it is mostly made of the question's words (or its topic's)
# and those words are most of the question: "Education" for "Where did she study?" scores 1,
# "Her role" for "Which company planned container shipments?" 1 x 1/5 (below the bar).
HEADING_MATCH = 0.5


def heading_ranking(query: str, terms: dict[str, float], embedder: Embedder, limit: int,
                    language: str) -> list[tuple[Key, float]]:
    """Sections whose own heading names what the question asks about. The chunk text contains
    its heading already; this ranking says the whole section is about the asked thing.

    Score: the share of the heading's words that the question (or a topic it names) covers,
    times the share of the question's words that the heading (or its topic) accounts for.
    """
    owner = set(words_of_text(settings.TWIN_OWNER_NAME))  # "Where did Sam study?" asks about study
    asked = [word for word in content_words(query) if word not in owner]
    if not terms or not asked:
        return []
    tsquery = " | ".join(quote_lexeme(lex) for lex in terms)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.document_id, c.content_hash, c.heading_path, d.lang "
            "FROM knowledge_knowledgechunk c JOIN knowledge_document d ON d.id = c.document_id, "
            f"to_tsquery('simple', %s) AS q WHERE c.embed_model = %s AND c.heading_path <> '' "
            f"AND {_HEADING_VECTOR.replace('heading_path', 'c.heading_path')} @@ q ORDER BY c.id LIMIT %s",
            [tsquery, embedder.name, limit * 4],
        )
        rows = cursor.fetchall()
    question_topics = topics.topics_of(query)
    scored = []
    for doc, digest, path, lang in rows:
        named = content_words(path.rsplit(" > ", 1)[-1])
        # the question's topics this heading speaks of ("Opleiding" is education)
        spoken = topics.topic_words([t for t in question_topics if _any_same(named, topics.topic_words([t]))])
        heading_share = sum(_any_same([word], [*asked, *spoken]) for word in named) / max(len(named), 1)
        question_share = sum(_any_same([word], [*named, *spoken]) for word in asked) / len(asked)
        if heading_share * question_share >= HEADING_MATCH:
            scored.append(((doc, digest), heading_share * question_share, lang == language))
    # a section in the question's language first when two name the asked thing equally well
    scored.sort(key=lambda item: (-item[1], not item[2]))  # stable: further ties keep the table's order
    return [(key, score) for key, score, _ in scored[:limit]]


def _any_same(words, others) -> bool:
    return any(same_word(word, other) for word in words for other in others)


def dense_rankings(mode: Mode, embedders: list[Embedder], query_vectors: dict[str, object],
                    candidates: int) -> list[tuple[float, Ranking]]:
    """Each model's cosine ranking, weight 1 (none in full-text mode), in the search's transaction."""
    rankings: list[tuple[float, Ranking]] = []
    if mode in ("hybrid", "dense"):
        for embedder in embedders:
            rankings.append((1.0, _dense(query_vectors[embedder.name], embedder, candidates)))
    return rankings


# Candidates an HNSW index walk keeps (pgvector's default: 40). Rows a sync deletes stay in the
# index until vacuum, and a walk of 40 through many of them missed a chunk added just before (a
# taught answer, found by the exact scan and by a walk of 200; tests/knowledge/test_teach.py).
# A wider walk costs more per search on a large knowledge base (not measured at 10k chunks).
HNSW_EF_SEARCH = 200


def fuse(rankings: list[tuple[float, Ranking]],
          unsure: dict[int, set[Key]] | None = None) -> tuple[dict[Key, float], dict[Key, int]]:
    """Weighted reciprocal-rank fusion, and how many rankings put each chunk in their top
    ``AGREE_TOP`` (is_relevant trusts a chunk that several rankings agree on). ``unsure``: by
    the index of a ranking, the chunks whose place in it agrees on nothing (the full text's
    chunks found by translations alone)."""
    fused: dict[Key, float] = {}
    agreement: dict[Key, int] = {}
    for index, (weight, ranking) in enumerate(rankings):
        doubtful = (unsure or {}).get(index, set())
        for rank, (key, _score) in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (RRF_K + rank)
            if rank <= AGREE_TOP and key not in doubtful:
                agreement[key] = agreement.get(key, 0) + 1
    return fused, agreement


def primary_chunks(order: list[Key], primary: Embedder, query_vector) -> dict[Key, KnowledgeChunk]:
    """One row per chunk: the primary model's, with its cosine distance to the question for
    every hit (relevance is judged on the primary model's scale, whichever ranking found it)."""
    rows = (
        KnowledgeChunk.objects.filter(embed_model=primary.name, content_hash__in={h for _, h in order})
        .only("id", "document_id", "content_hash", "heading_path", "text",
              "document__title", "document__url", "document__kind", "document__path", "document__lang")
        .annotate(distance=CosineDistance(Cast("embedding", VectorField(dimensions=primary.dimensions)), query_vector))
        .select_related("document")
    )
    return {(row.document_id, row.content_hash): row for row in rows}


def cosines(order: list[Key], embedder: Embedder, query_vector) -> dict[Key, float]:
    """``embedder``'s cosine similarity of ``query_vector`` to each chunk of ``order`` (one query)."""
    rows = (
        KnowledgeChunk.objects.filter(embed_model=embedder.name, content_hash__in={h for _, h in order})
        .annotate(distance=CosineDistance(Cast("embedding", VectorField(dimensions=embedder.dimensions)), query_vector))
        .values_list("document_id", "content_hash", "distance")
    )
    return {(doc, digest): 1.0 - float(distance) for doc, digest, distance in rows}
