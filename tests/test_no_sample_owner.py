"""No code knows the sample owner. Every owner replaces ``knowledge/content/``; a rule, word or
example that names the sample's people, employers or projects fits one knowledge base only.
Their names may appear in that folder, in the tests and in the sample's eval data, nowhere else
that runs or configures the twin (the prose documentation may describe the sample). Other owners'
fixtures (``evals/owners/``) are owner material too: two fictional owners may both have worked in
Utrecht."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from twinsite.env import knowledge_owner_name

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "knowledge" / "content"
ALLOWED = ("knowledge/content/", "tests/", "evals/data/", "evals/owners/", "docs/")
# Capitalised words of the sample that also belong to any other text: sentence starts, months,
# languages, places and technologies many owners name.
_COMMON = re.compile(r"[A-Z][a-z]+")


def sample_names() -> set[str]:
    """The sample's proper nouns: words written with a capital in its documents that no English or
    Dutch function word, technology or place other owners also name accounts for — the owner's
    name, employers, projects and products (from its own owner.yaml and front matter titles)."""
    names = set(knowledge_owner_name(SAMPLE).split())
    for path in SAMPLE.rglob("*.md"):
        title = re.search(r"^title:\s*[\"']?(.+?)[\"']?\s*$", path.read_text(encoding="utf-8"), re.MULTILINE)
        if title and title.group(1).lower().startswith(("project:", "project ")):
            names.update(w for w in re.findall(r"[A-Z][\w-]{3,}", title.group(1).split(":", 1)[-1]))
    # employers and products the CV names
    cv = (SAMPLE / "cv.md").read_text(encoding="utf-8")
    employers = re.findall(r"\bat ([A-Z][a-z]+(?: [A-Z][a-z]+)?)\b", cv)
    # an employer by its own word alone too ("Acme" of "Acme Health"): the word a company is known by
    names.update(employers, (e.split()[0] for e in employers))
    return {n for n in names if len(n) >= 4}


def test_the_sample_owner_is_named_only_where_the_sample_lives():
    names = sample_names()
    assert {"Mira", "Jansen"} <= names and len(names) >= 6, names  # the check finds what it looks for
    assert {"Lumora Health", "Lumora"} <= names, names  # an employer's name, and its own word alone
    pattern = "|".join(re.escape(n) for n in sorted(names))
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    offenders = []
    for rel in tracked.splitlines():
        if rel.startswith(ALLOWED) or rel.endswith(".md") or not (ROOT / rel).is_file():
            continue
        try:
            text = (ROOT / rel).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        offenders += [f"{rel}: {m.group(0)}" for m in re.finditer(rf"\b(?:{pattern})\b", text)]
    assert offenders == []


@pytest.mark.parametrize(("content", "expected"), [
    ('name: "Ada Lovelace"\n', "Ada Lovelace"),
    ("description: no name here\n", ""),
])
def test_the_owner_name_travels_with_the_knowledge_folder(tmp_path, content, expected):
    (tmp_path / "owner.yaml").write_text(content, encoding="utf-8")
    assert knowledge_owner_name(tmp_path) == expected
    assert knowledge_owner_name(tmp_path / "missing") == ""
