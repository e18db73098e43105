from __future__ import annotations

import pytest
from django.db import connection, transaction

from knowledge.models import Document
from knowledge.prefix import knowledge_prefix
from knowledge.search import HEADING_WEIGHT, RRF_K, SearchHit, knowledge_search, query_lexemes, query_terms
from knowledge.search.relevance import ABOUT_OWNER_LEXICAL, about_owner, is_relevant
from knowledge.selectors import availability_chunks

pytestmark = pytest.mark.django_db


def test_query_lexemes_keep_both_stems_and_drop_stop_words(db):
    lexemes = query_lexemes("Where did she study databases?")
    assert "databas" in lexemes  # English stem
    assert "where" not in lexemes and "she" not in lexemes and "did" not in lexemes
    dutch = query_lexemes("Hoeveel fietsers passeren de telpunten?")
    assert "de" not in dutch
    assert any(lex.startswith("fiets") for lex in dutch)
    assert query_lexemes("?!") == []


def test_a_dutch_participle_also_searches_its_stem(db):
    # "gestudeerd" shares no stem with the text's "studeerde"; without its "ge-" it does
    assert {"gestudeerd", "studeerd"} <= set(query_lexemes("Waar heeft ze gestudeerd?"))


def test_topic_words_join_the_query_at_a_lower_weight(db):
    terms = query_terms("Where did she study?")
    assert terms["studi"] == 1.0  # the visitor's own word
    assert terms["educ"] == terms["opleid"] == 0.5  # words of the education topic, in both languages
    assert "educ" not in query_lexemes("Where did she study?")


@pytest.mark.parametrize(
    ("question", "title"),
    [
        ("How popular is her bookkeeping library on GitHub?", "Project: Ledgerline"),
        ("Wat laat het fietsdashboard zien?", "Project: Fietsdata Utrecht"),
        ("What is her day rate?", "Availability and Rates"),
        ("pgqueue-lite SKIP LOCKED", "Project: pgqueue-lite"),
    ],
)
def test_hybrid_search_ranks_the_answering_document_first(kb, question, title):
    hits = knowledge_search(question)
    assert hits[0].document_title == title
    assert hits[0].fused_score >= hits[-1].fused_score


def test_hits_carry_every_score_and_fuse_by_rank(kb, embedders):
    hits = knowledge_search("PostgreSQL job queue with SKIP LOCKED", top_k=5)
    top = hits[0]
    assert top.dense_score is not None and top.fulltext_score is not None
    assert top.dense_rank is not None and top.fulltext_rank is not None
    # fused = sum of weighted 1/(k + rank); the two dense models and the headings each add at most 1/(k+1)
    headings = HEADING_WEIGHT / (RRF_K + top.heading_rank) if top.heading_rank else 0.0
    assert top.fused_score <= 2 / (RRF_K + 1) + 0.5 / (RRF_K + top.fulltext_rank) + headings + 1e-9
    assert top.fused_score >= 0.5 / (RRF_K + top.fulltext_rank)
    assert [h.fused_score for h in hits] == sorted((h.fused_score for h in hits), reverse=True)


def test_modes_differ_and_fulltext_needs_words(kb):
    dense = knowledge_search("Geeft ze les?", mode="dense", top_k=5)
    fulltext = knowledge_search("Geeft ze les?", mode="fulltext", top_k=5)
    assert all(h.fulltext_rank is None for h in dense)
    assert all(h.fulltext_rank is not None for h in fulltext)
    assert knowledge_search("de het een", mode="fulltext") == []


def test_top_k_is_bounded(kb, settings):
    settings.TWIN_SEARCH_TOP_K = 3
    assert len(knowledge_search("projects")) == 3
    assert len(knowledge_search("projects", top_k=500)) <= 50


def test_relevance_separates_related_from_unrelated(kb, embedders):
    related = knowledge_search("Which companies has she worked for?")
    unrelated = knowledge_search("What is the boiling point of mercury?")
    assert is_relevant(related[0], embedders[0])
    assert not any(is_relevant(hit, embedders[0]) for hit in unrelated)


def test_prefix_is_stable_ordered_and_changes_with_content(kb):
    text, digest = knowledge_prefix()
    again, digest_again = knowledge_prefix()
    assert (text, digest) == (again, digest_again)
    assert text.index("# About Mira") < text.index("# Curriculum Vitae") < text.index("# Skills and Tools")
    assert "[source: Curriculum Vitae (/cv/)]" in text
    Document.objects.filter(title="Skills and Tools").update(body="Changed body.\n")
    changed, changed_digest = knowledge_prefix()
    assert changed_digest != digest and "Changed body." in changed


