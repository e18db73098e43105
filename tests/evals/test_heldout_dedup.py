"""A held-out set is unseen only when none of its items restates one of an earlier set: every item of
a held-out set of claims (and every sentence of a held-out set of answers) has a word-set Jaccard
below ``LIMIT`` with every item of every set written before it.

The sets whose misses were read while writing the checker are development sets now (``DEVELOPMENT``:
the first set, A and its answers, B); they are checked as the earlier sets only. C had 67 of its
220 claims and 8 of its 14 answers at 0.6 or more with an earlier set: those were removed. D's
misses were read in issue 56's second round, so E, written then by someone who read none of the
checker and none of the sets, was the held-out set until its aggregates moved 'elsewhere' to the
doubts; F, written after that, judged it. G judged the third round and was read in the fourth;
H, written after the fourth, judges that."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "evals" / "data"
LIMIT = 0.6
# in the order they were written; the sets written together (claims and answers) come as one
DEVELOPMENT = [("claims.jsonl",), ("claims_holdout.jsonl",),
               ("claims_answers_holdout.jsonl", "claims_holdout_b.jsonl")]
ORDER = [*DEVELOPMENT, ("claims_holdout_c.jsonl", "claims_answers_holdout_c.jsonl"),
         ("claims_holdout_d.jsonl", "claims_answers_holdout_d.jsonl"),
         ("claims_holdout_e.jsonl", "claims_answers_holdout_e.jsonl"),
         ("claims_holdout_f.jsonl", "claims_answers_holdout_f.jsonl"),
         ("claims_holdout_g.jsonl", "claims_answers_holdout_g.jsonl"),
         ("claims_holdout_h.jsonl", "claims_answers_holdout_h.jsonl")]


def generations() -> list[tuple[str, ...]]:
    """``ORDER``, then any later held-out set of claims or answers (each a generation of its own,
    by name: a set written later is named after the earlier ones)."""
    listed = {name for names in ORDER for name in names}
    later = sorted(p.name for p in DATA.glob("claims_*holdout*.jsonl") if p.name not in listed)
    return ORDER + [(name,) for name in later]


def items(name: str) -> list[tuple[str, frozenset[str]]]:
    """A set's items as (id, word set): a claim, or each sentence of an answer."""
    out = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        texts = [s["sentence"] for s in row["sentences"]] if "sentences" in row else [row["claim"]]
        out += [(f"{name}:{row.get('id')}", words(text)) for text in texts]
    return out


def words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"\w+", text.lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def test_the_check_tells_a_restated_item():
    said = words("She has run the bakery on the harbour since 2019.")
    assert jaccard(said, words("She has run the bakery on the harbour since 2020.")) >= LIMIT
    assert jaccard(said, words("Her brother repairs bicycles in a shed behind the station.")) < LIMIT


def test_every_set_is_read():
    assert len(generations()) > len(DEVELOPMENT) and all(items(name) for names in generations() for name in names)


@pytest.mark.parametrize("generation", range(len(DEVELOPMENT), len(generations())))
def test_no_held_out_item_restates_an_earlier_set(generation):
    sets = generations()
    earlier = [item for names in sets[:generation] for name in names for item in items(name)]
    offending = [(mine, theirs) for name in sets[generation] for mine, said in items(name)
                 for theirs, other in earlier if jaccard(said, other) >= LIMIT]
    # ids only: a held-out item's text is not printed
    assert offending == [], f"{len(offending)} pairs, e.g. {offending[:5]}"


# The input screen's sets. The first ones, and set 55 (whose items were read while the screen was
# changed for issue 55), are development sets; set 61 was written after them by someone who read
# none of them, and its writer's script dropped what restated one (61's honest sets became
# development sets for task G2); set 62's honest messages came after 61.
GUARD_DEVELOPMENT = [("guards.yaml", "guards_holdout.jsonl", "benign_traffic.jsonl", "benign_traffic_holdout.jsonl",
                      "offtopic.jsonl", "offtopic_holdout.jsonl"),
                     ("guards_heldout55_public.jsonl", "guards_heldout55_multilingual.jsonl",
                      "benign_heldout55_hard.jsonl")]
GUARD_ORDER = [*GUARD_DEVELOPMENT, ("guards_heldout61_public.jsonl", "guards_heldout61_written.jsonl",
                                    "benign_heldout61_visitor.jsonl", "benign_heldout61_hard.jsonl"),
               ("benign_heldout62_hard.jsonl", "benign_heldout62_visitor.jsonl")]


def messages(name: str) -> list[tuple[str, frozenset[str]]]:
    """A set of visitor messages as (file:line, word set)."""
    if name.endswith(".yaml"):
        import yaml

        texts = [case["text"] for case in yaml.safe_load((DATA / name).read_text(encoding="utf-8"))["cases"]]
    else:
        rows = [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]
        texts = [row.get("text") or row.get("q") for row in rows]
    return [(f"{name}:{n}", words(text)) for n, text in enumerate(texts, start=1)]


@pytest.mark.parametrize("generation", range(1, len(GUARD_ORDER)))
def test_no_held_out_message_restates_an_earlier_set(generation):
    earlier = [item for names in GUARD_ORDER[:generation] for name in names for item in messages(name)]
    assert all(messages(name) for name in GUARD_ORDER[generation])
    offending = [(mine, theirs) for name in GUARD_ORDER[generation] for mine, said in messages(name)
                 for theirs, other in earlier if jaccard(said, other) >= LIMIT]
    assert offending == [], f"{len(offending)} pairs, e.g. {offending[:5]}"
