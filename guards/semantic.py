"""The semantic screen: a question's embedding compared with a bank of attack and benign
exemplars written by the team (``guards/data/exemplars.yaml``). No generative model is involved,
so there is nothing to talk round: the score is arithmetic on vectors.

Decision rule: ``attack`` is the mean cosine of the two nearest attack exemplars, ``benign`` the
cosine of the nearest benign one; a question is blocked when ``attack - benign >= margin``.
Relative, not absolute: e5's cosines bunch together (unrelated texts score 0.70-0.76), so only
"closer to the attacks than to anything a visitor asks" separates. The margin is calibrated on
the labelled set ``evals/data/guards.yaml`` (``manage.py screen_input --calibrate``), see
docs/GUARDS.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

EXEMPLARS = Path(__file__).resolve().parent / "data" / "exemplars.yaml"


def load_exemplars(path: Path = EXEMPLARS) -> tuple[list[str], list[str]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return list(data["attack"]), list(data["benign"])


@dataclass(frozen=True)
class SemanticScore:
    attack: float
    benign: float
    nearest_attack: str
    nearest_benign: str

    @property
    def margin(self) -> float:
        return self.attack - self.benign


class ExemplarScreen:
    def __init__(self, attack_texts: list[str], attack_vectors: np.ndarray, benign_texts: list[str],
                 benign_vectors: np.ndarray, margin: float) -> None:
        self.attack_texts, self.benign_texts = attack_texts, benign_texts
        self.attack_vectors = np.asarray(attack_vectors, dtype=np.float32)
        self.benign_vectors = np.asarray(benign_vectors, dtype=np.float32)
        self.margin = margin

    def score(self, vector: np.ndarray) -> SemanticScore:
        """Cosines (vectors are L2-normalised, so a dot product)."""
        vector = np.asarray(vector, dtype=np.float32)
        attack = self.attack_vectors @ vector
        benign = self.benign_vectors @ vector
        top = np.sort(attack)[-2:]
        return SemanticScore(float(top.mean()), float(benign.max()), self.attack_texts[int(attack.argmax())],
                             self.benign_texts[int(benign.argmax())])

    def blocks(self, score: SemanticScore) -> bool:
        return score.margin >= self.margin
