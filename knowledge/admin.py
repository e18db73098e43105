"""Owner tools: read-only documents and chunks, "sync knowledge now", and a retrieval tester."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin, messages
from django.db.models import Count
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from knowledge.content import ContentError
from knowledge.embedders import get_embedders
from knowledge.models import Document, KnowledgeChunk
from knowledge.selectors import is_relevant, knowledge_search
from knowledge.services import knowledge_sync
from twinsite.admin_base import ReadOnlyAdmin


class ChunkInline(admin.TabularInline):
    model = KnowledgeChunk
    fields = ("ordinal", "heading_path", "text", "embed_model", "content_hash")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Document)
class DocumentAdmin(ReadOnlyAdmin):
    list_display = ("title", "kind", "lang", "path", "chunk_count", "updated", "synced_at")
    list_filter = ("kind", "lang")
    search_fields = ("title", "path", "body")
    readonly_fields = ("path", "title", "kind", "lang", "url", "updated", "body", "content_hash", "synced_at")
    inlines = [ChunkInline]
    actions = ["sync_now"]
    change_list_template = "admin/knowledge/document/change_list.html"

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_chunks=Count("chunks"))

    @admin.display(ordering="_chunks", description="chunks")
    def chunk_count(self, obj) -> int:
        return obj._chunks

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # the content folder is the source of truth; sync removes documents

    def get_urls(self):
        return [
            path("sync/", self.admin_site.admin_view(self.sync_view), name="knowledge_sync"),
            path("test-retrieval/", self.admin_site.admin_view(self.test_retrieval_view),
                 name="knowledge_test_retrieval"),
            *super().get_urls(),
        ]

    @admin.action(description="Sync knowledge now (whole folder)")
    def sync_now(self, request, queryset) -> None:
        self._sync(request)

    def _sync(self, request: HttpRequest) -> None:
        try:
            report = knowledge_sync(root=settings.TWIN_KNOWLEDGE_DIR, embedders=get_embedders())
        except ContentError as exc:
            self.message_user(request, f"Sync refused, nothing changed: {exc}", messages.ERROR)
            return
        self.message_user(request, f"Knowledge synced: {report}", messages.SUCCESS)

    def sync_view(self, request: HttpRequest) -> HttpResponse:
        if request.method != "POST":
            return HttpResponse(status=405)
        if not request.user.has_perm("knowledge.view_document"):
            return HttpResponse(status=403)
        self._sync(request)
        return HttpResponseRedirect(reverse("admin:knowledge_document_changelist"))

    def test_retrieval_view(self, request: HttpRequest) -> HttpResponse:
        query = request.GET.get("q", "").strip()[:500]
        mode = request.GET.get("mode", "hybrid")
        if mode not in ("hybrid", "dense", "fulltext"):
            mode = "hybrid"
        embedders = get_embedders()
        hits = knowledge_search(query, top_k=10, mode=mode, embedders=embedders) if query else []
        rows = [(hit, is_relevant(hit, embedders[0])) for hit in hits]
        context = {
            **self.admin_site.each_context(request),
            "title": "Test retrieval",
            "opts": self.model._meta,
            "query": query,
            "mode": mode,
            "rows": rows,
            "embedder": ", ".join(e.name for e in embedders),
        }
        return TemplateResponse(request, "admin/knowledge/test_retrieval.html", context)


@admin.register(KnowledgeChunk)
class KnowledgeChunkAdmin(ReadOnlyAdmin):
    list_display = ("document", "ordinal", "heading_path", "embed_model", "short_hash")
    list_filter = ("embed_model", "document__kind", "document__lang")
    search_fields = ("text", "heading_path", "document__title")
    list_select_related = ("document",)
    exclude = ("embedding", "search_vector")
    readonly_fields = ("document", "ordinal", "heading_path", "text", "content_hash", "embed_model",
                       "search_text", "created_at")

    @admin.display(description="hash")
    def short_hash(self, obj) -> str:
        return obj.content_hash[:12]

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
