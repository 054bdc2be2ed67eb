"""One agent trial's machinery: the workspace, the check server, the budgets, sessions,
and the choice and judgement of the final kernel.

A method opens an `AgentRun` in its `solve`, runs one or more sessions under its
protocol (with its own steps between them: a harness check, a revert, a table), and ends
with `finish()`. The final kernel is, in order: the best candidate by the harness's own
checks (correct first, then speed), else the workspace's last kernel.py, else the last
fenced code block of a reply. FinalKernelChosen says which rule chose it; it is then
judged through ctx.evaluate on every case of the job, the ones the agent never saw too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from string import Template

from kgb.agents.baseline import baseline_logs, find_baseline
from kgb.agents.budget import Budget, agent_time_before
from kgb.agents.checks import Checked, Checker, CheckServer
from kgb.agents.cli import CliSession, find_cli
from kgb.agents.commands import check_hidden_from_agents
from kgb.agents.config import AgentConfig, AgentMethodConfig, Driver
from kgb.agents.loop import SessionOutcome, loop_session
from kgb.agents.nofollow import write_text
from kgb.agents.workspace import Workspace, task_text
from kgb.methods.extraction import extract
from kgb.tracking.events import (
    FinalKernelChosen,
    FinalRule,
    SessionFinished,
    SessionStarted,
    WorkspaceSnapshotted,
)
from kgb.trial import BudgetExhausted, TrialContext

PROTOCOLS = Path(__file__).parent / "protocols"


def check_driver(cfg: AgentMethodConfig) -> None:
    """Fail at build time, before any trial, on a driver this kgb cannot run, a budget no
    trial could work under, a `method.baseline` that holds no run, or where the agent's
    sandbox could not keep the known-good solutions from it."""
    if cfg.agent.driver not in set(Driver):
        raise ValueError(f"method.agent.driver={cfg.agent.driver}: choose one of {', '.join(Driver)}")
    check_budgets(cfg.agent)
    if cfg.baseline:
        baseline_logs(cfg.baseline)
    check_hidden_from_agents()
    if cfg.agent.driver != Driver.LOOP:
        find_cli(cfg.agent.driver)


def check_budgets(agent: AgentConfig) -> None:
    """A budget of zero turns, seconds or tokens ends every trial before the agent acts, and
    each would count as the method's failure: refused, naming the setting."""
    limits = (
        ("max_turns", agent.max_turns >= 1, "model calls per trial: give 1 or more"),
        ("wall_s", agent.wall_s > 0, "seconds per trial: give a positive number"),
        ("max_checks", agent.max_checks >= 0, "check-tool calls per trial: give 0 or more"),
        ("max_tokens", agent.max_tokens is None or agent.max_tokens >= 1,
         "tokens per trial: give 1 or more, or null for no limit"),
        ("max_cost_usd", agent.max_cost_usd is None or agent.max_cost_usd > 0,
         "dollars per trial: give a positive number, or null for no limit"),
        ("command_timeout_s", agent.command_timeout_s > 0, "seconds per command: give a positive number"),
        ("output_chars", agent.output_chars >= 1, "characters of output the agent is shown: give 1 or more"),
    )
    for name, ok, how in limits:
        if not ok:
            raise ValueError(f"method.agent.{name}={getattr(agent, name):g}: {how}")


def protocol(name: str, **values: object) -> str:
    """A protocol text (protocols/<name>.md) with its $placeholders filled."""
    return Template((PROTOCOLS / f"{name}.md").read_text()).substitute({k: str(v) for k, v in values.items()})


