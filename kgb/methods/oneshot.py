"""The oneshot method: one completion per operator (Pass@1 at temperature 0)."""

from __future__ import annotations

from kgb.config import OneshotConfig
from kgb.methods import NoCandidate, prompts
from kgb.methods.extraction import no_candidate_reason, propose
from kgb.models import Message
from kgb.trial import TrialContext


class Oneshot:
    def __init__(self, cfg: OneshotConfig):
        self.cfg = cfg

    def solve(self, ctx: TrialContext) -> None:
        prompt = prompts.initial(ctx.problem)
        completion = ctx.model.complete([Message("user", prompt.user)], system=prompt.system, temperature=self.cfg.temperature)
        attempt = propose(ctx, completion, round=1)
        if attempt.evaluation is None:
            raise NoCandidate(no_candidate_reason([attempt]))