def test_private_draft_is_nowhere(kb):
    text, _ = knowledge_prefix()
    assert "Boring Databases" not in text and "advance" not in text
    hits = knowledge_search("book proposal publisher advance", top_k=20)
    assert all("Draft" not in h.document_title for h in hits)


def test_search_uses_the_hnsw_index(kb, embedders):
    primary = embedders[0]
    vector = primary.query("test")
    # SET LOCAL, in a transaction: a plain SET stayed on the pooled connection, and every later
    # test that borrowed it planned its searches without sequential scans
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(
            "EXPLAIN SELECT id FROM knowledge_knowledgechunk WHERE embed_model = %s "
            f"ORDER BY embedding::vector({primary.dimensions}) <=> %s::vector LIMIT 5",
            [primary.name, "[" + ",".join(str(float(x)) for x in vector) + "]"],
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert f"chunk_hnsw_{primary.dimensions}" in plan


def test_a_search_runs_in_one_block_and_embeds_before_it(kb, embedders):
    # every statement of the rankings and the chunk rows inside the one block the search opens
    # (here a savepoint: the test runs in a transaction of its own), and no model runs while that
    # block is open; before it only the knowledge base's words are read, for their translations
    outside = list(connection.savepoint_ids)
    blocks: list[tuple] = []
    before: list[str] = []

    def record(execute, sql, params, many, context):
        if tuple(connection.savepoint_ids) == tuple(outside):
            before.append(sql)
        elif not sql.startswith(("SAVEPOINT", "RELEASE SAVEPOINT")):  # the block's own edges
            blocks.append(tuple(connection.savepoint_ids))
        return execute(sql, params, many, context)

    embedded_in: list[tuple] = []
    model = type(embedders[0])  # the tests' caching wrapper, around every model
    originals = {name: getattr(model, name) for name in ("query", "passages")}

    def watched(name):
        def run(self, *args):
            embedded_in.append((name, tuple(connection.savepoint_ids)))
            return originals[name](self, *args)
        return run

    with connection.execute_wrapper(record), pytest.MonkeyPatch.context() as patch:
        for name in originals:
            patch.setattr(model, name, watched(name))
        hits = knowledge_search("Which PostgreSQL job queue did she write?")
    assert hits and len(blocks) >= 4  # the rankings, the words' statistics, the chunk rows
    assert len(set(blocks)) == 1 and len(blocks[0]) == len(outside) + 1
    vocabulary = '"knowledge_knowledgechunk"."text"'
    assert all(sql.startswith(("SAVEPOINT", "RELEASE SAVEPOINT")) or vocabulary in sql for sql in before), before
    assert {ids for _, ids in embedded_in} == {tuple(outside)}
    assert [name for name, _ in embedded_in].count("query") == len(embedders)


def test_prefix_is_bounded_keeps_the_profile_and_the_most_retrieved_and_names_the_rest(kb, settings):
    from knowledge.prefix import bound_tokens as approx_tokens
    from knowledge.prefix import build_prefix

    full, _ = knowledge_prefix()
    settings.TWIN_PREFIX_TOKENS = approx_tokens(full) + 100
    assert knowledge_prefix()[0] == full  # a typical owner: everything, as before
    # A site fifty times the sample: many long articles.
    articles = [Document(path=f"articles/generated-{n:03d}.md", title=f"Generated article {n:03d}", kind="article",
                         lang="en", body=("A paragraph about queues and caches. " * 200), content_hash=str(n))
                for n in range(300)]
    documents = list(Document.objects.all()) + articles
    popularity = {"Generated article 250": 40, "Generated article 007": 3}
    text = build_prefix(documents, 16_000, popularity)
    assert approx_tokens(text) <= 16_000
    assert "# About Mira" in text and "# Curriculum Vitae" in text  # the profile stays
    assert "# Generated article 250" in text and "# Generated article 007" in text  # most retrieved next
    assert text.index("# Generated article 007") < text.index("# Generated article 250")  # fixed order
    note = text[text.index("# Not in this prompt"):]
    assert "- Generated article 001\n" in note and "- Generated article 250\n" not in note  # named, not shown
    assert note.rstrip().endswith("more")  # and the rest counted, within the bound
    assert build_prefix(documents, 16_000, popularity) == text  # byte-stable


def test_prefix_is_cached_per_knowledge_version(kb, django_assert_max_num_queries):
    knowledge_prefix()
    with django_assert_max_num_queries(1):  # the version digest only
        knowledge_prefix()


@pytest.mark.parametrize(
    ("question", "title", "heading"),
    [
        ("Where did she study?", "Curriculum Vitae", "Education"),
        ("Waar heeft ze gestudeerd?", "Over Mira (Nederlands)", "Opleiding"),
        ("Which languages does she speak?", "Curriculum Vitae", "Languages"),
    ],
)
def test_a_heading_that_names_the_asked_thing_ranks_its_section(kb, question, title, heading):
    hits = knowledge_search(question, top_k=3)
    section = next(h for h in hits if (h.document_title, h.heading_path) == (title, heading))
    assert section.heading_rank is not None
    # a job title mentioning "role" or "engineer" does not name "Where did she study?"
    assert all(h.heading_rank is None for h in hits if h.heading_path.startswith("Current role"))


def test_full_text_reports_the_share_of_the_visitors_words_a_chunk_holds(kb):
    hits = knowledge_search("Where does she live with her cat?", mode="fulltext", top_k=10)
    about = next(h for h in hits if h.document_title == "About Mira" and h.heading_path == "")
    assert about.fulltext_held == 1.0  # "live" and "cat" are both in the opening paragraph
    assert all(h.fulltext_held < 1.0 for h in hits if h is not about)


def test_a_topic_finds_the_answer_in_other_words(kb, embedders):
    # the question says "pets", the text says "cat"; a Dutch question finds the English text
    for question in ("Does she have pets?", "Heeft ze huisdieren?"):
        hits = knowledge_search(question, top_k=3)
        assert hits[0].document_title == "About Mira" and "cat" in hits[0].text
        assert is_relevant(hits[0], embedders[0])


def test_relevance_takes_agreement_and_language_into_account(settings, embedders):
    floor = embedders[0].relevance_floor
    settings.TWIN_RELEVANCE_FLOOR = 0.0

    def hit(**scores) -> SearchHit:
        return SearchHit(chunk_id=1, document_title="T", document_url="/t/", document_kind="cv", heading_path="",
                         text="t", **scores)

    assert is_relevant(hit(dense_score=floor), embedders[0])
    assert not is_relevant(hit(dense_score=floor - 0.01), embedders[0])
    # two rankings agreeing on it make up for a little less similarity, one does not
    assert is_relevant(hit(dense_score=floor - 0.01, agreement=2), embedders[0])
    assert not is_relevant(hit(dense_score=floor - 0.01, agreement=1), embedders[0])
    # a shared word counts for more across languages, where the similarity runs lower
    assert not is_relevant(hit(dense_score=floor - 0.04, fulltext_rank=1), embedders[0])
    assert is_relevant(hit(dense_score=floor - 0.04, fulltext_rank=1, other_language=True), embedders[0])
    # but not a word the model guessed at in the other language: that ranks a passage, no more
    assert not is_relevant(hit(dense_score=floor - 0.04, fulltext_rank=1, other_language=True,
                               fulltext_translated=True), embedders[0])
    # a passage holding every word of the question (two or more) needs a little less similarity too
    assert is_relevant(hit(dense_score=floor - 0.04, fulltext_rank=1, fulltext_held=1.0), embedders[0])
    assert not is_relevant(hit(dense_score=floor - 0.04, fulltext_rank=1, fulltext_held=0.5), embedders[0])
    # unless the second model finds that passage too: a translation it confirms counts as a word
    second = embedders[1]
    near = second.relevance_floor - second.second_margin
    translated = {"dense_score": floor - 0.04, "fulltext_rank": 1, "other_language": True, "fulltext_translated": True}
    assert is_relevant(hit(**translated, second_score=near), embedders[0], second=second)
    assert not is_relevant(hit(**translated, second_score=near - 0.01), embedders[0], second=second)
    # a hit without the second model's score (a full-text search) is not confirmed
    assert not is_relevant(hit(**translated, second_score=None), embedders[0], second=second)
    assert not is_relevant(hit(**translated, second_score=near), embedders[0])  # one model configured
    # a second model whose scale was not measured in that role (no margin) confirms nothing
    assert not is_relevant(hit(**translated, second_score=1.0), embedders[0], second=embedders[0])
    # and it lowers the floor no further than a word of the visitor's own
    assert not is_relevant(hit(**translated | {"dense_score": floor - 0.06}, second_score=1.0), embedders[0],
                           second=second)
    # a question about the owner (by name or pronoun) needs a little less similarity too
    assert is_relevant(hit(dense_score=floor - ABOUT_OWNER_LEXICAL), embedders[0], owner_asked=True)
    assert not is_relevant(hit(dense_score=floor - ABOUT_OWNER_LEXICAL - 0.01), embedders[0], owner_asked=True)
    assert not is_relevant(hit(dense_score=floor - ABOUT_OWNER_LEXICAL), embedders[0])


def test_a_question_is_about_the_owner_by_name_or_pronoun():
    for question in ("Where did Jo Visser study?", "Has VISSER ever lived abroad?", "What does she charge?",
                     "Do they speak French?", "Wat kost hij per dag?", "Heeft ze huisdieren?", "Hun vak?",
                     "Who is the owner of this site?"):
        assert about_owner(question, "Jo Visser"), question
    for question in ("What is the boiling point of mercury?", "Wat zijn de regels van cricket?",
                     "Can you write my essay?", "Who is Jon?", "Visserij in Urk?"):
        assert not about_owner(question, "Jo Visser"), question
    # a name's particles and the default "the owner" are no names: every question has "the" or "van"
    assert about_owner("Waar woont Jan?", "Jan van der Berg")
    assert not about_owner("Wat is de hoofdstad van Frankrijk?", "Jan van der Berg")
    assert not about_owner("What is the capital of France?", "the owner")


def test_availability_chunks_come_once_each_in_the_visitors_language(kb):
    dutch = availability_chunks("nl")
    assert {c["document_title"] for c in dutch} == {"Beschikbaarheid en tarieven"}
    assert len({c["text"] for c in dutch}) == len(dutch)  # one row per chunk, not one per model


def test_every_document_of_the_prefix_reads_back_with_its_kind_and_language(kb):
    from knowledge.prefix import prefix_blocks

    text, _ = knowledge_prefix()
    read = {title: (kind, lang, body) for title, kind, lang, body in prefix_blocks(text)}
    documents = list(Document.objects.all())
    assert set(read) == {d.title for d in documents}
    for doc in documents:
        assert read[doc.title] == (doc.kind, doc.lang, doc.body.strip())


@pytest.mark.django_db(transaction=True)
def test_a_search_that_opens_its_transaction_reads_one_snapshot(kb):
    statements: list[str] = []

    def record(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        assert knowledge_search("Which PostgreSQL job queue did she write?")
    # the first statement of the transaction, as Postgres requires; then the index walk's width.
    # Before it, on its own, the knowledge base's words are read for their translations.
    opened = next(i for i, sql in enumerate(statements) if sql.startswith("SET TRANSACTION"))
    assert all('"knowledge_knowledgechunk"."text"' in sql for sql in statements[:opened])
    assert statements[opened].startswith("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; SET LOCAL hnsw.ef_search")
    assert not connection.in_atomic_block and len(statements) >= 5


def test_a_rank_the_full_text_owes_to_translations_alone_ranks_but_agrees_on_nothing():
    from knowledge.search.rankings import fuse as _fuse

    a, b = (1, "a"), (2, "b")
    rankings = [(1.0, [(a, 0.9), (b, 0.8)]), (0.5, [(a, 3.0), (b, 2.0)])]
    assert _fuse(rankings)[1] == {a: 2, b: 2}
    fused, agreement = _fuse(rankings, {1: {a}})
    assert agreement == {a: 1, b: 2}
    assert fused == _fuse(rankings)[0]  # it still ranks


def test_each_hit_carries_the_second_models_cosine(kb, embedders):
    """Every hit carries the second model's cosine of the chunk, whichever ranking found it; a
    search without a second model (or in full text alone) has none."""
    import numpy as np

    from knowledge.models import KnowledgeChunk

    question = "What did she study?"
    second = embedders[1]
    vector = second.query(question)
    for mode in ("hybrid", "dense"):
        hits = knowledge_search(question, mode=mode)
        assert hits and all(hit.second_score is not None for hit in hits)
        for hit in hits[:3]:
            row = KnowledgeChunk.objects.get(pk=hit.chunk_id)  # the primary model's row of the chunk
            stored = KnowledgeChunk.objects.get(embed_model=second.name, document_id=row.document_id,
                                                content_hash=row.content_hash).embedding
            expected = float(np.dot(stored, vector) / (np.linalg.norm(stored) * np.linalg.norm(vector)))
            assert abs(expected - hit.second_score) < 1e-3
    assert all(hit.second_score is None for hit in knowledge_search(question, mode="fulltext"))
    assert all(hit.second_score is None for hit in knowledge_search(question, embedders=embedders[:1]))
