"""Reads of the knowledge base: hybrid search and the system-prompt prefix.

One search service serves the agent's ``search_knowledge`` tool, the admin's test page and
the retrieval evals, so what the owner debugs is what the agent sees.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import Literal

from django.conf import settings
from django.db import connection, transaction
from django.db.models.functions import Cast
from django.urls import reverse
from django.utils.text import slugify
from pgvector.django import CosineDistance, VectorField

from knowledge import translation
from knowledge.embedders import Embedder, get_embedders
from knowledge.models import Document, KnowledgeChunk, LexemeStat
from knowledge.watch import WATCH
from text import topics
from text.counterparts import counterparts
from text.language import detect_language

Mode = Literal["hybrid", "dense", "fulltext"]
RRF_K = 60
logger = logging.getLogger(__name__)
_WORD = re.compile(r"\w+", re.UNICODE)
# Question words carry no content, and Postgres' stop lists keep some of them ("waar", "welke").
QUESTION_WORDS = frozenset(
    "what which who whom whose where when why how does did do can could would is are was "
    "wat welk welke wie waar wanneer waarom hoe hoeveel heeft hebben kan kun kunt zou".split()
)
# A word of a topic the question names (text.topics: "study" names education, so
# "degree", "university" and "opleiding" join the query) counts this much of the visitor's own.
EXPANSION_WEIGHT = 0.5
# The RRF weight of the heading ranking: sections whose heading names what was asked ("Education"
# for "Where did she study?", "Opleiding" for "Waar heeft ze gestudeerd?").
HEADING_WEIGHT = 1.0
# A ranking "agrees" on a chunk when it puts it this high (see is_relevant).
AGREE_TOP = 3
# How much a lexical match lowers the relevance floor: within a language, across languages, and
# for a chunk that holds every one of the visitor's (two or more) words.
SAME_LANGUAGE_LEXICAL = 0.03
CROSS_LANGUAGE_LEXICAL = 0.05
ALL_WORDS_LEXICAL = 0.05
# A passage the full text found only by a translation of the question's words lowers the floor
# like a match of the visitor's own word when the second model (trained apart from the primary)
# finds it too: its cosine at most the second model's ``second_margin`` below that model's own
# floor (USE: 0.25 - 0.10; a model without a margin never confirms). Across languages the
# primary's cosine drops even for the passage that answers ("What did he study?" against a Dutch
# "Opleiding": 0.77), and a model's guess at a translation alone is too weak a sign. Measured with
# e5 and USE on four owners (evals/owners/, marit held out), eval_retrieval's gate: answerable
# questions that may be answered 0.963 -> 1.000 (noor), 0.852 -> 0.889 (marit), the others
# unchanged; off-topic questions past it 5/32 -> 6/32 (ruben), held out 5/28 -> 6/28 (marit), the
# others unchanged. A margin of 0.13 let three more off-topic questions pass and no answerable
# one; 0.07 lost two of marit's answerable questions.
# How much lower the floor is for a question about the owner (``about_owner``): it asks about
# the knowledge base's one subject, so a passage needs less semantic evidence; whether one of its
# sentences answers is still the model's (or the offline twin's sentence choice's) to decide.
# Questions whose fact is in a passage of the other language score 0.76-0.81 with e5 against it.
# Measured with the offline twin on three owners' answer suites, a held-out owner, and 24
# off-topic questions that name the owner or use a pronoun ("How do they brew beer?", "Noor,
# what is the capital of Australia?"), four owners: answered off-topic 7/96 without the rule,
# 8/96 at 0.03, 11/96 at 0.04, which answered one more question in the dev suites and one more
# of the held-out owner's; fail closed, so 0.03.
ABOUT_OWNER_LEXICAL = 0.03
# How a visitor names the owner besides the name: a pronoun of the third person (the twin
# speaks of its owner in the third person) or "the owner". Not Dutch "zijn" (also "are").
_OWNER_WORDS = frozenset(
    "she he they her his their him them hers theirs herself himself themselves owner "
    "zij ze hij haar hun hem hen eigenaar".split()
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
    fulltext_held: float = 0.0  # the share of the question's own words the chunk holds (questions of 2+ words)
    fulltext_translated: bool = False  # the full text matched only the question's words in the other language
    heading_rank: int | None = None  # in the ranking of headings that name the question's words
    agreement: int = 0  # how many rankings (each model, full text, headings) put it in their top 3
    other_language: bool = False  # the document is not in the question's language
    second_score: float | None = None  # the second model's cosine (None: one model, or a full-text search)

    def as_dict(self) -> dict:
        return asdict(self)


def query_lexemes(query: str) -> list[str]:
    """The question's stems, in both stemmers' forms.

    A word that either language treats as a stop word is dropped: "die", "over" or "had" are
    noise in a bilingual index even where only one language lists them.
    """
    return [lex for lex, weight in query_terms(query).items() if weight == 1.0]


def _question_words(query: str) -> dict[str, str]:
    """The question's words (question words left out), each with the word it stands for."""
    words = [w for w in dict.fromkeys(w.lower() for w in _WORD.findall(query)) if w not in QUESTION_WORDS][:64]
    # A Dutch past participle ("gestudeerd", "gewerkt") has no stem in common with the text's
    # "studeerde" or "werkt": the word without its "ge-" is searched too, as the same word.
    participles = {w[2:]: w for w in words if w.startswith("ge") and len(w) >= 7 and w.endswith(("d", "t"))}
    # A language's or country's name is the same name in the other language ("Duits" for
    # "German", ``text.counterparts``): listed, not a model's guess. Only as a name, with a
    # capital or asked with speaking ("does he speak german?"): "pools" and "fries" are words of
    # their own (``_translations`` reads them).
    named = topics.listed_names(query)
    names = {other: w for w in words if w in named for other in sorted(counterparts(w)) if other != w}
    return {w: w for w in words} | {p: w for p, w in (participles | names).items() if p not in words}


