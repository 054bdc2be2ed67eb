"""The budgets the harness enforces on one agent trial: wall clock, turns, tokens, cost
and checks. The first limit reached is sticky: its reason ends the trial (TrialEnd.BUDGET)
after the work so far is salvaged.

The wall clock holds within one model reply too (it once did not: every tool call of a
reply ran past it, each command given at least 1 s and a check no cap: wall_s=3 and one
reply of six `sleep 2` took 8.8 s). Past it, every remaining call of the reply is answered
with WALL_SPENT without running (kgb.agents.loop.answer_call), a command gets at most the time
left, and a check (the tool or ./check) is refused. A check begun before it finishes: a judge
is not killed mid-verdict, and the source it judges was read from the workspace within the
budget, so its verdict adds no work of the agent's; the harness waits for it before it
chooses the final kernel (Checker.best)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from kgb.agents.config import AgentConfig
from kgb.usage import Usage

WALL_SPENT = "the wall-clock budget is spent; no more tool calls run"


@dataclass
class Budget:
    cfg: AgentConfig
    started: float = field(default_factory=time.perf_counter)
    turns: int = 0
    checks: int = 0
    reached: str | None = None  # the first limit reached, in words

    def remaining_s(self) -> float:
        return self.cfg.wall_s - (time.perf_counter() - self.started)

    @property
    def deadline(self) -> float:
        """The wall clock's end on time.perf_counter's clock: a model call in flight is cut there."""
        return self.started + self.cfg.wall_s

    def exhausted(self, used: Usage) -> str | None:
        """The reason the trial may go no further, or None. `used`: the trial's tokens so far."""
        if self.reached is None:
            self.reached = self._limit(used)
        return self.reached

    def _limit(self, used: Usage) -> str | None:
        c = self.cfg
        if self.remaining_s() <= 0:
            return f"agent wall clock reached: {c.wall_s:g} s"
        if self.turns >= c.max_turns:
            return f"agent turn budget reached: {self.turns} of {c.max_turns} turns"
        if c.max_tokens is not None and used.total_tokens >= c.max_tokens:
            return f"agent token budget reached: {used.total_tokens} of {c.max_tokens} tokens used"
        if c.max_cost_usd is not None and used.cost_usd >= c.max_cost_usd:
            return f"agent cost budget reached: ${used.cost_usd:.4f} of ${c.max_cost_usd:.4f} spent"
        return None

    def take_check(self) -> str | None:
        """Count one check of the agent; the reason it is refused where the budget is spent:
        its checks, or the wall clock (a check asked for past it is not judged)."""
        if self.remaining_s() <= 0:
            self.reached = self.reached or f"agent wall clock reached: {self.cfg.wall_s:g} s"
            return self.reached
        if self.checks >= self.cfg.max_checks:
            self.reached = self.reached or f"agent check budget reached: {self.checks} of {self.cfg.max_checks} checks"
            return self.reached
        self.checks += 1
        return None
