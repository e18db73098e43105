from __future__ import annotations

from django import template

from approvals.models import PendingApproval

register = template.Library()


@register.simple_tag
def pending_approvals_count() -> int:
    return PendingApproval.objects.filter(status=PendingApproval.Status.PENDING).count()
