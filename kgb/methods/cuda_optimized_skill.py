"""cuda_optimized_skill: optimise-only from a passing baseline. Each session writes
PROPOSAL.md (the bottleneck, the change, a `tags:` line of strategies) before it edits,
then checks; the harness checks the result, records the tags and the outcome in
STRATEGIES.md (the trial's strategy memory, read by the next session), and restores the
best version when a session's is wrong or slower. Without a correct baseline
(`method.baseline`), the first session makes one under the coding-agent protocol."""

from __future__ import annotations

import re

from kgb.agents.checks import Checked
from kgb.agents.config import CudaOptimizedSkillConfig
from kgb.agents.harness import AgentRun, check_driver, protocol
from kgb.agents.ledger import Ledger, improves, profiler_hint, reaches, speed_text
from kgb.agents.nofollow import read_text, write_text
from kgb.trial import TrialContext


def proposal_tags(text: str) -> str:
    """The strategies a proposal names on its `tags:` line ("none" if it has no such line)."""
    match = re.search(r"(?im)^\W*tags\W*:\s*(.+)$", text)
    tags = [t.strip().lower() for t in match.group(1).split(",") if t.strip()] if match else []
    return ", ".join(tags) or "none"


class CudaOptimizedSkill:
    def __init__(self, cfg: CudaOptimizedSkillConfig):
        check_driver(cfg)
        if cfg.sessions < 1:
            raise ValueError(f"method.sessions={cfg.sessions}: needs at least one session")
        self.cfg = cfg

    def text(self, session: int, device: str) -> str:
        return protocol("cuda_optimized_skill", session=session, sessions=self.cfg.sessions,
                        target=self.cfg.target_speedup, profiling=profiler_hint(device))

    def solve(self, ctx: TrialContext) -> None:
        device = ctx.settings.device
        with AgentRun(ctx, self.cfg, "cuda_optimized_skill", self.text(1, device)) as run:
            ws = run.workspace
            memory = Ledger(ws.root / "STRATEGIES.md", "Strategy memory",
                            ("session", "tags", "candidate", "status", "speedup", "outcome"))
            best: Checked | None = None
            if run.start_kernel.strip():
                c = run.harness_check("baseline")
                best = c if c.verdict.correct else None
            if best is None:  # optimise-only needs a passing version first
                run.session(run.first_prompt(protocol("coding_agent")))
                best = run.checker.best()
                if best is not None:
                    write_text(ws.kernel, best.source)
            best_commit = ws.commit("baseline")
            for session in range(1, self.cfg.sessions + 1):
                if best is None or reaches(best, self.cfg.target_speedup) or run.out_of_budget:
                    break
                (ws.root / "PROPOSAL.md").unlink(missing_ok=True)
                run.session(run.first_prompt(self.text(session, device)))
                if run.out_of_budget:
                    break
                proposal = read_text(ws.root / "PROPOSAL.md")
                tags = proposal_tags(proposal) if proposal is not None else "no proposal written"
                commit = ws.commit(f"session {session}")
                c = run.harness_check(f"session {session}")
                if improves(c, best, 0.0):
                    best, best_commit, outcome = c, commit, "kept: the new best"
                else:
                    ws.restore_kernel(best_commit)
                    outcome = f"reverted to {best.candidate}"
                memory.add(session, tags, c.candidate, c.verdict.status.value, speed_text(c), outcome)
                ws.commit(f"session {session}: {outcome}")
            run.finish()
