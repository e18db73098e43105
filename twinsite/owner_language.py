"""The owner's console speaks the owner's language.

The visitor's pages follow the visitor (switch cookie, then browser: ``LocaleMiddleware``); the
admin, where the owner decides requests and teaches the twin, is in ``TWIN_OWNER_LANGUAGE``
(Dutch or English), like the owner's digest, whatever browser the owner opens it in."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse
from django.utils import translation


class OwnerLanguageMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response
        self.prefix = ""

    def __call__(self, request):
        if not self.prefix:
            self.prefix = reverse("admin:index")
        if request.path.startswith(self.prefix):
            translation.activate(settings.TWIN_OWNER_LANGUAGE)
            request.LANGUAGE_CODE = translation.get_language()
        return self.get_response(request)
