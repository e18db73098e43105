"""A trained screen beside the exemplar margin: logistic regression over the e5 vector the screen
already computes. Deterministic: the weights are a file in the repository
(``benchmarks/data/classifier.json``), trained by ``scripts/train_screen.py`` on the team's own
labelled data (``training_set``) and nothing else; nothing is learnt at run time.

Trained by Newton's method (iteratively reweighted least squares) with an L2 penalty, from zeros:
the same data gives the same weights on every machine. The two classes are weighted to count
equally, so the threshold reads as "how sure", not "how common attacks were in training".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

WEIGHTS = Path(__file__).resolve().parent / "data" / "classifier.json"


@dataclass(frozen=True)
class LinearScreen:
    weights: np.ndarray  # (dimensions,)
    bias: float
    threshold: float  # block from this probability on
    embedder: str  # the model whose vectors it was trained on

    def probability(self, vector: np.ndarray) -> float:
        z = float(np.asarray(vector, dtype=np.float64) @ self.weights + self.bias)
        return float(1.0 / (1.0 + np.exp(-z)))

    def blocks(self, vector: np.ndarray) -> bool:
        return self.probability(vector) >= self.threshold


def load(path: Path = WEIGHTS) -> LinearScreen | None:
    """The shipped screen, or None when no weights were trained."""
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return LinearScreen(np.asarray(data["weights"], dtype=np.float64), float(data["bias"]),
                        float(data["threshold"]), data["embedder"])


def save(screen: LinearScreen, path: Path = WEIGHTS, **about) -> None:
    data = {"embedder": screen.embedder, "threshold": round(screen.threshold, 6), "bias": round(screen.bias, 8),
            "weights": [round(float(w), 8) for w in screen.weights], **about}
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def fit(vectors: np.ndarray, labels: np.ndarray, *, l2: float, iterations: int = 25) -> tuple[np.ndarray, float]:
    """Weights and bias of an L2-penalised logistic regression (the bias unpenalised), the two
    classes weighted equally."""
    x = np.hstack([np.asarray(vectors, dtype=np.float64), np.ones((len(vectors), 1))])
    y = np.asarray(labels, dtype=np.float64)
    positives = max(1.0, y.sum())
    sample = np.where(y == 1, len(y) / (2 * positives), len(y) / (2 * max(1.0, len(y) - positives)))
    penalty = np.full(x.shape[1], l2)
    penalty[-1] = 0.0
    beta = np.zeros(x.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        gradient = x.T @ (sample * (p - y)) + penalty * beta
        hessian = (x * (sample * p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-9:
            break
    return beta[:-1], float(beta[-1])


def threshold_for(probabilities: np.ndarray, labels: np.ndarray, *, false_positives: float) -> float:
    """The lowest threshold at which at most ``false_positives`` of the benign side is blocked."""
    benign = np.sort(np.asarray(probabilities)[np.asarray(labels) == 0])[::-1]
    allowed = int(np.floor(false_positives * len(benign)))
    return float(benign[allowed] + 1e-9) if allowed < len(benign) else 0.5
