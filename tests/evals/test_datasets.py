"""The shipped datasets have the shape the issue asks for, name only real documents, and a
malformed dataset is refused with a message naming the file and the case."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from evals import datasets
from evals.datasets import AnswerCase, DatasetError, TaskCase


def titles_in_content() -> set[str]:
    """Public document titles, read from the Markdown front matter (no database needed)."""
    titles = set()
    for path in Path(settings.TWIN_KNOWLEDGE_DIR).rglob("*.md"):
        head = yaml.safe_load(path.read_text(encoding="utf-8").split("---")[1])
        if head.get("public", True):
            titles.add(head["title"])
    return titles


@pytest.mark.parametrize("suite", datasets.SUITES)
def test_every_dataset_loads_with_reasons_and_unique_ids(suite):
    data = datasets.load(suite)
    assert len(data.cases) >= 30
    assert all(case.reason.strip() for case in data.cases)
    assert len({case.id for case in data.cases}) == len(data.cases)
    assert 0.9 <= data.threshold <= 1


@pytest.mark.parametrize("suite", datasets.GRAPH_SUITES)
def test_graph_suites_are_in_dutch_and_english(suite):
    langs = [case.lang for case in datasets.load(suite).cases]
    assert langs.count("nl") >= 6 and langs.count("en") >= 6


def test_tool_suite_covers_contact_availability_and_turns_where_the_risky_tool_is_wrong():
    cases = datasets.load("tools").cases
    expected = [case.acceptable for case in cases]
    assert sum("draft_contact_message" in a for a in expected) >= 8  # ways to ask to be put in touch
    assert sum(a == ("draft_contact_message",) for a in expected) >= 5  # ... with details: drafting is the one answer
    assert sum(a == ("check_availability",) for a in expected) >= 8  # ways to ask when she can start
    risky = [c for c in cases if "draft_contact_message" not in c.acceptable and
             any(w in c.turn.lower() for w in ("message", "mail", "pass this on"))]
    assert len(risky) >= 5
    assert any(case.history for case in cases)
    assert datasets.load("tools").threshold == 0.95


def test_task_suite_has_a_third_refusals_or_declines_and_drafts_with_arguments():
    cases = datasets.load("tasks").cases
    no_answer = [c for c in cases if set(c.expect.outcomes) <= {"refused", "declined"}]
    assert len(no_answer) * 3 >= len(cases)
    assert sum(c.expect.approval is not None for c in cases) >= 4
    assert all(c.expect.cites for c in cases if c.expect.outcomes == ("answered",))


def test_every_document_a_case_names_exists_and_is_public():
    known = titles_in_content()
    for suite in ("tasks", "answers"):
        assert datasets.load(suite).document_titles() <= known, suite
    assert "Draft: Book proposal" not in known


def test_a_malformed_dataset_is_refused_before_anything_runs(tmp_path):
    bad = tmp_path / "answers.yaml"
    bad.write_text("threshold: 0.9\ncases:\n  - {id: a-ok, lang: en, turn: q, reason: r, fact: x, docs: [CV]}\n"
                   "  - {id: a-bad, lang: fr, turn: q, reason: r, fact: x, docs: []}\n")
    with pytest.raises(DatasetError, match=r"answers\.yaml: a-bad: lang: .*docs: .*at least 1"):
        datasets.load("answers", bad)
    bad.write_text("threshold: 0.9\ncases:\n  - {id: a-1, lang: en, turn: q, reason: r, fact: x, docs: [CV]}\n"
                   "  - {id: a-1, lang: en, turn: q, reason: r, fact: y, docs: [CV]}\n")
    with pytest.raises(DatasetError, match="used twice"):
        datasets.load("answers", bad)
    bad.write_text("cases: [\n")
    with pytest.raises(CommandError, match="not valid YAML"):
        call_command("run_evals", "--suite", "answers", "--dataset", str(bad))
    with pytest.raises(CommandError, match="single --suite"):
        call_command("run_evals", "--dataset", str(bad))


def test_owner_in_a_turn_is_the_name_of_the_owner_the_run_serves(settings, tmp_path):
    named = tmp_path / "named.yaml"
    named.write_text("threshold: 0.9\ncases:\n  - {id: n-1, lang: en, decline: true, reason: r,\n"
                     "     turn: \"{owner}, what is the capital of Peru?\", history: [\"Hi {owner}\", \"Hoi\"]}\n")
    settings.TWIN_OWNER_NAME = "Sam Example"
    (case,) = datasets.load("answers", named).cases
    assert case.turn == "Sam Example, what is the capital of Peru?"
    assert case.history == ["Hi Sam Example", "Hoi"]


def test_the_named_off_topic_set_asks_every_owner_in_both_languages(settings):
    settings.TWIN_OWNER_NAME = "Sam Example"
    cases = datasets.load("answers", datasets.DATA / "offtopic_named.yaml").cases
    assert len(cases) >= 30 and all(c.decline for c in cases)
    assert {c.lang for c in cases} == {"en", "nl"}
    assert sum("Sam Example" in c.turn for c in cases) >= 10 and not any("{owner}" in c.turn for c in cases)


def test_approval_expectations_need_a_pending_outcome():
    with pytest.raises(ValueError, match="approval_pending"):
        TaskCase.model_validate({"id": "t-x", "lang": "en", "turn": "q", "reason": "r", "expect": {
            "outcome": "answered", "approval": {"visitor_name": None, "visitor_email": None}}})
    assert AnswerCase(id="a-x", lang="nl", turn="q", reason="r", fact=["1.100", "1,100"], docs=["d"]).fact


@pytest.mark.django_db(transaction=True)  # the command reads on its own connection
def test_a_case_naming_a_document_that_is_not_in_the_knowledge_base_is_a_dataset_error(kb, tmp_path):
    path = tmp_path / "answers.yaml"
    path.write_text("threshold: 0.9\ncases:\n"
                    "  - {id: a-1, lang: en, turn: q, reason: r, fact: x, docs: ['Project: Nonexistent']}\n")
    with pytest.raises(CommandError, match="not in the knowledge base: Project: Nonexistent"):
        call_command("run_evals", "--suite", "answers", "--dataset", str(path), "--provider", "offline")


def test_fault_injection_needs_a_provider_that_makes_requests():
    with pytest.raises(CommandError, match="offline provider makes none"):
        call_command("run_evals", "--suite", "tools", "--provider", "offline", "--fault-drop-every", "2")
