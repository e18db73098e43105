from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from approvals.models import PendingApproval
from chat.models import Conversation
from chat.services import conversation_create

SESSION_KEY = "twin_conversation"


def _client_ip(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR", "")


def chat_page(request: HttpRequest) -> HttpResponse:
    """The chat page. The conversation lives in the session, so a reload keeps it."""
    conversation = None
    if conversation_id := request.session.get(SESSION_KEY):
        conversation = Conversation.objects.filter(pk=conversation_id).first()
    if conversation is None:
        conversation = conversation_create(visitor_ip=_client_ip(request))
        request.session[SESSION_KEY] = str(conversation.pk)
    messages = [m for m in conversation.messages.all() if m.content]
    return render(request, "chat/index.html", {
        "conversation": conversation,
        "messages": messages,
        "owner": settings.TWIN_OWNER_NAME,
        "offline": settings.TWIN_PROVIDER == "offline",
        "provider": settings.TWIN_PROVIDER,
        "max_chars": settings.TWIN_MAX_QUESTION_CHARS,
        "approvals": PendingApproval.objects.filter(conversation=conversation).order_by("created_at"),
    })


@require_POST
def new_conversation(request: HttpRequest) -> HttpResponse:
    request.session.pop(SESSION_KEY, None)
    return redirect("chat")
