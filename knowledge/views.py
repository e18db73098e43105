"""The public page of each knowledge-base document: where a citation leads."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.csp import csp_override
from markdown_it import MarkdownIt

from knowledge.selectors import document_by_slug

# CommonMark without raw HTML: owner-written Markdown renders, any HTML in it is shown as text,
# and markdown-it refuses javascript:/vbscript:/data: links.
_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_CSP = {**settings.SECURE_CSP, "style-src": ["'self'"]}


@csp_override(_CSP)
def source_page(request: HttpRequest, slug: str) -> HttpResponse:
    document = document_by_slug(slug)
    if document is None:
        raise Http404("no such source")
    return render(request, "knowledge/source.html", {
        "document": document, "owner": settings.TWIN_OWNER_NAME,
        "html": mark_safe(_MARKDOWN.render(document.body)),  # noqa: S308 (html disabled: escaped by markdown-it)
    })