def query_terms(query: str) -> dict[str, float]:
    """Full-text lexemes for a question with their weights: 1 for the visitor's own words,
    ``EXPANSION_WEIGHT`` for the words of the topics the question names (text.topics)."""
    return _terms(query)[0]


def _terms(query: str, translations: Sequence[str] = ()) -> tuple[dict[str, float], list[list[str]], set[str]]:
    """The weighted lexemes, the lexemes of each of the visitor's own content words, and the
    lexemes only ``translations`` give (the visitor's words in the other language:
    ``_translations``; weighted as a topic's words)."""
    own = _question_words(query)
    if not own:
        return {}, [], set()
    expanded = [w for w in topics.expansion(query) if w not in own]
    extra = [*expanded, *(w for w in translations if w not in own and w not in expanded)]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT w, tsvector_to_array(to_tsvector('english', w)), "
            "tsvector_to_array(to_tsvector('dutch', w)) FROM unnest(%s::text[]) AS w",
            [list(own) + extra],
        )
        rows = cursor.fetchall()
    terms: dict[str, float] = {}
    groups: dict[str, list[str]] = {}
    given: set[str] = set()  # by the visitor's words or their topics
    for word, english, dutch in rows:
        if english and dutch:
            weight = 1.0 if word in own else EXPANSION_WEIGHT
            for lexeme in english + dutch:
                terms[lexeme] = max(terms.get(lexeme, 0.0), weight)
            if word in own:
                groups.setdefault(own[word], []).extend(english + dutch)
            if word in own or word in expanded:
                given.update(english + dutch)
    return terms, [list(dict.fromkeys(lexemes)) for lexemes in groups.values()], set(terms) - given


