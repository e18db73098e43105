"""Owners the evals run for: the shipped sample and the fixtures under ``evals/owners/<key>/``.

Every owner replaces the sample knowledge, so the twin is measured on owners it was not written
for. An owner fixture is a folder: ``owner.yaml`` (``name``), ``content/`` (its Markdown
knowledge), ``answers.yaml`` (the answer suite) and ``retrieval.jsonl`` (labelled questions).
``manage.py run_evals --owner KEY`` and ``eval_retrieval --owner KEY`` run in a scratch database
of their own (``<database>_owner_<key>``, kept between runs for its history), migrated and synced
from the owner's folder, with ``TWIN_OWNER_NAME`` set to the owner's name.

An owner marked ``holdout: true`` in its ``owner.yaml`` was written by someone who did not read the
twin's code, and the code was not tuned on it: it is measured, never tuned on, and its scores are
not gated in ``make test`` (they say how the twin does on an owner nobody tuned it for).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml
from django.conf import settings

from twinsite.scratch import scratch_url

OWNERS_DIR = Path(__file__).resolve().parent / "owners"
DATA = Path(__file__).resolve().parent / "data"
SAMPLE = "sample"


class OwnerError(ValueError):
    """An owner that is not there, or a fixture folder that is incomplete."""


@dataclass(frozen=True)
class Owner:
    key: str
    name: str
    knowledge: Path
    answers: Path
    retrieval: Path
    holdout: bool = False  # measured, never tuned on, not gated


def owner_keys() -> list[str]:
    if not OWNERS_DIR.is_dir():
        return [SAMPLE]
    return [SAMPLE, *sorted(p.name for p in OWNERS_DIR.iterdir() if (p / "owner.yaml").is_file())]


def owner_get(key: str) -> Owner:
    if key not in owner_keys():
        raise OwnerError(f"no owner {key!r}: choose one of {', '.join(owner_keys())}")
    # The sample's eval data sits in evals/data/, its knowledge where the site ships it.
    folder = DATA if key == SAMPLE else OWNERS_DIR / key
    knowledge = settings.BASE_DIR / "knowledge" / "content" if key == SAMPLE else folder / "content"
    # the sample's owner.yaml sits in its knowledge folder, where settings read its name too
    meta = yaml.safe_load((knowledge / "owner.yaml" if key == SAMPLE else folder / "owner.yaml")
                          .read_text(encoding="utf-8")) or {}
    owner = Owner(key=key, name=str(meta.get("name") or ""), knowledge=knowledge,
                  answers=folder / "answers.yaml", retrieval=folder / "retrieval.jsonl",
                  holdout=meta.get("holdout") is True)
    missing = [str(p) for p in (owner.knowledge, owner.answers, owner.retrieval) if not p.exists()]
    if not owner.name or missing:
        raise OwnerError(f"owner {key!r} is incomplete: needs a name in owner.yaml and {', '.join(missing)}")
    return owner


def owner_active(owner: Owner) -> bool:
    """This process already serves the owner's knowledge (no scratch database needed)."""
    return Path(settings.TWIN_KNOWLEDGE_DIR).resolve() == owner.knowledge.resolve() \
        and settings.TWIN_OWNER_NAME == owner.name


def owner_environment(owner: Owner) -> dict[str, str]:
    """The environment of a process that serves ``owner``: its scratch database (created with
    pgvector if new), its knowledge folder and its name; the rest as configured."""
    return os.environ | {"DATABASE_URL": scratch_url(f"owner_{owner.key}"), "TWIN_KNOWLEDGE_DIR": str(owner.knowledge),
                         "TWIN_OWNER_NAME": owner.name}


def owner_run(owner: Owner, command: list[str]) -> int:
    """Migrate and sync the owner's scratch database, then run ``manage.py <command>`` there.
    Returns the command's exit status; its output goes to this process' streams."""
    env = owner_environment(owner)
    manage = [sys.executable, str(settings.BASE_DIR / "manage.py")]
    for step in (["migrate", "--noinput", "-v", "0"], ["sync_knowledge"]):
        done = subprocess.run([*manage, *step], env=env, cwd=settings.BASE_DIR, capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            raise OwnerError(f"{' '.join(step)} for owner {owner.key} failed:\n{done.stdout}{done.stderr}")
    sys.stdout.flush()
    return subprocess.run([*manage, *command], env=env, cwd=settings.BASE_DIR, check=False).returncode
