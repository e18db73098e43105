"""Owner tools: read-only documents and chunks, "sync knowledge" (a background job), and a
retrieval tester."""

from __future__ import annotations

import json
import re
import shutil
import uuid
from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import Count, Exists, OuterRef
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.translation import gettext_lazy as _

from chat.selectors import question_wordings
from chat.services import questions_answered, questions_reopened
from knowledge.content import KINDS, LANGS, ContentError
from knowledge.embedders import get_embedders
from knowledge.importing.files import load_plan
from knowledge.importing.model import LEFT_OUT, MAX_FILE_BYTES
from knowledge.models import Document, KnowledgeChunk, TaughtAnswer
from knowledge.search import knowledge_search
from knowledge.search.relevance import relevance
from knowledge.selectors import public_url
from knowledge.services import SyncBusy, knowledge_teach, knowledge_unteach, taught_path, taught_path_sql
from knowledge.tasks import knowledge_import_task, knowledge_sync_task, plan_path
from ops.models import Job
from ops.services import JobBusy, job_start
from text.language import detect_language
from twinsite.admin_base import ReadOnlyAdmin, ReadOnlyInline, group_ids


class ChunkInline(ReadOnlyInline):
    model = KnowledgeChunk
    fields = ("ordinal", "heading_path", "text", "embed_model", "content_hash")


class ImportForm(forms.Form):
    file = forms.FileField(required=False, help_text=f"A CV or LinkedIn profile as PDF, or a CV as DOCX "
                                                     f"({MAX_FILE_BYTES // 2**20} MB at most).")
    address = forms.URLField(required=False, assume_scheme="https", max_length=500,
                             help_text="A page, or your site's root address to read the whole site "
                                       "(its sitemap, else the links of its home page).")
    kind = forms.ChoiceField(required=False, choices=[("", "guess per document"), *((k, k) for k in KINDS)])
    lang = forms.ChoiceField(required=False, choices=[("", "the page's own, else detected"),
                                                      *((lang, lang) for lang in LANGS)])
    max_pages = forms.IntegerField(min_value=1, max_value=500, initial=50, help_text="Pages read of a whole site.")

    def clean(self) -> dict:
        data = super().clean()
        upload, address = data.get("file"), data.get("address")
        if bool(upload) == bool(address):
            raise forms.ValidationError("Upload a file or give a web address (one of the two).")
        if upload:
            if not upload.name.lower().endswith((".pdf", ".docx")):
                raise forms.ValidationError("Upload a PDF or a DOCX file.")
            if upload.size > MAX_FILE_BYTES:
                raise forms.ValidationError(f"The file is over {MAX_FILE_BYTES // 2**20} MB.")
        return data


