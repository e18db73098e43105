"""The JSON API (django-ninja): health, visitor feedback, the streaming chat and the approvals.

Errors have one shape, mapped once in ``twinsite.api_errors``; bodies are JSON only.
"""

from __future__ import annotations

import datetime as dt
from functools import wraps
from inspect import iscoroutinefunction
from typing import Literal

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from ninja import NinjaAPI, Schema, Status, Swagger
from ninja.utils import check_csrf

from approvals.api import router as approvals_router
from chat.api import router as chat_router
from chat.embed import conversation_from_token
from chat.models import Feedback, Message
from chat.views import SESSION_KEY
from twinsite import api_errors
from twinsite.api_errors import ApiError
from twinsite.health import health_report


def docs_gate(view):
    """``TWIN_API_DOCS``: ``public`` serves /api/docs and /api/openapi.json to everyone, ``staff``
    to logged-in staff only, ``off`` to no one; the others get the API's 404. Read per request."""

    @wraps(view)
    def gated(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        mode = settings.TWIN_API_DOCS
        allowed = mode == "public" or (mode == "staff" and request.user.is_authenticated and request.user.is_staff)
        if not allowed:
            return api_errors.error_response(404, "not_found")
        return view(request, *args, **kwargs)

    return gated


# Swagger UI from ninja's own static files (ninja is in INSTALLED_APPS), without the online
# validator badge (it would send the schema's address to validator.swagger.io).
api = NinjaAPI(title="Twinsite API", version="1", parser=api_errors.JsonParser(), docs_decorator=docs_gate,
               docs=Swagger(settings={"validatorUrl": None}))
api_errors.install(api)
api.add_router("/admin", approvals_router)
api.add_router("", chat_router)


class DatabaseOut(Schema):
    ok: bool


class CheckpointerOut(Schema):
    ok: bool
    schema_version: int | None
    expected_version: int


class ProviderOut(Schema):
    name: str
    model: str
    offline: bool
    api_key_set: bool


class BudgetOut(Schema):
    ok: bool  # the meter could be read
    day: dt.date | None
    spent_usd: str | None
    reserved_usd: str | None
    limit_usd: str
    exhausted: bool


class HealthOut(Schema):
    status: Literal["ok", "degraded"]
    database: DatabaseOut
    checkpointer: CheckpointerOut
    provider: ProviderOut
    budget: BudgetOut


class FeedbackIn(Schema):
    message_id: int
    rating: Literal[1, -1]
    comment: str = ""


class FeedbackOut(Schema):
    id: int


@api.get("/health", response={200: HealthOut, 503: HealthOut}, auth=None)
def health(request) -> Status:
    """Database, checkpointer, provider configuration and today's budget; 503 when a turn cannot run."""
    report = health_report()
    return Status(200 if report["status"] == "ok" else 503, report)


class VisitorSession:
    """Visitor endpoints: the session's own conversation, JSON only, and Django's CSRF check
    (the chat page sends the token in X-CSRFToken), so another site cannot post for a visitor."""

    def __call__(self, request):
        if request.content_type != "application/json":
            raise ApiError(415, "json_required", "Send the body as application/json.")
        # The embedded chat (chat/embed.py) has no cookies: its signed token names its conversation.
        # A custom header is never sent across sites without CORS, which this API does not allow.
        if "X-Twin-Token" in request.headers:
            conversation_id = conversation_from_token(request.headers["X-Twin-Token"])
            if conversation_id is None:
                raise ApiError(403, "bad_token", "The conversation token is invalid or expired.")
            request.twin_conversation = conversation_id
            return True
        request.twin_conversation = request.session.get(SESSION_KEY)
        if check_csrf(request) is not None:
            raise ApiError(403, "csrf_failed", "Send Django's CSRF token in the X-CSRFToken header.")
        return True


@api.post("/feedback", response={201: FeedbackOut, 200: FeedbackOut}, auth=VisitorSession())
def feedback_create(request, payload: FeedbackIn) -> Status:
    """Rate an answer of your own conversation; rating it again replaces the first rating."""
    message = Message.objects.filter(
        pk=payload.message_id, role=Message.Role.ASSISTANT,
        conversation_id=request.twin_conversation,
    ).first()
    if message is None:
        raise ApiError(404, "unknown_message", "No answer with this id in your conversation.")
    if len(payload.comment) > 2000:
        raise ApiError(422, "comment_too_long", "Comments are limited to 2000 characters.")
    item, created = Feedback.objects.update_or_create(
        message=message, defaults={"rating": payload.rating, "comment": payload.comment})
    return Status(201 if created else 200, {"id": item.pk})


def _reshaped(response: HttpResponse) -> HttpResponse:
    if isinstance(response, HttpResponseNotAllowed):
        allowed = response["Allow"]
        response = api_errors.error_response(405, "method_not_allowed", f"Allowed: {allowed}.")
        response["Allow"] = allowed
    return response


def _json_errors(view):
    """ninja answers a wrong method with a plain-text 405 and its root with Django's 404 page;
    these give the API's error shape instead."""
    if iscoroutinefunction(view):
        async def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            try:
                return _reshaped(await view(request, *args, **kwargs))
            except Http404:
                return api_errors.error_response(404, "not_found")
    else:
        def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            try:
                return _reshaped(view(request, *args, **kwargs))
            except Http404:
                return api_errors.error_response(404, "not_found")
    wrapped.csrf_exempt = getattr(view, "csrf_exempt", False)  # ninja's views check CSRF themselves
    return wrapped


def api_urls() -> tuple[list, str, str]:
    """``api.urls`` with every view answering errors in the API's shape."""
    patterns, app_name, namespace = api.urls
    for pattern in patterns:
        pattern.callback = _json_errors(pattern.callback)
    return patterns, app_name, namespace


def unknown_path(request: HttpRequest, rest: str = "") -> HttpResponse:
    """Any other path under /api/: the API's 404, not the site's HTML page."""
    return api_errors.error_response(404, "not_found")
