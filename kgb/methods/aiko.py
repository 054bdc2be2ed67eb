"""aiko (alias ako4all): one session under the iteration protocol. The harness checks the
starting kernel (iteration 0), and on every check of the agent it appends the iteration's
row to ITERATIONS.md, commits the workspace, and restores kernel.py to the best iteration
when the check is a regression (not correct, or slower than the best), saying so in the
check's note. The session ends at `method.target_speedup` or after `method.iterations`
checks. Profiling hints are given only where a profiler exists on the chip."""

from __future__ import annotations

from dataclasses import dataclass

from kgb.agents.checks import Checked
from kgb.agents.config import AikoConfig
from kgb.agents.harness import AgentRun, check_driver, protocol
from kgb.agents.ledger import Ledger, improves, profiler_hint, reaches, speed_text
from kgb.agents.workspace import Workspace
from kgb.trial import TrialContext


@dataclass
class Kept:
    iteration: int
    check: Checked
    commit: str


class Iterations:
    """The harness's side of the protocol: one row, one commit, maybe a restore per check."""

    def __init__(self, ws: Workspace, limit: int, target: float):
        self.ws, self.limit, self.target = ws, limit, target
        self.table = Ledger(ws.root / "ITERATIONS.md", "Iterations", ("iteration", "candidate", "status", "tests", "speedup", "note"))
        self.next = 0  # the number of the next iteration
        self.best: Kept | None = None

    def skip_baseline(self) -> None:
        self.table.add(0, "-", "empty kernel.py", "-", "-", "nothing to check yet")
        self.next = 1

    def on_check(self, c: Checked) -> str:
        i, ws, best = self.next, self.ws, self.best
        self.next += 1
        if improves(c, best.check if best else None, 0.0):
            self.best = Kept(i, c, ws.commit(f"iteration {i}: {c.verdict.status.value}"))
            note = "best so far"
        elif best is not None and (not c.verdict.correct or (c.verdict.speedup or 0) < (best.check.verdict.speedup or 0)):
            ws.commit(f"iteration {i}: regression")
            ws.restore_kernel(best.commit)
            note = f"regression: kernel.py restored to iteration {best.iteration} ({best.check.candidate})"
        else:
            ws.commit(f"iteration {i}: {c.verdict.status.value}")
            note = "no faster than the best" if best is not None else "not correct yet"
        self.table.add(i, c.candidate, c.verdict.status.value, f"{c.tests_passed}/{c.tests_total}", speed_text(c), note)
        ws.commit(f"ITERATIONS.md: iteration {i}")
        if reason := self.stop():
            note += f"; {reason}: stop now"
        return note

    def stop(self) -> str | None:
        if self.best is not None and reaches(self.best.check, self.target):
            return f"target reached at iteration {self.best.iteration}"
        if self.next > self.limit:
            return f"{self.limit} iterations spent"
        return None


class Aiko:
    def __init__(self, cfg: AikoConfig):
        check_driver(cfg)
        if cfg.iterations < 1:
            raise ValueError(f"method.iterations={cfg.iterations}: needs at least one iteration")
        self.cfg = cfg

    def solve(self, ctx: TrialContext) -> None:
        hint = profiler_hint(ctx.settings.device)
        profiling = "" if hint.startswith("no profiler") else f"\nProfiling: {hint}; use it on the best iteration to find what limits it.\n"
        text = protocol("aiko", iterations=self.cfg.iterations, target=self.cfg.target_speedup, profiling=profiling)
        with AgentRun(ctx, self.cfg, "aiko", text) as run:
            iterations = Iterations(run.workspace, self.cfg.iterations, self.cfg.target_speedup)
            run.checker.on_check = iterations.on_check
            if run.start_kernel.strip():
                run.harness_check("iteration 0")
            else:
                iterations.skip_baseline()
            run.stop_when = iterations.stop
            if iterations.stop() is None:
                run.session(run.first_prompt())
            run.finish()