def _forget_old_uploads(days: int = 1) -> None:
    """Uploads whose preview was never imported: a CV is personal data, not kept past a day."""
    folder = settings.TWIN_IMPORT_DIR
    if not folder.is_dir():
        return
    cutoff = timezone.now().timestamp() - days * 86400
    for upload in folder.iterdir():
        if upload.is_dir() and upload.stat().st_mtime < cutoff:
            shutil.rmtree(upload, ignore_errors=True)


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
            path("import/", self.admin_site.admin_view(self.import_view), name="knowledge_import"),
            path("import/<int:job_id>/", self.admin_site.admin_view(self.import_preview_view),
                 name="knowledge_import_preview"),
            *super().get_urls(),
        ]

    def has_sync_permission(self, request: HttpRequest) -> bool:
        # Syncing rewrites every document and chunk: the change permission, not the view one.
        return request.user.has_perm("knowledge.change_document")

    @admin.action(description="Sync knowledge (whole folder, in the background)", permissions=["sync"])
    def sync_now(self, request, queryset) -> None:
        self._sync(request)

    def _sync(self, request: HttpRequest) -> None:
        try:
            job = job_start(kind=Job.Kind.KNOWLEDGE_SYNC, task=knowledge_sync_task,
                            requested_by=request.user.get_username())
        except JobBusy as exc:
            link = reverse("admin:ops_job_change", args=[exc.job.pk]) if exc.job else "#"
            self.message_user(request, format_html('A knowledge sync is already {}: <a href="{}">follow it</a>.',
                                                   exc.job.status if exc.job else "active", link), messages.WARNING)
            return
        self.message_user(request, format_html(
            'Knowledge sync queued for the worker: <a href="{}">follow its progress</a>.',
            reverse("admin:ops_job_change", args=[job.pk])), messages.SUCCESS)

    def sync_view(self, request: HttpRequest) -> HttpResponse:
        if request.method != "POST":
            return HttpResponse(status=405)
        if not self.has_sync_permission(request):
            return HttpResponse(status=403)
        self._sync(request)
        return HttpResponseRedirect(reverse("admin:knowledge_document_changelist"))

    def changelist_view(self, request, extra_context=None):
        last = Job.objects.filter(kind=Job.Kind.KNOWLEDGE_SYNC).first()
        return super().changelist_view(request, {**(extra_context or {}), "last_sync": last,
                                                 "can_sync": self.has_sync_permission(request),
                                                 "can_import": self.has_import_permission(request)})

    # --- Import: a preview job reads the source and plans; a second job writes and syncs ---------------

    def has_import_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("knowledge.add_document")

    def _start_import(self, request: HttpRequest, arguments: dict) -> Job | None:
        try:
            return job_start(kind=Job.Kind.KNOWLEDGE_IMPORT, task=knowledge_import_task,
                             requested_by=request.user.get_username(), arguments=arguments)
        except JobBusy as exc:
            link = reverse("admin:ops_job_change", args=[exc.job.pk]) if exc.job else "#"
            self.message_user(request, format_html('An import is already {}: <a href="{}">follow it</a>.',
                                                   exc.job.status if exc.job else "active", link), messages.WARNING)
            return None

    def import_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_import_permission(request):
            return HttpResponse(status=403)
        form = ImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            _forget_old_uploads()
            sources, uploads, labels = [form.cleaned_data["address"]], [], {}
            upload = form.cleaned_data["file"]
            if upload:
                folder = settings.TWIN_IMPORT_DIR / uuid.uuid4().hex
                folder.mkdir(parents=True)
                # its own folder keeps the owner's file name (the document's ``source``), made safe
                target = folder / re.sub(r"[^\w.-]+", "-", Path(upload.name).name).lstrip(".")[-120:]
                with target.open("wb") as handle:
                    for part in upload.chunks():
                        handle.write(part)
                sources, uploads, labels = [str(target)], [str(target)], {str(target): target.name}
            job = self._start_import(request, {
                "sources": sources, "uploads": uploads, "labels": labels, "kind": form.cleaned_data["kind"],
                "lang": form.cleaned_data["lang"], "max_pages": form.cleaned_data["max_pages"], "dry_run": True})
            if job is not None:
                return HttpResponseRedirect(reverse("admin:knowledge_import_preview", args=[job.pk]))
        from knowledge.importing.followed import followed

        context = {**self.admin_site.each_context(request), "title": "Import your own content",
                   "opts": self.model._meta, "form": form, "followed": followed(settings.TWIN_KNOWLEDGE_DIR),
                   "import_every": settings.TWIN_IMPORT_EVERY}
        return TemplateResponse(request, "admin/knowledge/document/import.html", context)

    def import_preview_view(self, request: HttpRequest, job_id: int) -> HttpResponse:
        if not self.has_import_permission(request):
            return HttpResponse(status=403)
        job = Job.objects.filter(pk=job_id, kind=Job.Kind.KNOWLEDGE_IMPORT).first()
        if job is None:
            return HttpResponse(status=404)
        if request.method == "POST":
            if job.status != Job.Status.SUCCEEDED or not job.arguments.get("dry_run"):
                return HttpResponse(status=409)
            # the files the preview showed, kept with it: the source is not read again
            applied = self._start_import(request, {**job.arguments, "dry_run": False, "preview": job.pk})
            if applied is None:
                return HttpResponseRedirect(request.path)
            self.message_user(request, format_html('Import queued for the worker: <a href="{}">follow its '
                                                   "progress</a>.", reverse("admin:ops_job_change",
                                                                            args=[applied.pk])), messages.SUCCESS)
            return HttpResponseRedirect(reverse("admin:knowledge_document_changelist"))
        result = json.loads(job.result) if job.status == Job.Status.SUCCEEDED and job.result else None
        saved = load_plan(plan_path(job.pk)) if result and job.arguments.get("dry_run") else None
        left_out = [(source, LEFT_OUT.get(why, why), text) for source, why, text in (result or {}).get("left_out", [])]
        context = {**self.admin_site.each_context(request), "title": "Import: what it would write",
                   "opts": self.model._meta, "job": job, "result": result, "left_out": left_out,
                   "files": (saved or {}).get("files", []),
                   "writes": bool(saved and saved.get("files"))}
        return TemplateResponse(request, "admin/knowledge/document/import_preview.html", context)

    def test_retrieval_view(self, request: HttpRequest) -> HttpResponse:
        # it shows the knowledge base's text and scores: for who may view the documents
        if not self.has_view_permission(request):
            return HttpResponseForbidden("Testing retrieval needs the permission to view documents.")
        query = request.GET.get("q", "").strip()[:500]
        mode = request.GET.get("mode", "hybrid")
        if mode not in ("hybrid", "dense", "fulltext"):
            mode = "hybrid"
        embedders = get_embedders()
        hits = knowledge_search(query, top_k=10, mode=mode, embedders=embedders) if query else []
        rows = list(zip(hits, relevance(hits, embedders, query), strict=True))
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


