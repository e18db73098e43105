"""Announce every change of the documents (knowledge.watch): a statement trigger that sends
NOTIFY twinsite_knowledge, delivered when the writing transaction commits."""

from django.db import migrations

FORWARD = """
CREATE OR REPLACE FUNCTION twinsite_knowledge_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('twinsite_knowledge', '');
    RETURN NULL;
END $$;
CREATE TRIGGER knowledge_document_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON knowledge_document
    FOR EACH STATEMENT EXECUTE FUNCTION twinsite_knowledge_changed();
"""
BACKWARD = """
DROP TRIGGER IF EXISTS knowledge_document_changed ON knowledge_document;
DROP FUNCTION IF EXISTS twinsite_knowledge_changed();
"""


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0002_lexeme_stats")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
