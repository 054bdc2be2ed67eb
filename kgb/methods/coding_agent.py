"""claude_code and opencode: one coding-agent session in the trial's workspace.

`method.mode=answer`: one reply without tools, whose fenced kernel is the answer.
`method.mode=agent`: write kernel.py, check, fix until it passes, then optimise.
Which program runs the session is `method.agent.driver`: the CLI each method is named after
(conf/method/claude_code.yaml, opencode.yaml), or `loop`, kgb's own, which a result's method
label then names.
"""

from __future__ import annotations

from kgb.agents.config import CodingAgentConfig, Mode
from kgb.agents.harness import AgentRun, check_driver, protocol
from kgb.trial import TrialContext


class CodingAgent:
    def __init__(self, cfg: CodingAgentConfig):
        check_driver(cfg)
        if cfg.mode not in set(Mode):
            raise ValueError(f"method.mode={cfg.mode}: choose answer or agent")
        self.cfg = cfg

    def solve(self, ctx: TrialContext) -> None:
        name = "answer" if self.cfg.mode == Mode.ANSWER else "coding_agent"
        with AgentRun(ctx, self.cfg, name, protocol(name)) as run:
            if self.cfg.mode == Mode.ANSWER:
                run.session(run.first_prompt(), tools=False, max_turns=1)
            else:
                run.session(run.first_prompt())
            run.finish()
