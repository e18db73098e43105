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

A finding is certain (shown to the visitor) or a doubt (kept for the owner): ``bars`` gives what
the design asks of each. The certain kind of claim (``CERTAIN_LABELS``: a changed number) is the
one the certain check is written for; another document's fact was one until held-out set E.
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
from text.words import words

DEV = Path(__file__).resolve().parent / "data" / "claims.jsonl"
CERTAIN_LABELS = frozenset({"changed-number"})


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

    def bars(self) -> dict[str, tuple[int, int]]:
        """The design's figures, each as (count, out of): certain findings' precision; certain
        recall on the certain kinds of claim and on all; all findings' recall; true sentences
        shown as unsupported (certain) and reported as doubt."""
        true = [r for r in self.rows if r["supported"]]
        false = [r for r in self.rows if not r["supported"]]
        certain = [r for r in self.rows if r["flagged"] and r["certain"]]
        kinds = [r for r in false if r["kind"] in CERTAIN_LABELS]
        return {
            "certain precision": (sum(not r["supported"] for r in certain), len(certain)),
            "certain recall, certain kinds": (sum(r["flagged"] and r["certain"] for r in kinds), len(kinds)),
            "certain recall, all": (sum(r["flagged"] and r["certain"] for r in false), len(false)),
            "all findings recall": (sum(r["flagged"] for r in false), len(false)),
            "true shown as unsupported": (sum(r["flagged"] and r["certain"] for r in true), len(true)),
            "true reported as doubt": (sum(r["flagged"] and not r["certain"] for r in true), len(true)),
        }

    def findings(self) -> dict[str, tuple[int, int]]:
        """Per kind of finding: how many were right (the sentence unsupported), out of how many."""
        out: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
        for row in self.rows:
            if row["flagged"]:
                out[row["finding"]][0] += int(not row["supported"])
                out[row["finding"]][1] += 1
        return {kind: (right, total) for kind, (right, total) in sorted(out.items())}

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
        report.rows.append({**row, **_verdict(found[0] if found else None)})
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
                                "id": answer.get("id"), **_verdict(hit)})
        stray += len(found)
    return report, stray


def _verdict(found: claims.Unsupported | None) -> dict:
    return {"flagged": found is not None, "certain": bool(found and found.certain),
            "finding": found.kind if found else "", "reason": found.reason if found else "",
            "detail": found.detail if found else ""}


def _said(sentence: str) -> str:
    """A sentence as its words, to match a reported claim with its label whatever the punctuation."""
    return " ".join(words(sentence))
