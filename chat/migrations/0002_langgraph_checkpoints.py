"""LangGraph's checkpoint tables, created by the library's own ``setup()``, and a read-only
view over them for the admin. A future langgraph schema change needs a new migration that
calls ``setup()`` again (it only applies versions not yet recorded)."""

from django.db import migrations

VIEW_SQL = """
CREATE OR REPLACE VIEW twinsite_checkpoint_threads AS
SELECT DISTINCT ON (c.thread_id)
    c.thread_id,
    c.checkpoint_id,
    c.parent_checkpoint_id,
    (count(*) OVER (PARTITION BY c.thread_id))::int AS checkpoint_count,
    (c.metadata ->> 'step')::int AS step,
    c.metadata ->> 'source' AS source,
    (SELECT count(*) FROM checkpoint_writes w
      WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
        AND w.checkpoint_id = c.checkpoint_id AND w.channel = '__interrupt__')::int
        AS pending_interrupts
FROM checkpoints c
WHERE c.checkpoint_ns = ''
ORDER BY c.thread_id, c.checkpoint_id DESC
"""


def create_checkpoint_tables(apps, schema_editor):
    from chat.checkpoints import setup_tables

    setup_tables(schema_editor.connection.settings_dict)


class Migration(migrations.Migration):
    dependencies = [("chat", "0001_initial")]

    operations = [
        migrations.RunPython(create_checkpoint_tables, migrations.RunPython.noop),
        migrations.RunSQL(VIEW_SQL, "DROP VIEW IF EXISTS twinsite_checkpoint_threads"),
    ]
