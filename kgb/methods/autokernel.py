"""autokernel: keep-or-revert experiments. Each experiment is a short session that makes
one focused edit; the harness commits it and checks it, keeps it only if it is correct
and faster than the best kept version by `method.min_gain`, else resets kernel.py to that
version. It stops at `method.target_speedup`, after `method.plateau` experiments in a row
that were not kept, after `method.experiments`, or at a budget. While no version is
correct there is nothing to protect, so an experiment's work is kept for the next one."""

from __future__ import annotations

from kgb.agents.checks import Checked
from kgb.agents.config import AutokernelConfig
from kgb.agents.harness import AgentRun, check_driver, protocol
from kgb.agents.ledger import Ledger, improves, reaches, speed_text
from kgb.trial import TrialContext


class Autokernel:
    def __init__(self, cfg: AutokernelConfig):
        check_driver(cfg)
        if cfg.experiments < 1 or cfg.plateau < 1:
            raise ValueError("method.experiments and method.plateau must be at least 1")
        self.cfg = cfg

    def text(self, experiment: int) -> str:
        c = self.cfg
        return protocol("autokernel", experiment=experiment, experiments=c.experiments, min_gain_pct=f"{c.min_gain * 100:g}",
                        target=c.target_speedup, plateau=c.plateau)

    def solve(self, ctx: TrialContext) -> None:
        with AgentRun(ctx, self.cfg, "autokernel", self.text(1)) as run:
            ws = run.workspace
            log = Ledger(ws.root / "EXPERIMENTS.md", "Experiments", ("experiment", "candidate", "status", "speedup", "outcome"))
            best: Checked | None = None
            best_commit = ws.commit("start")
            if run.start_kernel.strip():
                c = run.harness_check("baseline")
                if c.verdict.correct:
                    best = c
                log.add(0, c.candidate, c.verdict.status.value, speed_text(c), "baseline")
            not_kept = 0
            for experiment in range(1, self.cfg.experiments + 1):
                if reaches(best, self.cfg.target_speedup) or not_kept >= self.cfg.plateau or run.out_of_budget:
                    break
                run.session(run.first_prompt(self.text(experiment)))
                if run.out_of_budget:
                    break
                commit = ws.commit(f"experiment {experiment}")
                c = run.harness_check(f"experiment {experiment}")
                if improves(c, best, self.cfg.min_gain):
                    best, best_commit, not_kept, outcome = c, commit, 0, "kept"
                elif best is None:
                    not_kept, outcome = not_kept + 1, "not correct; kept as no version is correct yet"
                else:
                    ws.restore_kernel(best_commit)
                    not_kept, outcome = not_kept + 1, f"reverted to {best.candidate}"
                log.add(experiment, c.candidate, c.verdict.status.value, speed_text(c), outcome)
                ws.commit(f"experiment {experiment}: {outcome}")
            run.finish()
