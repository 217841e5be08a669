"""A calibrated decision over several of a pair's scores: a multinomial logistic model with an abstain region.

The margin methods (`judge._decide`) read one or two numbers against fitted thresholds. This reads
a pair's feature vector (`judge.features`: the labels question's supports-vs-contradicts and
unrelated log-odds, the two yes/no log-odds) with a linear model of the three relations, fitted by
Newton's method with an L2 penalty, and answers a relation only where its score beats both others
by `threshold` (log-odds); anything else abstains. With `slack` (another llama.cpp build, see
`judge.DRIFT_SLACK`) every feature may have moved by that much, so the lead must hold in the worst
case: it is reduced by slack times the L1 norm of the two classes' weight difference.

Pure numpy, no model calls. Bench only (bench/judge_wave16.py): not what `gitmem model check` fits (bench/RESULTS.md "Reflect judge, wave 16").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

CLASSES = ("supports", "contradicts", "unrelated")  # the rows of `Linear.weights` (judge.LABELS' order)
# L2 penalty on the standardized weights (not the intercepts): the fit has a few hundred pairs.
PENALTY = 1.0


class Linear(NamedTuple):
    """One linear score per relation: weights[k] . x + bias[k] on the raw features (the
    standardization is folded in when fitting, so a stored model reads raw scores)."""

    weights: tuple[tuple[float, ...], ...]  # len(CLASSES) rows of one weight per feature
    bias: tuple[float, ...]
    threshold: float  # how far (log-odds) the answered relation must lead both others


def logits(model: Linear, x: Sequence[float]) -> list[float]:
    return [sum(w * v for w, v in zip(row, x)) + b for row, b in zip(model.weights, model.bias)]


def lead(model: Linear, x: Sequence[float], k: int, slack: float = 0.0) -> float:
    """How far relation `k` leads the best other one at `x`, less what `slack` on every feature could take away."""
    z = logits(model, x)
    return min(z[k] - z[j] - slack * sum(abs(a - b) for a, b in zip(model.weights[k], model.weights[j]))
               for j in range(len(z)) if j != k)


def decide(model: Linear, x: Sequence[float], slack: float = 0.0) -> tuple[str, float]:
    """(relation, how far past the threshold): "supports" or "contradicts" when it leads by more
    than the threshold, else ("unrelated", 0.0)."""
    for k in (0, 1):
        past = lead(model, x, k, slack) - model.threshold
        if past > 0:
            return CLASSES[k], past
    return "unrelated", 0.0


def fit(xs: Sequence[Sequence[float]], ys: Sequence[int], penalty: float = PENALTY, iterations: int = 50) -> Linear:
    """The multinomial logistic model of labels `ys` (indices into CLASSES) on features `xs`, by
    Newton's method on the standardized features (unrelated's row fixed at 0); threshold 0."""
    x = np.asarray(xs, dtype=float)
    n, d = x.shape
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((n, 1))])
    y = np.zeros((n, 3))
    y[np.arange(n), np.asarray(ys)] = 1.0
    k = 2  # free rows: supports, contradicts
    w = np.zeros((k, d + 1))
    reg = np.full(d + 1, penalty)
    reg[-1] = 1e-6  # intercepts barely penalized
    for _ in range(iterations):
        a = np.hstack([z @ w.T, np.zeros((n, 1))])
        a -= a.max(axis=1, keepdims=True)
        p = np.exp(a)
        p /= p.sum(axis=1, keepdims=True)
        grad = ((p[:, :k] - y[:, :k]).T @ z) + reg * w
        hess = np.zeros((k * (d + 1), k * (d + 1)))
        for i in range(k):
            for j in range(k):
                c = p[:, i] * ((i == j) - p[:, j])
                hess[i * (d + 1):(i + 1) * (d + 1), j * (d + 1):(j + 1) * (d + 1)] = (z * c[:, None]).T @ z
        hess += np.diag(np.tile(reg, k))
        step = np.linalg.solve(hess, grad.reshape(-1)).reshape(k, d + 1)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    raw = w[:, :d] / scale
    bias = w[:, d] - raw @ mean
    weights = tuple(tuple(float(v) for v in row) for row in raw) + (tuple(0.0 for _ in range(d)),)
    return Linear(weights, tuple(float(b) for b in bias) + (0.0,), 0.0)

