"""``{% say "key" %}``: a visitor-facing sentence from chat/texts.py in the page's language."""

from __future__ import annotations

from django import template

from chat.texts import text

register = template.Library()


@register.simple_tag
def say(key: str, lang: str | None = None, **values: object) -> str:
    """The sentence in ``lang``, or in the page's active language."""
    return text(key, lang, **values)
