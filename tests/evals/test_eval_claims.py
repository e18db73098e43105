"""``manage.py eval_claims``: labelled claims, or whole labelled answers, checked against the
sample's documents; per kind the flagged share, and a clear error for a bad file."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

CV = "Curriculum Vitae"
TRUE = "Mira leads the platform team of six engineers at Lumora Health."
CHANGED = "Mira leads the platform team of nine engineers at Lumora Health."


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("eval_claims", *args, stdout=out)
    return out.getvalue()


def test_labelled_claims_are_counted_per_kind(tmp_path):
    rows = [{"id": "t1", "owner": "sample", "lang": "en", "claim": TRUE, "title": CV, "supported": True,
             "kind": "paraphrase"},
            {"id": "t2", "owner": "sample", "lang": "en", "claim": CHANGED, "title": CV, "supported": False,
             "kind": "changed-number"}]
    path = tmp_path / "claims.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    out = run("--dataset", str(path))
    assert "kind:changed-number          unsupported flagged 1/1" in out
    assert "kind:paraphrase              supported flagged 0/1" in out
    assert "precision 1.000, recall 1.000" in out
    assert "certain recall, certain kinds    1/1 (100.0%)" in out
    assert "true shown as unsupported        0/1 (0.0%)" in out
    assert "finding figure                   certain precision 1/1" in out


def test_a_whole_answer_is_checked_at_once_and_each_labelled_sentence_counted(tmp_path):
    answer = {"id": "a1", "lang": "en", "question": "Who does she lead?",
              "answer": f"{TRUE} [source: {CV}] {CHANGED[:-1]} [source: {CV}].",
              "sentences": [{"sentence": TRUE, "title": CV, "supported": True, "kind": "paraphrase"},
                            {"sentence": CHANGED, "title": CV, "supported": False, "kind": "changed-number"}]}
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps(answer))
    out = run("--answers", str(path))
    assert "reported sentences matching no labelled one: 0" in out
    assert "all                          supported flagged 0/1; unsupported flagged 1/1" in out


def test_a_missing_file_or_an_unknown_title_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        run("--answers", str(tmp_path / "none.jsonl"))
    path = tmp_path / "claims.jsonl"
    path.write_text(json.dumps({"id": "x", "owner": "sample", "lang": "en", "claim": TRUE, "title": "No such page",
                                "supported": True, "kind": "paraphrase"}))
    with pytest.raises(CommandError, match="no document 'No such page'"):
        run("--dataset", str(path))
