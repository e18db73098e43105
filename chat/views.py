from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import translation
from django.utils.csp import CSP
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csp import csp_override
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from approvals.models import PendingApproval
from approvals.services import generated_password_rehashed
from chat.embed import conversation_from_token, conversation_token, origin_allowed
from chat.models import Conversation
from chat.selectors import starter_questions, trace_for_message, why_context
from chat.services import conversation_create
from chat.texts import language, page_texts
from chat.texts import text as say
from chat.turns.admission import SESSION_KEY, visitor_key
from guards import limits, login
from ops.access import staff_may_read
from twinsite.api_errors import rate_limited_response
from twinsite.clientip import client_ip_from_request

VISITOR_CSP = {**settings.SECURE_CSP, "style-src": [CSP.SELF]}  # no inline style either


@csp_override(VISITOR_CSP)
def chat_page(request: HttpRequest) -> HttpResponse:
    """The chat page. Loading it writes nothing: the conversation starts with the first question
    (``conversation_start``) and lives in the session, so a reload keeps it. A crawler, a page
    that embeds ``<img src="/">`` or a visitor who only looks costs no row and no limit."""
    conversation = None
    if conversation_id := request.session.get(SESSION_KEY):
        conversation = Conversation.objects.filter(pk=conversation_id).first()
    lang = language(request.LANGUAGE_CODE)  # LocaleMiddleware: the switch's cookie, else the browser
    return render(request, "chat/index.html", _chat_context(conversation, lang))


@require_POST
def conversation_start(request: HttpRequest) -> JsonResponse:
    """The page's first question is about to be asked: its conversation, made now (counted
    against the per-address limit of new conversations) and kept in the session. The session's
    own conversation when it has one, so a second call makes nothing (and counts all the same)."""
    decision = _conversation_counted(request)
    if (conversation_id := request.session.get(SESSION_KEY)) and Conversation.objects.filter(
            pk=conversation_id).exists():
        return JsonResponse({"conversation": str(conversation_id)})
    if (limited := _limited_json(decision, language(request.LANGUAGE_CODE))) is not None:
        return limited
    conversation = conversation_create(visitor_ip=client_ip_from_request(request))
    request.session[SESSION_KEY] = str(conversation.pk)
    return JsonResponse({"conversation": str(conversation.pk)}, status=201)


def _conversation_counted(request: HttpRequest) -> limits.Decision:
    """A new conversation counted against its address's limit and its blocks' in one statement
    (``guards.limits.address_hit``), first thing, as django-ratelimit's decorator counted it."""
    return limits.address_hit("conversation", ip_key=visitor_key("conversation", request),
                              client=client_ip_from_request(request), request=request)


def _limited_json(decision: limits.Decision, lang: str) -> JsonResponse | None:
    """As ``_limited`` for a new conversation, answered in the API's error shape."""
    if decision.allowed:
        return None
    return rate_limited_response(decision.retry_after,
                                 say("error.rate_limited", lang, seconds=decision.retry_after))


def _chat_context(conversation: Conversation | None, lang: str) -> dict:
    """What the chat page shows; ``conversation`` None: a page with no question asked yet."""
    messages = [m for m in conversation.messages.select_related("turn") if m.content] if conversation else []
    return {
        "conversation": conversation,
        "messages": messages,
        "owner": settings.TWIN_OWNER_NAME,
        "offline": settings.TWIN_PROVIDER == "offline",
        "provider": settings.TWIN_PROVIDER,
        "max_chars": settings.TWIN_MAX_QUESTION_CHARS,
        "approvals": PendingApproval.objects.filter(conversation=conversation).order_by("created_at")
        if conversation else [],
        "starters": starter_questions(lang),
        "page_texts": page_texts(lang),
    }


# --- the embeddable twin (chat/embed.py) -------------------------------------------------------

def _cors(response: HttpResponse, origin: str) -> HttpResponse:
    if origin:
        response["Access-Control-Allow-Origin"] = origin
        response["Vary"] = "Origin"
    return response


