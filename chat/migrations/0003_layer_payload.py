"""Large channel-layer payloads (over Postgres' NOTIFY limit), see chat/layers.py."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [("chat", "0002_langgraph_checkpoints")]

    operations = [
        migrations.RunSQL(
            "CREATE UNLOGGED TABLE IF NOT EXISTS twinsite_layer_payload ("
            " id bigserial PRIMARY KEY, body text NOT NULL, created timestamptz NOT NULL DEFAULT now())",
            "DROP TABLE IF EXISTS twinsite_layer_payload",
        ),
    ]