def _translations(query: str) -> list[str]:
    """The question's words in the other language, so the full text finds a fact written in it
    by its words, not by the dense rankings alone: any word but a name (word vectors cannot be
    trusted with names: "Leiden" is not "leidt"; nor with the owner's; a language's or country's
    name has its listed counterpart among the question's own words, ``_question_words``, unless
    written without a capital: then its counterpart is a translation) by the words only the
    knowledge base's documents in the other language use that translate it
    (``knowledge.translation``: "bezoekers" for "visitors"). Never waits for the vocabulary's
    embedding: while it runs (a process just started), only lower-case listed names."""
    owner = set(topics.name_words(settings.TWIN_OWNER_NAME))
    asked = [word for word in _question_words(query) if word not in owner]
    named = topics.names(query)
    # a listed name written without a capital may be a word of its own ("fries", "pools"): its
    # counterpart joins as a translation, which lowers the relevance floor only when the second
    # model confirms the passage (is_relevant)
    own = set(asked)
    named_listed = topics.listed_names(query)
    listed = [other for word in asked if word not in named_listed
              for other in sorted(counterparts(word)) if other not in own]
    plain = [word for word in asked if word not in named and counterparts(word) == {word}]
    found: list[str] = []
    if plain and translation.word_model() is not None:
        words, foreign = WATCH.cached("vocabulary", _read_vocabulary)
        among = foreign.get(detect_language(query))
        try:
            found = translation.translations(plain, words, among, wait=False) if among else []
        except Exception:  # they only widen the search: it goes on without them
            logger.warning("search: the question's words were not translated", exc_info=True)
    return list(dict.fromkeys([*listed, *found]))


def warm_vocabulary() -> int:
    """Embed the knowledge base's words for their translations as a serving process starts
    (``twinsite.asgi``), not in its first search. Returns how many words were embedded (0
    without a multilingual model)."""
    if translation.word_model() is None:
        return 0
    words, _ = WATCH.cached("vocabulary", _read_vocabulary)
    return len(words) if translation.prepare(words) else 0


def _read_vocabulary() -> tuple[list[str], dict[str, frozenset[str]]]:
    """The knowledge base's ``translation.vocabulary``, and for each language the words that
    only its other language's documents use (a loanword both use is no translation)."""
    texts: dict[str, list[str]] = {}
    primary = get_embedders()[0].name  # each chunk once
    rows = KnowledgeChunk.objects.filter(embed_model=primary).order_by().values_list("document__lang", "text")
    for lang, text in rows.distinct():
        texts.setdefault(lang, []).append(text)
    by_language = {lang: set(translation.vocabulary(found)) for lang, found in texts.items()}
    words = sorted(set().union(*by_language.values()))[:translation.VOCABULARY_LIMIT]
    foreign = {lang: frozenset(w for other, known in by_language.items() if other != lang for w in known)
               - by_language.get(lang, set()) for lang in {"en", "nl", *by_language}}
    return words, foreign


