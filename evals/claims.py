"""The claim checker measured on labelled claims (``evals/data/claims.jsonl``, the development set;
``claims_holdout.jsonl`` and ``claims_holdout_b.jsonl``, each written by a helper who never read
the checker's code): each claim checked against its cited document, read from its owner's
knowledge folder. ``claims_answers_holdout.jsonl`` holds whole answers (sentences each citing a
document, every sentence labelled), checked as ``verify`` checks a model's answer.

The positive class is *unsupported*: precision is the share of flagged claims that are really
unsupported, recall the share of unsupported claims flagged. Each kind of claim is reported on its
own: for the unsupported kinds (another document's fact, a changed number, an invented fact, two
facts combined wrongly, a negation) how many were flagged; for the supported ones (a paraphrase,
a claim in the other language) how many were flagged wrongly.
"""

from __future__ import annotations

import collections
import json
from dataclasses import dataclass, field
from pathlib import Path

from evals.owners import owner_get
from knowledge import claims
from knowledge.content import read_folder
from knowledge.embedders import get_embedder
from text import topics

DEV = Path(__file__).resolve().parent / "data" / "claims.jsonl"


@dataclass
class Tally:
    flagged: int = 0
    total: int = 0


@dataclass
class ClaimsReport:
    rows: list[dict] = field(default_factory=list)  # each claim with the checker's verdict

    def groups(self) -> dict[str, dict[str, Tally]]:
        """Per kind, per language and overall: flagged out of total, by label."""
        out: dict[str, dict[str, Tally]] = collections.defaultdict(lambda: collections.defaultdict(Tally))
        for row in self.rows:
            label = "supported" if row["supported"] else "unsupported"
            for group in ("all", f"kind:{row['kind']}", f"lang:{row['lang']}"):
                tally = out[group][label]
                tally.total += 1
                tally.flagged += int(row["flagged"])
        return out

    def precision_recall(self, group: str = "all") -> tuple[float, float]:
        g = self.groups()[group]
        flagged = g["unsupported"].flagged + g["supported"].flagged
        precision = g["unsupported"].flagged / flagged if flagged else 1.0
        recall = g["unsupported"].flagged / g["unsupported"].total if g["unsupported"].total else 1.0
        return precision, recall


def claims_run(path: Path = DEV) -> ClaimsReport:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    embedder = get_embedder()
    owners: dict[str, tuple[str, dict[str, claims.Source]]] = {}
    report = ClaimsReport()
    for row in rows:
        if row["owner"] not in owners:
            owner = owner_get(row["owner"])
            owners[row["owner"]] = (owner.name, {d.title: claims.Source(d.title, d.body)
                                                 for d in read_folder(owner.knowledge)})
        name, sources = owners[row["owner"]]
        if row["title"] not in sources:
            raise ValueError(f"{row.get('id')}: no document {row['title']!r} for owner {row['owner']}")
        found = claims.check(f"{row['claim']} [source: {row['title']}]", sources, embedder, name)
        report.rows.append({**row, "flagged": bool(found), "reason": found[0].reason if found else "",
                            "detail": found[0].detail if found else ""})
    return report


def answers_run(path: Path) -> tuple[ClaimsReport, int]:
    """Whole cited answers, each checked at once; every labelled sentence a row (flagged when the
    check reported it), and how many reported sentences match no labelled one."""
    embedder = get_embedder()
    report, stray = ClaimsReport(), 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        answer = json.loads(line)
        owner = owner_get(answer.get("owner", "sample"))
        sources = {d.title: claims.Source(d.title, d.body) for d in read_folder(owner.knowledge)}
        found = {_said(u.sentence): u for u in claims.check(answer["answer"], sources, embedder, owner.name)}
        for sentence in answer["sentences"]:
            hit = found.pop(_said(sentence["sentence"]), None)
            report.rows.append({**sentence, "claim": sentence["sentence"], "lang": answer["lang"],
                                "id": answer.get("id"), "flagged": hit is not None,
                                "reason": hit.reason if hit else "", "detail": hit.detail if hit else ""})
        stray += len(found)
    return report, stray


def _said(sentence: str) -> str:
    """A sentence as its words, to match a reported claim with its label whatever the punctuation."""
    return " ".join(topics.words(sentence))