class AgentRun:
    def __init__(self, ctx: TrialContext, cfg: AgentMethodConfig, protocol_name: str, protocol_text: str,
                 on_check: Callable[[Checked], str] | None = None):
        self.ctx, self.cfg = ctx, cfg
        self.protocol_name, self.protocol_text = protocol_name, protocol_text
        self.budget = Budget(cfg.agent, carried_s=agent_time_before(ctx.prior))
        self.replies: list[str] = []  # every reply's text, for the fenced-block rule
        self.sessions = 0
        self.stop_when: Callable[[], str | None] = lambda: None  # the method's reason to end a session early
        kernel, origin = "", "empty kernel.py"
        if cfg.baseline:
            found = find_baseline(cfg.baseline, ctx.problem.op)
            if found is not None:
                kernel, origin = found.source, found.origin
            else:
                origin = f"no correct kernel of {ctx.problem.op} under {cfg.baseline}: empty kernel.py"
        self.start_kernel = kernel
        self.workspace = Workspace.create(ctx.problem, protocol_text, kernel, ctx.settings.device)
        if ctx.model is not None:
            ctx.model.trial_dir = str(self.workspace.trial_dir)
        self.checker = Checker(ctx, on_check)
        self.server = CheckServer(self.checker, self.workspace.socket, self.workspace.resolve)
        self.server.refusal = self.budget.take_check
        self.snapshot(f"start: {origin}")

    def __enter__(self) -> AgentRun:
        self.server.__enter__()
        # the agent's wall clock starts once its workspace is ready: setting one up took 4.6 s
        # of a 4 s budget on a loaded machine, time no agent could have used
        self.budget.started = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__()
        self.workspace.remove()

    def snapshot(self, reason: str) -> None:
        manifest, files = self.workspace.snapshot(self.ctx.blobs)
        self.ctx.emit(WorkspaceSnapshotted(job=self.ctx.job, manifest_blob=manifest, files=files, reason=reason))

    def stop_reason(self) -> str | None:
        return self.stop_when()

    def first_prompt(self, protocol_text: str | None = None) -> str:
        """The first user message of a session: its protocol (the trial's, unless given; it
        is also PROTOCOL.md), then the task (also TASK.md)."""
        text = self.protocol_text if protocol_text is None else protocol_text
        if protocol_text is not None:
            write_text(self.workspace.root / "PROTOCOL.md", text)
        return f"{text.strip()}\n\n{task_text(self.ctx.problem)}"

    def session(self, prompt: str, tools: bool = True, max_turns: int | None = None) -> SessionOutcome:
        """One session of the agent in the workspace; the workspace is snapshotted after it.
        Raises ProviderUnavailable where the provider was down through its retries."""
        self.sessions += 1
        ctx, n = self.ctx, self.sessions
        ctx.emit(SessionStarted(job=ctx.job, session=n, driver=self.cfg.agent.driver, protocol=self.protocol_name,
                                prompt_blob=ctx.blobs.put(prompt)))
        system = protocol("system")
        turns = max_turns if max_turns is not None else self.cfg.agent.max_turns
        report = None
        if self.cfg.agent.driver == Driver.LOOP:
            outcome = loop_session(self, n, prompt, system, tools, turns)
        else:
            cli = CliSession(self, n, prompt, system, tools, turns)
            outcome = cli.run_cli()
            report = cli.report_blob
        ctx.emit(SessionFinished(job=ctx.job, session=n, end=outcome.end, reason=outcome.reason, turns=outcome.turns,
                                 cli_report_blob=report))
        self.snapshot(f"session {n} ended ({outcome.end.value})")
        if outcome.outage is not None:
            raise outcome.outage
        return outcome

    def harness_check(self, origin: str) -> Checked:
        """The harness checks kernel.py itself (between sessions); not counted against the agent."""
        checked, _ = self.checker.check(self.workspace.read_kernel(), f"harness: {origin}", origin)
        return checked

    @property
    def out_of_budget(self) -> bool:
        return self.budget.exhausted(self.ctx.model.used) is not None

    def finish(self) -> None:
        """Choose the final kernel, judge it on every case; a budget reached ends the trial as such."""
        from kgb.methods import NoCandidate

        self.snapshot("final")
        rule, reason, source, checked = self.choose_final()
        self.ctx.emit(FinalKernelChosen(job=self.ctx.job, rule=rule, reason=reason, checked=checked,
                                        source_blob=self.ctx.blobs.put(source) if source else None))
        if source:
            self.ctx.evaluate(source, parents=(checked,) if checked else (), origin=f"final kernel ({rule.value})")
        if self.budget.reached:
            raise BudgetExhausted(self.budget.reached)
        if not source:
            raise NoCandidate(reason)

    def choose_final(self) -> tuple[FinalRule, str, str, str | None]:
        best = self.checker.best()
        if best is not None:
            speed = f", speedup {best.verdict.speedup:.3g}" if best.verdict.speedup else ""
            return FinalRule.BEST_CHECK, f"the best correct check, {best.candidate}{speed}", best.source, best.candidate
        kernel = self.workspace.read_kernel()
        checked = f"{len(self.checker.checks)} check(s), none correct" if self.checker.checks else "no check"
        if kernel.strip():
            return FinalRule.WORKSPACE, f"{checked}: the workspace's last kernel.py", kernel, None
        for text in reversed(self.replies):
            found = extract(text, self.ctx.problem.entry_points, truncated=False)
            if found.code is not None:
                return FinalRule.FENCED_BLOCK, f"{checked}, kernel.py empty: the last fenced block ({found.reason})", found.code, None
        return FinalRule.NONE, f"{checked}, kernel.py empty and no code in {len(self.replies)} repl(ies)", "", None