def _quote(lexeme: str) -> str:
    """A lexeme as a quoted ``tsquery`` operand."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


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


def _fulltext(terms: dict[str, float], words: list[list[str]], embedder: Embedder,
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
        params.extend([_quote(lex), weight])
    held = " + ".join("CASE WHEN search_vector @@ to_tsquery('simple', %s) THEN 1 ELSE 0 END" for _ in words) or "0"
    params.extend(" | ".join(_quote(lex) for lex in lexemes) for lexemes in words)
    given = [lex for lex in weights if lex not in translated]
    matched_given = "search_vector @@ to_tsquery('simple', %s)" if given else "false"
    if given:
        params.append(" | ".join(_quote(lex) for lex in given))
    tsquery = " | ".join(_quote(lex) for lex in weights)
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


def _headings(query: str, terms: dict[str, float], embedder: Embedder, limit: int) -> list[tuple[Key, float]]:
    """Sections whose own heading names what the question asks about. The chunk text contains
    its heading already; this ranking says the whole section is about the asked thing.

    Score: the share of the heading's words that the question (or a topic it names) covers,
    times the share of the question's words that the heading (or its topic) accounts for.
    """
    owner = set(topics.words(settings.TWIN_OWNER_NAME))  # "Where did Sam study?" asks about study
    asked = [word for word in topics.content_words(query) if word not in owner]
    if not terms or not asked:
        return []
    tsquery = " | ".join(_quote(lex) for lex in terms)
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
    language = detect_language(query)
    scored = []
    for doc, digest, path, lang in rows:
        named = topics.content_words(path.rsplit(" > ", 1)[-1])
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
    return any(topics.same_word(word, other) for word in words for other in others)


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
    translated = _translations(query) if mode in ("hybrid", "fulltext") else []
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        setup = ["SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"] if outermost else []
        if mode in ("hybrid", "dense"):
            setup.append(f"SET LOCAL hnsw.ef_search = {HNSW_EF_SEARCH:d}")  # lasts until the block ends
        if setup:
            with connection.cursor() as cursor:
                cursor.execute("; ".join(setup))  # one round trip
        rankings = _dense_rankings(mode, embedders, query_vectors, candidates)
        fulltext: FulltextRanking = []
        headings: Ranking = []
        unsure: dict[int, set[Key]] = {}
        if mode in ("hybrid", "fulltext"):
            terms, words, only_translated = _terms(query, translated)
            fulltext = _fulltext(terms, words, primary, candidates, only_translated)
            # a translation ranks a chunk, but its rank is no agreement (``is_relevant``)
            unsure[len(rankings)] = {key for key, *_, by_translation in fulltext if by_translation}
            rankings.append((settings.TWIN_FULLTEXT_WEIGHT if mode == "hybrid" else 1.0,
                             [(key, score) for key, score, *_ in fulltext]))
            if mode == "hybrid":
                # the headings that name the visitor's words or their topic's
                given = {lex: weight for lex, weight in terms.items() if lex not in only_translated}
                headings = _headings(query, given, primary, candidates)
                rankings.append((HEADING_WEIGHT, headings))
        fused, agreement = _fuse(rankings, unsure)
        order = sorted(fused, key=lambda key: (-fused[key], key))[:top_k]
        if not order:
            return []
        by_key = _primary_chunks(order, primary, query_vectors[primary.name])
        # the second model's cosine of every hit, not only of those its own ranking found (an HNSW
        # walk may miss a row, and is_relevant asks it of each hit)
        second = (_cosines(order, embedders[1], query_vectors[embedders[1].name])
                  if mode != "fulltext" and len(embedders) > 1 else {})
    primary_ranking = rankings[0][1] if mode != "fulltext" else []
    return _hits(order, by_key, fused=fused, agreement=agreement, primary_ranking=primary_ranking,
                 fulltext=fulltext, headings=headings, language=detect_language(query), second=second)


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


def _dense_rankings(mode: Mode, embedders: list[Embedder], query_vectors: dict[str, object],
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


def _fuse(rankings: list[tuple[float, Ranking]],
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


def _primary_chunks(order: list[Key], primary: Embedder, query_vector) -> dict[Key, KnowledgeChunk]:
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


def _cosines(order: list[Key], embedder: Embedder, query_vector) -> dict[Key, float]:
    """``embedder``'s cosine similarity of ``query_vector`` to each chunk of ``order`` (one query)."""
    rows = (
        KnowledgeChunk.objects.filter(embed_model=embedder.name, content_hash__in={h for _, h in order})
        .annotate(distance=CosineDistance(Cast("embedding", VectorField(dimensions=embedder.dimensions)), query_vector))
        .values_list("document_id", "content_hash", "distance")
    )
    return {(doc, digest): 1.0 - float(distance) for doc, digest, distance in rows}


def source_slug(path: str) -> str:
    """The public page of a document: ``/sources/<slug>/``, the slug from its file's path."""
    return slugify(str(PurePosixPath(path).with_suffix("")).replace("/", "-"))


def public_url(path: str, url: str) -> str:
    """Where a citation links: the document's own absolute address, else its source page."""
    if url.startswith(("https://", "http://")):
        return url
    return reverse("source", args=[source_slug(path)])


def document_urls() -> dict[str, str]:
    """Each document's citation link by title (read once per knowledge change: ``knowledge.watch``)."""
    return dict(WATCH.cached("document_urls", _read_document_urls))


