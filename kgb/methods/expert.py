"""The expert method: each operator's own solution.py, judged like any candidate.

Its results are the dataset's self-test ("every solution passes its own spec") and a
reference point for speed.
"""

from __future__ import annotations

from kgb.config import ExpertConfig
from kgb.trial import TrialContext


class Expert:
    def __init__(self, cfg: ExpertConfig):
        self.cfg = cfg

    def solve(self, ctx: TrialContext) -> None:
        ctx.evaluate(ctx.known_solution(), origin="solution.py")
