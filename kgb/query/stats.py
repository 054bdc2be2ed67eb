"""Confidence intervals for the paper's tables: Wilson for accuracy (a share of
operators), a percentile bootstrap for the geometric mean speedup."""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959963984540054
BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_SEED = 0  # a table is reproducible: the same store gives the same intervals


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def wilson(successes: int, n: int, z: float = Z95) -> Interval | None:
    """The Wilson score interval of a binomial share; None without trials. Unlike the
    normal approximation it stays inside [0, 1] and is sound at 0/n and n/n."""
    if n == 0:
        return None
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return Interval(max(0.0, centre - half), min(1.0, centre + half))


def bootstrap_geomean(values: list[float], samples: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED) -> Interval | None:
    """95% percentile bootstrap interval of the geometric mean, resampling operators;
    None with fewer than two values (one value has no spread to resample)."""
    if len(values) < 2:
        return None
    import numpy as np

    logs = np.log(np.asarray(values, dtype=float))
    rng = np.random.default_rng(seed)
    means = logs[rng.integers(0, len(logs), size=(samples, len(logs)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Interval(float(np.exp(low)), float(np.exp(high)))
