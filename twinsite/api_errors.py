"""The API's one error shape, mapped once for every endpoint.

Every error of ``/api/`` is ``{"error": {"code": "...", "message": "...", ...}}`` with a 4xx or
5xx status: ``code`` is stable and meant for programs, ``message`` is English for people, and a
few codes add fields (``fields`` for ``invalid_request``, ``retry_after`` for ``rate_limited``).
Endpoints raise ``ApiError(status, code, message)``; ninja's own errors (validation, body
parsing, authentication, 404) go through the same handlers, registered by ``install``.
"""

from __future__ import annotations

import json
import logging
import re
from functools import partial
from typing import TYPE_CHECKING, Any

from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from ninja.errors import AuthenticationError, AuthorizationError, HttpError, Throttled, ValidationError
from ninja.parser import Parser

from chat.outage import unavailable_response
from twinsite.db import DATABASE_GONE

if TYPE_CHECKING:
    from ninja import NinjaAPI

log = logging.getLogger(__name__)

_CODE = re.compile(r"[a-z][a-z0-9_]{0,39}")

# The code and message of a status when the raiser gave none (ninja's own HttpErrors).
_BY_STATUS = {
    400: ("bad_request", "The request could not be understood."),
    401: ("unauthorized", "Authentication is required."),
    403: ("forbidden", "You may not do this."),
    404: ("not_found", "There is nothing here."),
    405: ("method_not_allowed", "This method is not allowed here."),
    409: ("conflict", "The request conflicts with the current state."),
    413: ("too_large", "The request body is too large."),
    415: ("json_required", "Send the body as application/json."),
    422: ("invalid_request", "The request is not valid."),
    429: ("rate_limited", "Too many requests; try again later."),
}


class ApiError(HttpError):
    """An error answer: HTTP status, a stable code, an English message and optional extra fields."""

    def __init__(self, status: int, code: str, message: str = "", **extra: Any) -> None:
        super().__init__(status, code)
        self.code = code
        self.detail = message or _BY_STATUS.get(status, ("", "The request failed."))[1]
        self.extra = extra


class RateLimited(ApiError):
    def __init__(self, retry_after: int) -> None:
        super().__init__(429, "rate_limited", f"Too many requests; try again in {retry_after} seconds.",
                         retry_after=retry_after)
        self.retry_after = retry_after


class NotJson(ValueError):
    """A body that is not declared as JSON: never parsed (another site's form can send text/plain)."""


class JsonParser(Parser):
    def parse_body(self, request: HttpRequest) -> Any:
        if request.content_type != "application/json":
            raise NotJson(request.content_type)
        return json.loads(request.body)


def error_body(code: str, message: str, **extra: Any) -> dict:
    return {"error": {"code": code, "message": message, **extra}}


def error_response(status: int, code: str, message: str = "", **extra: Any) -> JsonResponse:
    """The same shape outside ninja's views (the docs gate, unknown paths, wrong methods)."""
    message = message or _BY_STATUS.get(status, ("", "The request failed."))[1]
    return JsonResponse(error_body(code, message, **extra), status=status)


def rate_limited_response(retry_after: int, message: str, *, plain: bool = False) -> HttpResponse:
    """The one 429 outside ninja's views: ``Retry-After``, and the API's error shape (``plain``:
    the text alone, for a page's form)."""
    if plain:
        response = HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
    else:
        response = error_response(429, "rate_limited", message, retry_after=retry_after)
    response["Retry-After"] = str(retry_after)
    return response


def _http_error(request: HttpRequest, exc: HttpError, api: NinjaAPI) -> HttpResponse:
    status = exc.status_code
    fallback_code, fallback_message = _BY_STATUS.get(status, ("error", "The request failed."))
    extra: dict = {}
    if isinstance(exc, ApiError):
        code, message, extra = exc.code, exc.detail, exc.extra
    elif isinstance(exc.__cause__, NotJson):  # ninja wraps any parser failure in HttpError(400)
        status, code, message = 415, "json_required", "Send the body as application/json."
    elif status == 400 and exc.__cause__ is not None:
        code, message = "invalid_json", "The body is not valid JSON."
    elif isinstance(exc, Throttled):
        code, message, extra = "rate_limited", fallback_message, {"retry_after": int(exc.wait or 1)}
    elif isinstance(exc, AuthenticationError | AuthorizationError):
        code, message = fallback_code, fallback_message
    elif _CODE.fullmatch(exc.message):  # raised with a code as its message
        code, message = exc.message, fallback_message
    else:
        code, message = fallback_code, exc.message
    response = api.create_response(request, error_body(code, message, **extra), status=status)
    if "retry_after" in extra:
        response["Retry-After"] = str(extra["retry_after"])
    return response


def _validation_error(request: HttpRequest, exc: ValidationError, api: NinjaAPI) -> HttpResponse:
    fields = [{"loc": list(e.get("loc", ())), "type": e.get("type", ""), "message": e.get("msg", "")}
              for e in exc.errors]
    return api.create_response(
        request, error_body("invalid_request", "Some fields are missing or invalid.", fields=fields), status=422)


def _not_found(request: HttpRequest, exc: Http404, api: NinjaAPI) -> HttpResponse:
    return api.create_response(request, error_body(*_BY_STATUS[404]), status=404)


def _suspicious(request: HttpRequest, exc: SuspiciousOperation, api: NinjaAPI) -> HttpResponse:
    status = 413 if isinstance(exc, RequestDataTooBig) else 400
    return api.create_response(request, error_body(*_BY_STATUS[status]), status=status)


def _unexpected(request: HttpRequest, exc: Exception, api: NinjaAPI) -> HttpResponse:
    # Logged (scrubbed by the log formatter); the client learns nothing about the failure.
    log.error("API error on %s %s", request.method, request.path, exc_info=exc)
    return api.create_response(request, error_body("internal", "Something went wrong on our side."), status=500)


def _unavailable(request: HttpRequest, exc: Exception, api: NinjaAPI) -> HttpResponse:
    log.warning("database unavailable on %s %s: %s", request.method, request.path, exc)
    return unavailable_response(request)  # 503 unavailable with Retry-After: Postgres is away, not a bug


def install(api: NinjaAPI) -> None:
    """Register the handlers; ninja picks the most specific class of an exception's MRO."""
    for exc_class, handler in ((HttpError, _http_error), (ValidationError, _validation_error),
                               (Http404, _not_found), (SuspiciousOperation, _suspicious), (Exception, _unexpected),
                               *((gone, _unavailable) for gone in DATABASE_GONE)):
        api.add_exception_handler(exc_class, partial(handler, api=api))
