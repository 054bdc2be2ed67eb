"""`agent.driver=loop`: kgb's own tool-use loop over the model wrapper.

A session is a conversation: the model replies, its tool calls are run in the workspace
and their results are the next user message, until it replies without calling a tool,
the session's turn limit, a budget, or the method's protocol says stop. Every model call
is a ModelCalled (through ctx.model), every turn a TurnTaken, every tool call a
ToolCalled with its input and result as blobs.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kgb.agents.budget import WALL_SPENT
from kgb.agents.tools import TOOLS, ToolOutput, call_tool
from kgb.models import Message, ModelCallFailed, ProviderUnavailable
from kgb.models.content import Block, Text, ToolResult
from kgb.tracking.events import SessionEnd, ToolCalled, TurnTaken
from kgb.trial import BudgetExhausted

if TYPE_CHECKING:
    from kgb.agents.harness import AgentRun


@dataclass(frozen=True)
class SessionOutcome:
    end: SessionEnd
    reason: str
    turns: int
    # the provider was down through its retries: AgentRun.session raises it once the session
    # is recorded, so that the trial ends as infra_error (retried) instead of judging what an
    # outage left, or nothing
    outage: ProviderUnavailable | None = None


def loop_session(run: AgentRun, session: int, prompt: str, system: str, tools: bool, max_turns: int) -> SessionOutcome:
    ctx = run.ctx
    messages = [Message("user", prompt)]
    turn = 0
    while True:
        if reason := run.budget.exhausted(ctx.model.used):
            return SessionOutcome(SessionEnd.BUDGET, reason, turn)
        if turn >= max_turns:
            return SessionOutcome(SessionEnd.TURNS, f"the session's limit of {max_turns} turn(s)", turn)
        try:
            completion = ctx.model.complete(messages, system=system, temperature=run.cfg.temperature,
                                            tools=TOOLS if tools else (), deadline=run.budget.call_deadline)
        except BudgetExhausted as e:
            run.budget.reached = run.budget.reached or str(e)
            return SessionOutcome(SessionEnd.BUDGET, str(e), turn)
        except ModelCallFailed as e:
            return SessionOutcome(SessionEnd.ERROR, str(e), turn, e if isinstance(e, ProviderUnavailable) else None)
        turn += 1
        run.budget.turns += 1
        run.replies.append(completion.text)
        uses = completion.tool_uses if tools else ()
        ctx.emit(TurnTaken(job=ctx.job, session=session, turn=turn, request_hash=completion.request_hash,
                           tool_calls=len(uses)))
        content: list[Block] = [Text(completion.text)] if completion.text else []
        content += uses
        # an API refuses an empty assistant turn, so an empty reply is shown as such
        messages.append(Message("assistant", tuple(content) if uses else (completion.text or "(empty reply)")))
        if not uses:
            return SessionOutcome(SessionEnd.DONE, "the agent replied without calling a tool", turn)
        results = []
        for use in uses:
            started = time.perf_counter()
            out = answer_call(run, use.name, use.input, use.id)
            ctx.emit(ToolCalled(
                job=ctx.job, session=session, turn=turn, call_id=use.id, tool=use.name,
                input_blob=ctx.blobs.put(json.dumps(use.input, sort_keys=True)), result_blob=ctx.blobs.put(out.text),
                is_error=out.is_error, duration_s=time.perf_counter() - started,
            ))
            results.append(ToolResult(use.id, out.text, out.is_error))
        messages.append(Message("user", tuple(results)))
        if reason := run.stop_reason():
            return SessionOutcome(SessionEnd.STOPPED, reason, turn)


def answer_call(run: AgentRun, name: str, args: dict, call_id: str) -> ToolOutput:
    """The tool's answer; past the wall clock, WALL_SPENT without running it: every call of a
    reply once ran past the clock (kgb.agents.budget), and the session ends at the next turn."""
    if run.budget.remaining_s() <= 0:
        return ToolOutput(WALL_SPENT, is_error=True)
    return call_tool(run, name, args, call_id)