# Addresses a visitor's wording may carry: never pre-filled into a public title
_ADDRESSES = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b(?:https?://|www\.)[^\s,;)]*[^\s,;)?!.]|"
                        r"\b(?:[\w-]+\.)+[a-z]{2,}\b(?:/[^\s?!,;)]*)?", re.IGNORECASE)


def without_addresses(text: str) -> str:
    return " ".join(_ADDRESSES.sub("…", text).split())


class TaughtAnswerForm(forms.ModelForm):
    # the unanswered questions this answers: the signed group the owner taught it from (group_reference)
    questions = forms.CharField(required=False, widget=forms.HiddenInput)
    language_confirmed = forms.BooleanField(
        required=False, label=_("The language is right"),
        help_text=_("Tick when the answer is written in the language chosen above although it does not read so."))

    class Meta:
        model = TaughtAnswer
        fields = ("question", "lang", "answer")
        widgets = {"question": forms.Textarea(attrs={"rows": 2, "class": "vLargeTextField"}),
                   "answer": forms.Textarea(attrs={"rows": 8, "class": "vLargeTextField"})}

    def clean(self) -> dict:
        data = super().clean()
        answer, lang = data.get("answer") or "", data.get("lang")
        if answer and lang and not data.get("language_confirmed"):
            written = detect_language(answer, lang)
            if written != lang:
                self.add_error("lang", _("The answer reads as %(written)s, not %(chosen)s: choose the answer's "
                                         "language, or tick that the language is right.")
                               % {"written": TaughtAnswer.Lang(written).label, "chosen": TaughtAnswer.Lang(lang).label})
        return data

    def clean_question(self) -> str:
        question = " ".join(self.cleaned_data["question"].split())
        own = taught_path(self.instance.pk) if self.instance.pk else None
        if Document.objects.filter(title=question).exclude(path=own).exists():
            raise forms.ValidationError(_("A document in the knowledge base has this title already: ask it "
                                          "another way."))
        return question

    def clean_questions(self) -> list[int]:
        # the signed group the form was opened from; ids typed in, or an altered group, count for none
        return group_ids(self.cleaned_data.get("questions") or "")


