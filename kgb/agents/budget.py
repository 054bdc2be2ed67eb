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
chooses the final kernel (Checker.best).

A resumed trial's attempt replays the earlier ones: their model calls are answered from the
log at once, their checks' verdicts taken from it, and only their commands run again. Its
clock once started from zero all the same, so the model's and the judge's time of every
earlier attempt came back to it: a trial killed at 25 of its 30 minutes had some 50 minutes of
agent work. Now the replay ends at the attempt's first call sent to the provider, and from
there its clock reads the earlier attempts' agent time plus its own since then
(`agent_time_before`, `Budget.call_deadline`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from kgb.agents.config import AgentConfig
from kgb.tracking.events import Event, ModelCalled, TrialStarted
from kgb.usage import Usage

WALL_SPENT = "the wall-clock budget is spent; no more tool calls run"


@dataclass
class Budget:
    cfg: AgentConfig
    started: float = field(default_factory=time.perf_counter)
    turns: int = 0
    checks: int = 0
    reached: str | None = None  # the first limit reached, in words
    # a resumed attempt's earlier attempts' agent time, charged once its replay ends (None: the
    # trial's first attempt, or the replay over)
    carried_s: float | None = None

    def remaining_s(self) -> float:
        return self.cfg.wall_s - (time.perf_counter() - self.started)

    def call_deadline(self) -> float:
        """Where a model call about to be sent to the provider (not one answered from the log)
        is cut, on time.perf_counter's clock. The first such call of a resumed attempt ends
        its replay: the clock then reads the earlier attempts' agent time, and runs on."""
        if self.carried_s is not None:
            self.started, self.carried_s = time.perf_counter() - self.carried_s, None
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


def agent_time_before(prior: list[Event]) -> float | None:
    """The agent time the earlier attempts of a trial spent, as their clocks read at their
    last event (None where there was no earlier attempt). An attempt's clock counts from its
    first call sent to the provider (its first ModelCalled, less that call's latency), before
    which it replayed the attempts before it, plus what those had spent; one that sent no call
    spent nothing new."""
    attempts: list[list[Event]] = []
    for event in prior:
        if isinstance(event, TrialStarted):
            attempts.append([])
        elif attempts:
            attempts[-1].append(event)
    if not attempts:
        return None
    spent = 0.0
    for events in attempts:
        sent = next((e for e in events if isinstance(e, ModelCalled)), None)
        if sent is not None:
            spent += max(events[-1].ts - (sent.ts - sent.latency_s), 0.0)
    return spent
