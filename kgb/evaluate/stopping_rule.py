"""When a measurement stops repeating a call (`kgb.evaluate.timing.measure`): once the
median's 95% confidence interval is within CI_HALF_WIDTH of it, over at least MIN_REPEATS
samples, or once the call's repetitions reach about TURN_BUDGET_US, whichever comes first.
A slow call is steady: ten samples of a 50 ms GEMM say what a hundred say, and the turn,
which every judge of the GPU waits for, is freed sooner.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable

MIN_REPEATS = 20
# The fewest samples of a call whose estimate is LONG_CALL_US or more (judge v27): its
# repetitions spread far less than a short call's, and at 20 the calls of 1-12.5 ms held some
# 13 s of a first job's turns on the H200 (sessions 38-47, estimated from the jobs' latencies)
# for a median that ten samples already bound within 1%. Ten is still enough for the rule's
# interval ([x(2), x(9)] of ten ordered samples covers the median with probability 0.98).
LONG_CALL_US = 1000.0
LONG_CALL_MIN_REPEATS = 10
# Of the median, the issue's "within 1%" (judge v19; 0.5% before). Two sweeps' medians each
# settled this far apart by chance over 2% in under 1% of cases, where what moves a case by
# more between sweeps is not sampling (docs/gpu-results.md, session 37); at 0.5%, 477 of the
# 1182 measurements of a sweep on the H200 ran past 40 repetitions (30 s of the 77 s its turns
# measured), most of them calls of 30-300 us whose repetitions' p20-p80 spread 1-3%.
CI_HALF_WIDTH = 0.01
# A call's measurement in the turn is kept to about this much, whatever `repeats` says: on the
# H200 (session 19) one turn timed a Python reference of a second or two a call fifteen
# times, 29 s during which every other judge's GPU work waited; at 0.5 s (judges up to v18),
# 73 measurements of a sweep (session 37) that took over 0.3 s each held 39 s of its turns.
TURN_BUDGET_US = 250_000.0
LONG_CALL_REPEATS = 3  # the fewest repetitions of a call, however long (5 up to judge v18)


def center(samples: list[float]) -> tuple[float, float]:
    """The median of the samples and their spread, (p80 - p20) / median."""
    ordered = sorted(samples)
    median = statistics.median(ordered)
    return median, (quantile(ordered, 0.8) - quantile(ordered, 0.2)) / median if median else 0.0


def quantile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def repetitions(estimate_us: float, repeats: int) -> int:
    """How many timed calls a measurement may take: `repeats`, fewer for a long call (about
    TURN_BUDGET_US in all), never fewer than LONG_CALL_REPEATS unless `repeats` says so."""
    return max(min(repeats, LONG_CALL_REPEATS), min(repeats, int(TURN_BUDGET_US / max(estimate_us, 1.0))))


def fewest(estimate_us: float) -> int:
    """The fewest samples a measurement takes before its median may count as settled."""
    return LONG_CALL_MIN_REPEATS if estimate_us >= LONG_CALL_US else MIN_REPEATS


def until_settled(sample: Callable[[int], list[float]], repeats: int, least: int = MIN_REPEATS) -> list[float]:
    """Samples in batches until the median has settled (`settled`, over at least `least`)
    or `repeats` are taken."""
    samples = sample(min(repeats, least))
    while len(samples) < repeats and not settled(samples, least):
        samples += sample(min(10, repeats - len(samples)))
    return samples


def settled(samples: list[float], least: int = MIN_REPEATS) -> bool:
    """Whether the median's 95% confidence interval (order statistics n/2 -+ 0.98 sqrt(n))
    is within CI_HALF_WIDTH of it, over at least `least` samples."""
    n = len(samples)
    if n < least:
        return False
    ordered = sorted(samples)
    low = ordered[max(0, math.floor(n / 2 - 0.98 * math.sqrt(n)))]
    high = ordered[min(n - 1, math.ceil(n / 2 + 0.98 * math.sqrt(n)))]
    median = statistics.median(ordered)
    return median > 0 and (high - low) / 2 <= CI_HALF_WIDTH * median
