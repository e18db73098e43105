"""``manage.py regroup_unanswered``: re-embed the open unanswered questions by their subject.

Questions recorded before grouping went by subject (``chat.selectors.question_subject``) carry
the whole question's vector, which the owner's name dominates; this gives them the subject's."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand

from chat.models import UnansweredQuestion
from chat.selectors import question_subject_vector


class Command(BaseCommand):
    help = "Re-embed the open unanswered questions by their subject (the owner's name left out)."

    def handle(self, *args, **options) -> None:
        count = 0
        for row in UnansweredQuestion.objects.filter(handled_at__isnull=True).only("pk", "question").iterator():
            UnansweredQuestion.objects.filter(pk=row.pk).update(
                embedding=question_subject_vector(row.question, settings.TWIN_OWNER_NAME))
            count += 1
        self.stdout.write(f"{count} open questions re-embedded by subject")