@require_GET
def embed_script(request: HttpRequest) -> HttpResponse:
    """``<script src=".../embed.js" data-lang="nl" async>``: the launcher, for any page."""
    response = HttpResponse((settings.BASE_DIR / "static" / "embed.js").read_bytes(),
                            content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=3600"
    return response


@require_GET
def embed_config(request: HttpRequest) -> JsonResponse:
    """What the launcher on the page at ``Origin`` may show: allowed or refused, with the label and
    colour (CORS: any page may ask; only the listed origins get a chat)."""
    origin = request.headers.get("Origin", "")
    lang = language(request.GET.get("lang"))
    label = settings.TWIN_EMBED_LABEL or say("ui.embed_label", lang)
    body = {"allowed": origin_allowed(origin), "label": label, "color": settings.TWIN_EMBED_COLOR,
            "close": say("ui.close", lang), "refused": say("ui.embed_refused", lang)}
    return _cors(JsonResponse(body), origin)


@csrf_exempt  # a POST here carries the conversation's token, which is its own credential
@xframe_options_exempt
@require_http_methods(["GET", "POST"])
def embed_page(request: HttpRequest) -> HttpResponse:
    """The chat inside the iframe; framing is allowed only to TWIN_EMBED_ORIGINS (CSP
    frame-ancestors), nothing of it is cached. ``GET /embed/`` is the boot page, which finds the
    frame's token (its own storage, else the host page's by postMessage) and posts it here
    (``POST /embed/`` with ``t``): the conversation's page, with a renewed token. ``?new=1``: a
    chat that writes nothing until its first question (``embed_start``). A token in the URL is
    never read (chat.embed)."""
    lang = language(request.GET.get("lang") or request.LANGUAGE_CODE)
    host = request.GET.get("host", "")
    host = host if origin_allowed(host) else ""
    if request.method == "GET" and "new" not in request.GET:
        return _frameable(render(request, "chat/embed_boot.html", {"host": host}))
    # only the boot page itself may post a token (its own origin): another site's auto-submitted
    # form with someone's token would otherwise hand the visitor that conversation
    conversation_id = conversation_from_token(request.POST.get("t")) if (
        request.method == "POST" and _same_origin(request)) else None
    conversation = Conversation.objects.filter(pk=conversation_id).first() if conversation_id else None
    with translation.override(lang):
        response = render(request, "chat/index.html", _chat_context(conversation, lang) | {
            "embedded": True, "token": conversation_token(conversation.pk) if conversation else "", "lang": lang,
            "host": host,  # the embedding page, told the token by postMessage: only an origin on the list
        })
    return _frameable(response)


def _same_origin(request: HttpRequest) -> bool:
    return request.headers.get("Origin") == f"{request.scheme}://{request.get_host()}"


@csrf_exempt  # the frame has no usable cookies (third-party); the Origin check below stands in
@require_POST
def embed_start(request: HttpRequest) -> JsonResponse:
    """The embedded chat's first question: its conversation, made now, as a signed token the
    frame keeps. Only the frame itself may ask (its own origin); counted against the per-address
    limit of new conversations."""
    decision = _conversation_counted(request)
    if not _same_origin(request):
        return JsonResponse({"error": {"code": "forbidden", "message": say("error.forbidden")}}, status=403)
    lang = language(request.GET.get("lang") or request.LANGUAGE_CODE)
    if (limited := _limited_json(decision, lang)) is not None:
        return limited
    conversation = conversation_create(visitor_ip=client_ip_from_request(request))
    return JsonResponse({"conversation": str(conversation.pk), "token": conversation_token(conversation.pk)},
                        status=201)


def _frameable(response: HttpResponse) -> HttpResponse:
    """The visitor's policy, with framing allowed to the listed origins only; never stored by a
    cache (the page can hold a conversation and its token)."""
    response._csp_config = {**VISITOR_CSP, "frame-ancestors": [CSP.SELF, *settings.TWIN_EMBED_ORIGINS]}
    response["Cache-Control"] = "no-store"
    return response


@require_POST
def new_conversation(request: HttpRequest) -> HttpResponse:
    request.session.pop(SESSION_KEY, None)
    return redirect("chat")


def admin_login(request: HttpRequest) -> HttpResponse:
    """The admin's login, throttled by failures only (``guards.login``): per name and address
    block, per name from browsers without its device cookie, or per device cookie. A success
    clears the name's counts and gives the browser its device cookie."""
    from django.contrib import admin

    username = request.POST.get("username", "")[:150] if request.method == "POST" else ""
    if not username:  # showing the form, or a form without a name, tries no password
        return admin.site.login(request)
    refusal = login.attempt(username, client=client_ip_from_request(request),
                            device=login.device_nonce(request, username))
    if refusal is not None:
        return rate_limited_response(refusal.retry_after, refusal.message(), plain=True)
    before = get_user_model().objects.filter(username=username).values_list("password", flat=True).first()
    response = admin.site.login(request)
    if response.status_code == 302 and request.user.is_authenticated:
        # a login changes no password, but Django may hash it again (a higher work factor)
        generated_password_rehashed(user=request.user, before=before or "")
        login.succeeded(request.user.get_username())
        login.device_cookie_set(request, response, request.user.get_username())
    return response


def why_panel(request: HttpRequest, message_id: int) -> HttpResponse:
    """The turn behind an answer, for staff with ``chat.view_trace`` only (everyone else: 403,
    nothing shown)."""
    if not staff_may_read(request.user):
        return HttpResponse("Staff only.", status=403, content_type="text/plain; charset=utf-8")
    trace = trace_for_message(message_id=message_id)
    if trace is None:
        return HttpResponse("No trace for this answer.", status=404, content_type="text/plain; charset=utf-8")
    return render(request, "chat/why.html", why_context(trace))
