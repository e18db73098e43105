"""Feedback comments written before comments were masked: card and account numbers masked now."""

from django.db import migrations


def mask_comments(apps, schema_editor):
    from guards.numbers import mask_sensitive

    Feedback = apps.get_model("chat", "Feedback")
    for feedback in Feedback.objects.exclude(comment="").iterator():
        masked = mask_sensitive(feedback.comment)
        if masked != feedback.comment:
            Feedback.objects.filter(pk=feedback.pk).update(comment=masked)


class Migration(migrations.Migration):
    dependencies = [("chat", "0008_trace_without_turn_figures")]

    operations = [migrations.RunPython(mask_comments, migrations.RunPython.noop)]
