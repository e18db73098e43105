from __future__ import annotations

import pytest
from django.db import connection

from knowledge.models import Document
from knowledge.selectors import (
    RRF_K,
    is_relevant,
    knowledge_prefix,
    knowledge_search,
    query_lexemes,
)

pytestmark = pytest.mark.django_db


def test_query_lexemes_keep_both_stems_and_drop_stop_words(db):
    lexemes = query_lexemes("Where did she study databases?")
    assert "databas" in lexemes  # English stem
    assert "where" not in lexemes and "she" not in lexemes and "did" not in lexemes
    dutch = query_lexemes("Hoeveel fietsers passeren de telpunten?")
    assert "de" not in dutch
    assert any(lex.startswith("fiets") for lex in dutch)
    assert query_lexemes("?!") == []


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
    # fused = sum of weighted 1/(k + rank); the two dense models each add at most 1/(k+1)
    assert top.fused_score <= 2 / (RRF_K + 1) + 0.5 / (RRF_K + top.fulltext_rank) + 1e-9
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
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        cursor.execute(
            "EXPLAIN SELECT id FROM knowledge_knowledgechunk WHERE embed_model = %s "
            f"ORDER BY embedding::vector({primary.dimensions}) <=> %s::vector LIMIT 5",
            [primary.name, "[" + ",".join(str(float(x)) for x in vector) + "]"],
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert f"chunk_hnsw_{primary.dimensions}" in plan
