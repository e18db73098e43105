"""Eval runs for every suite: the run's provider, model, commit, duration, score, threshold and
cost; cases link to the graded turn's trace. ``kind`` becomes ``suite`` and ``got`` ``actual``
(retrieval runs keep their rows)."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("chat", "0006_feedback_one_per_answer"),
        ("evals", "0001_initial"),
    ]

    operations = [
        migrations.RenameField(model_name="evalrun", old_name="kind", new_name="suite"),
        migrations.RenameField(model_name="evalcase", old_name="got", new_name="actual"),
        migrations.AlterField(
            model_name="evalrun", name="started_at", field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.AddField(
            model_name="evalrun", name="provider",
            field=models.CharField(blank=True, db_index=True, max_length=40),
        ),
        migrations.AddField(model_name="evalrun", name="model", field=models.CharField(blank=True, max_length=120)),
        migrations.AddField(model_name="evalrun", name="git_commit", field=models.CharField(blank=True, max_length=60)),
        migrations.AddField(model_name="evalrun", name="duration_s", field=models.FloatField(blank=True, null=True)),
        migrations.AddField(model_name="evalrun", name="score", field=models.FloatField(blank=True, null=True)),
        migrations.AddField(model_name="evalrun", name="threshold", field=models.FloatField(blank=True, null=True)),
        migrations.AddField(
            model_name="evalrun", name="cost_usd",
            field=models.DecimalField(decimal_places=6, default=0, max_digits=12),
        ),
        migrations.AddIndex(
            model_name="evalrun",
            index=models.Index(fields=["suite", "provider", "-started_at"], name="evals_run_suite_provider"),
        ),
        migrations.AddField(
            model_name="evalcase", name="trace",
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                    related_name="+", to="chat.agenttrace"),
        ),
        migrations.AlterModelOptions(name="evalcase", options={"ordering": ["run", "pk"]}),
    ]
