"""iterative: up to `method.sessions` fresh sessions, each writing and checking one new
version. Between sessions the harness checks kernel.py, adds it to PERFORMANCE.md and puts
the best version so far back into kernel.py; it stops at `method.target_speedup`."""

from __future__ import annotations

from kgb.agents.config import IterativeConfig
from kgb.agents.harness import AgentRun, check_driver, protocol
from kgb.agents.ledger import Ledger, reaches, speed_text
from kgb.agents.nofollow import write_text
from kgb.trial import TrialContext


class Iterative:
    def __init__(self, cfg: IterativeConfig):
        check_driver(cfg)
        if cfg.sessions < 1:
            raise ValueError(f"method.sessions={cfg.sessions}: needs at least one session")
        self.cfg = cfg

    def text(self, session: int) -> str:
        return protocol("iterative", session=session, sessions=self.cfg.sessions, target=self.cfg.target_speedup)

    def solve(self, ctx: TrialContext) -> None:
        with AgentRun(ctx, self.cfg, "iterative", self.text(1)) as run:
            table = Ledger(run.workspace.root / "PERFORMANCE.md", "Versions checked by the harness",
                           ("session", "candidate", "status", "tests", "speedup"))
            for session in range(1, self.cfg.sessions + 1):
                if run.out_of_budget:
                    break
                run.session(run.first_prompt(self.text(session)))
                if run.out_of_budget:
                    break
                c = run.harness_check(f"session {session}")
                table.add(session, c.candidate, c.verdict.status.value, f"{c.tests_passed}/{c.tests_total}", speed_text(c))
                best = run.checker.best()
                if best is not None:
                    write_text(run.workspace.kernel, best.source)
                run.workspace.commit(f"session {session}")
                if reaches(best, self.cfg.target_speedup):
                    break
            run.finish()
