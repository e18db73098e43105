"""The JSON API (django-ninja), wired from the apps' routers: health (``ops.api``), the streaming
chat and visitor feedback (``chat.api``), the approvals (``approvals.api``).

Errors have one shape, mapped once in ``twinsite.api_errors``; bodies are JSON only.
"""

from __future__ import annotations

from functools import wraps
from inspect import iscoroutinefunction

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from ninja import NinjaAPI, Swagger

from approvals.api import router as approvals_router
from chat.api import router as chat_router
from ops.access import staff_may_read
from ops.api import router as ops_router
from twinsite import api_errors


def docs_gate(view):
    """``TWIN_API_DOCS``: ``public`` serves /api/docs and /api/openapi.json to everyone, ``staff``
    to logged-in staff with ``chat.view_trace`` only, ``off`` to no one; the others get the API's
    404. Read per request."""

    @wraps(view)
    def gated(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        mode = settings.TWIN_API_DOCS
        allowed = mode == "public" or (mode == "staff" and staff_may_read(request.user))
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
api.add_router("", ops_router)


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
