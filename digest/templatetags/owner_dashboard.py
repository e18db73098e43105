from __future__ import annotations

from django import template

from digest.dashboard import dashboard

register = template.Library()


@register.simple_tag(takes_context=True)
def owner_dashboard(context) -> dict:
    return dashboard(context["request"].user)