@admin.register(TaughtAnswer)
class TaughtAnswerAdmin(admin.ModelAdmin):
    """Answers the owner taught the twin: saved, they are knowledge at once (``knowledge_teach``);
    deleted, they are gone from it."""

    form = TaughtAnswerForm
    list_display = ("question", "lang", "asked", "updated_by", "updated_at", "source")
    list_filter = ("lang",)
    search_fields = ("question", "answer")
    readonly_fields = ("source", "created_by", "created_at", "updated_by", "updated_at")
    fields = ("question", "lang", "answer", "questions", *readonly_fields)

    def get_fields(self, request, obj=None):
        # a new answer has no page, author or dates yet
        base = self.fields if obj is not None else ("question", "lang", "answer", "questions")
        return (*base, "language_confirmed")

    def get_queryset(self, request):
        # whether its document exists, for every row in the one query (the change form's object too)
        page = Document.objects.filter(path=taught_path_sql(OuterRef("pk")))
        return super().get_queryset(request).annotate(_asked=Count("questions"), _has_page=Exists(page))

    @admin.display(description=_("asked"), ordering="_asked")
    def asked(self, obj: TaughtAnswer) -> int:
        return getattr(obj, "_asked", 0)

    @admin.display(description=_("source page"))
    def source(self, obj: TaughtAnswer) -> str:
        if not getattr(obj, "_has_page", False):
            return "-"
        return format_html('<a href="{0}" target="_blank" rel="noopener">{0}</a>',
                           public_url(taught_path(obj.pk), ""))

    def get_changeform_initial_data(self, request: HttpRequest) -> dict:
        """Only the reference of what is taught (a group's question ids, a rated answer): a
        visitor's wording becomes the question only when the owner picks it (``pick``), its
        addresses, domains and e-mail addresses left out. Nothing else a URL says is taken."""
        reference = request.GET.get("questions", "")
        initial: dict = {"questions": reference if group_ids(reference) else "", "lang": TaughtAnswer.Lang.EN}
        wordings = self._wordings(request)
        pick = request.GET.get("pick", "")
        if pick.isdigit() and int(pick) < len(wordings):
            initial["question"] = without_addresses(wordings[int(pick)])[:300]
            initial["lang"] = detect_language(initial["question"])
        return initial

    def _wordings(self, request: HttpRequest) -> list[str]:
        feedback = request.GET.get("feedback", "")
        if feedback.isdigit():
            return question_wordings(feedback_id=int(feedback))
        return question_wordings(ids=group_ids(request.GET.get("questions", "")))

    def add_view(self, request, form_url="", extra_context=None):
        # every wording of the group, labelled as the visitors' own and shown as text, each to pick
        base = {k: v for k, v in request.GET.items() if k in ("questions", "feedback")}
        wordings = [{"text": w, "pick_url": "?" + urlencode({**base, "pick": i})}
                    for i, w in enumerate(self._wordings(request))]
        return super().add_view(request, form_url, {**(extra_context or {}), "wordings": wordings})

    def save_model(self, request, obj: TaughtAnswer, form, change) -> None:
        user = request.user.get_username()
        if not change:
            obj.created_by = user
        obj.updated_by = user
        super().save_model(request, obj, form, change)
        try:
            knowledge_teach(answer=obj, embedders=get_embedders())
        except (ContentError, SyncBusy) as exc:
            self.message_user(request, _("Saved, but not yet in the knowledge base (%(reason)s): the next "
                                         "knowledge sync adds it.") % {"reason": exc}, messages.WARNING)
        ids = form.cleaned_data.get("questions") or []
        if ids:
            questions_answered(ids=ids, answer=obj)

    def delete_model(self, request, obj: TaughtAnswer) -> None:
        pk = obj.pk
        # its questions are open again: nobody answers them now
        questions_reopened(answer=obj)
        super().delete_model(request, obj)
        try:
            knowledge_unteach(pk=pk, embedders=get_embedders())
        except SyncBusy:
            # the running sync read the answers before: the document goes with the next sync
            self.message_user(request, _("Deleted; a knowledge sync is running, so the answer leaves the "
                                         "knowledge base with the next sync."), messages.WARNING)

    def delete_queryset(self, request, queryset) -> None:
        for obj in queryset:
            self.delete_model(request, obj)
