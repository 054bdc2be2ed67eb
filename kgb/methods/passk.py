"""The passk method: up to k independent samples of the same prompt per operator.

Round r samples again only while no candidate of the operator is correct, as the
published Pass@5 baseline did (five rounds at temperature 0.8). Every round is in the
log (CompletionParsed.round), so pass@1 ... pass@k are all derived by the projections.
"""

from __future__ import annotations

from kgb.config import PasskConfig
from kgb.methods import NoCandidate, prompts
from kgb.methods.extraction import Attempt, no_candidate_reason, propose
from kgb.models import Message
from kgb.trial import TrialContext


class Passk:
    def __init__(self, cfg: PasskConfig):
        if cfg.k < 1:
            raise ValueError(f"method.k={cfg.k}: needs at least one round")
        self.cfg = cfg

    def solve(self, ctx: TrialContext) -> None:
        prompt = prompts.initial(ctx.problem)
        attempts: list[Attempt] = []
        for round in range(1, self.cfg.k + 1):
            completion = ctx.model.complete([Message("user", prompt.user)], system=prompt.system, temperature=self.cfg.temperature)
            attempts.append(propose(ctx, completion, round))
            evaluation = attempts[-1].evaluation
            if evaluation is not None and evaluation.verdict.correct:
                return
        if all(a.evaluation is None for a in attempts):
            raise NoCandidate(no_candidate_reason(attempts))