def _read_document_urls() -> dict[str, str]:
    return {title: public_url(path, url) for title, path, url in Document.objects.values_list("title", "path", "url")}


def document_by_slug(slug: str) -> Document | None:
    """A public document by its source-page slug (only public documents are in the table)."""
    return next((d for d in Document.objects.all() if source_slug(d.path) == slug), None)


def about_owner(question: str, owner: str) -> bool:
    """Whether a question asks about the owner: it names them ("Where did Noor study?") or
    speaks of them in the third person ("Has he worked abroad?", "Wat kost ze per dag?")."""
    return bool(set(topics.words(question)) & (_OWNER_WORDS | set(topics.name_words(owner))))


def relevance(hits: list[SearchHit], embedders: Sequence[Embedder], question: str) -> list[bool]:
    """``is_relevant`` for each hit of one search with ``embedders`` (primary first) for
    ``question`` (the visitor's words: whether they ask about the owner is read once). The search
    tool, the admin's test page and the retrieval eval all decide this way."""
    owner_asked = about_owner(question, settings.TWIN_OWNER_NAME)
    second = embedders[1] if len(embedders) > 1 else None
    return [is_relevant(hit, embedders[0], owner_asked=owner_asked, second=second) for hit in hits]


def is_relevant(hit: SearchHit, embedder: Embedder, *, owner_asked: bool = False,
                second: Embedder | None = None) -> bool:
    """Whether a hit is good enough to answer from (fail closed: no answer beats a guess).

    Cosine scores of one model bunch together, so the floor is per model, and other evidence
    lowers it a little: a passage sharing the question's words needs less semantic evidence,
    and so does one that two rankings (the models, full text, headings) both put in their top 3
    (off-topic questions get scattered rankings), or one holding every word of the question
    (measured with ``manage.py eval_retrieval``), and so does a question about the owner
    (``owner_asked``: ``about_owner``). A full-text match by a translation of the question's
    words counts as lexical only when the ``second`` model finds the passage too (its
    ``second_margin``).
    """
    floor = settings.TWIN_RELEVANCE_FLOOR or getattr(embedder, "relevance_floor", 0.0)
    dense = hit.dense_score if hit.dense_score is not None else 0.0
    # a question in one language scores lower against text in the other, even on its rare words
    lexical = CROSS_LANGUAGE_LEXICAL if hit.other_language else SAME_LANGUAGE_LEXICAL
    # a word of the visitor's (or its topic's); a model's guess at a word's translation ranks a
    # passage, but is too weak a sign that it answers unless the second model finds it as well
    margin = getattr(second, "second_margin", None)
    seconded = (margin is not None and hit.second_score is not None
                and hit.second_score >= getattr(second, "relevance_floor", 0.0) - margin)
    if hit.fulltext_rank is not None and (not hit.fulltext_translated or seconded) and dense >= floor - lexical:
        return True
    if hit.agreement >= 2 and dense >= floor - 0.015:
        return True
    if hit.fulltext_held >= 1.0 and dense >= floor - ALL_WORDS_LEXICAL:
        return True  # it holds every word the visitor used
    if owner_asked and dense >= floor - ABOUT_OWNER_LEXICAL:
        return True
    return dense >= floor


def availability_chunks(language: str) -> list[dict]:
    """All chunks of the availability documents, in the visitor's language when there is one."""
    chunks = list(
        KnowledgeChunk.objects.filter(document__kind=Document.Kind.AVAILABILITY)
        .select_related("document")
        .order_by("document__path", "ordinal")
    )
    # one row per chunk and embedding model: each chunk once
    chunks = list({(c.document_id, c.content_hash): c for c in chunks}.values())
    preferred = [c for c in chunks if c.document.lang == language] or chunks
    return [
        {"chunk_id": c.pk, "document_title": c.document.title,
         "document_url": public_url(c.document.path, c.document.url), "heading_path": c.heading_path, "text": c.text}
        for c in preferred
    ]
