"""The labelled texts the screens are trained and calibrated on, and their vectors.

``team_set``: the team's own writing only, never a public corpus: the exemplar bank
(``guards/data/exemplars.yaml``), the guard eval (``evals/data/guards.yaml``) and the benign
traffic set (``evals/data/benign_traffic.jsonl``). The team's held-out files
(``guards_holdout.jsonl``, ``benign_traffic_holdout.jsonl``) are ``team_holdout_set``: measured,
never trained on. ``jsonl_set`` reads any other labelled file (the shared corpora, a held-out
public set) for measuring.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from guards.semantic import EXEMPLARS, load_exemplars

BASE_DIR = Path(__file__).resolve().parent.parent
EVAL_DATA = BASE_DIR / "evals" / "data"


@dataclass(frozen=True)
class Labelled:
    text: str
    attack: bool
    source: str  # the family of sources it comes from ("team", "llm-guard", "garak", ...)
    lang: str = "?"
    kind: str = ""


def team_set() -> list[Labelled]:
    attacks, benign = load_exemplars(EXEMPLARS)
    rows = [Labelled(t, True, "team:exemplars") for t in attacks]
    rows += [Labelled(t, False, "team:exemplars") for t in benign]
    cases = yaml.safe_load((EVAL_DATA / "guards.yaml").read_text(encoding="utf-8"))["cases"]
    rows += [Labelled(c["text"], bool(c["block"]), "team:guards", c.get("lang", "?"), c.get("reason", ""))
             for c in cases]
    rows += [Labelled(r["text"], False, "team:traffic", r.get("lang", "?"), r.get("class", ""))
             for r in _jsonl(EVAL_DATA / "benign_traffic.jsonl")]
    return rows


def team_holdout_set() -> list[Labelled]:
    rows = [Labelled(r["text"], bool(r["block"]), "team:holdout", r.get("lang", "?"), r.get("class", ""))
            for r in _jsonl(EVAL_DATA / "guards_holdout.jsonl")]
    return rows + [Labelled(r["text"], False, "team:holdout", r.get("lang", "?"), r.get("class", ""))
                   for r in _jsonl(EVAL_DATA / "benign_traffic_holdout.jsonl")]


def owner_questions() -> list[Labelled]:
    """The visitor questions of every owner's answer suites (``evals/data/answers.yaml``,
    ``evals/owners/*/``): benign by construction, written for the owners, never for the guards."""
    rows = []
    for path in sorted([EVAL_DATA / "answers.yaml", *(BASE_DIR / "evals" / "owners").glob("*/*.yaml")]):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for case in data.get("cases") or [] if isinstance(data, dict) else []:
            turns = [case["turn"]] if isinstance(case.get("turn"), str) else case.get("turns") or []
            rows += [Labelled(t, False, f"owners:{path.parent.name}", case.get("lang", "?"))
                     for t in turns if isinstance(t, str)]
    return rows


def jsonl_set(path: Path, *, attack: bool, family: str | None = None) -> list[Labelled]:
    """A labelled file of one side: each row's ``family`` (or ``source``'s repository, or
    ``family``) names its source family."""
    rows = []
    for r in _jsonl(path):
        source = r.get("family") or family or str(r.get("source", "?")).split(":")[0].split(" ")[0]
        rows.append(Labelled(r["text"], attack, source, r.get("lang", "?"), r.get("kind") or r.get("class") or ""))
    return rows


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def vectors(texts: list[str], embedder, cache: Path | None = None) -> np.ndarray:
    """The embedder's query vectors of ``texts``, kept in ``cache`` (an ``.npz`` keyed by the
    text's sha256) between runs."""
    keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
    known: dict[str, np.ndarray] = {}
    if cache is not None and cache.exists():
        with np.load(cache) as data:
            known = {k: data[k] for k in data.files}
    missing = [i for i, k in enumerate(keys) if k not in known]
    if missing:
        batch = getattr(embedder, "queries", None)
        fresh = batch([texts[i] for i in missing]) if batch else np.stack([embedder.query(texts[i]) for i in missing])
        known |= {keys[i]: v for i, v in zip(missing, fresh, strict=True)}
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            np.savez(cache, **known)
    return np.stack([known[k] for k in keys]) if keys else np.zeros((0, embedder.dimensions))
