"""The refine method: a conversation in which the model sees the evaluator's verdict on
its last reply (compile log, first mismatching case with its errors, integrity reasons,
speedup) and answers with a new module. Every candidate stays in the trial; the best one
is chosen by the projections, not here.
"""

from __future__ import annotations

from kgb.config import RefineConfig
from kgb.methods import NoCandidate, prompts
from kgb.methods.extraction import Attempt, no_candidate_reason, propose
from kgb.models import Message
from kgb.trial import TrialContext


class Refine:
    def __init__(self, cfg: RefineConfig):
        if cfg.rounds < 1:
            raise ValueError(f"method.rounds={cfg.rounds}: needs at least one round")
        self.cfg = cfg

    def solve(self, ctx: TrialContext) -> None:
        prompt = prompts.initial(ctx.problem)
        messages = [Message("user", prompt.user)]
        attempts: list[Attempt] = []
        parent: tuple[str, ...] = ()
        for round in range(1, self.cfg.rounds + 1):
            completion = ctx.model.complete(messages, system=prompt.system, temperature=self.cfg.temperature)
            attempt = propose(ctx, completion, round, parents=parent)
            attempts.append(attempt)
            if attempt.evaluation is not None:
                parent = (attempt.evaluation.candidate,)
                if attempt.evaluation.verdict.correct and self.cfg.until_correct:
                    return
            # an API refuses an empty assistant turn, so an empty reply is shown as such
            messages += [
                Message("assistant", completion.text or "(empty reply)"),
                Message("user", prompts.feedback(attempt, keep_improving=not self.cfg.until_correct)),
            ]
        if all(a.evaluation is None for a in attempts):
            raise NoCandidate(no_candidate_reason(attempts))
