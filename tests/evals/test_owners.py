"""Owners the twin was not written for (evals/owners/): their data is well-formed, and retrieval
finds their facts (R@3 >= TWIN_EVAL_RECALL3_MIN), each in a scratch database of its own. A
held-out owner (``holdout: true``) is measured, not gated: nothing was tuned on it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.conf import settings

from evals import datasets
from evals.owners import SAMPLE, OwnerError, owner_get, owner_keys
from knowledge.content import read_folder

FIXTURES = [key for key in owner_keys() if key != SAMPLE]
TUNED = [key for key in FIXTURES if not owner_get(key).holdout]


def test_there_are_owners_beside_the_sample_and_one_held_out():
    assert len(TUNED) >= 2 and owner_get(SAMPLE).name
    assert len(FIXTURES) > len(TUNED)


@pytest.mark.parametrize("key", FIXTURES)
def test_an_owners_answer_suite_is_large_a_third_cross_lingual_with_declines_and_cites_its_own_documents(key):
    owner = owner_get(key)
    suite = datasets.load("answers", owner.answers)
    cases = suite.cases
    answered = [c for c in cases if not c.decline]
    assert len(cases) >= 30
    assert sum(c.cross for c in answered) * 3 >= len(answered)
    assert sum(c.decline for c in cases) >= 4 and any(c.not_contains for c in cases if c.decline)
    public = {d.title for d in read_folder(owner.knowledge) if d.public}
    assert suite.document_titles() <= public


def test_an_unknown_owner_is_a_clear_error():
    with pytest.raises(OwnerError, match="no owner 'nobody'"):
        owner_get("nobody")


@pytest.mark.parametrize("key", TUNED)
def test_retrieval_finds_an_unseen_owners_facts(key):
    done = subprocess.run([sys.executable, "manage.py", "eval_retrieval", "--owner", key], cwd=settings.BASE_DIR,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS: hybrid recall@3" in done.stdout
