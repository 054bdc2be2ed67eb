"""The view of an agent trial, folded from its events: sessions, turns, tool calls, the
trajectory of checks, the final kernel's rule, the workspace's final files, and a readable
transcript. The MLflow projection asks for it per trial (`agent_view(t.events)`; None for
trials of other methods) and writes what it returns: metrics, the speedup of each check
as a metric history (so the MLflow UI plots the trajectory), and artifacts.

A resumed trial logs its sessions again (each attempt starts over, answered from the
log); the view shows the last attempt's, which holds the whole story of the final kernel,
with what its replay took from earlier attempts rather than logging it again: their checks
(kgb.agents.checks) and their model calls' replies.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from kgb.models.content import tool_uses_from_json
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import (
    CandidateChecked,
    Event,
    FinalKernelChosen,
    ModelCalled,
    SessionFinished,
    SessionStarted,
    ToolCalled,
    TrialStarted,
    TurnTaken,
    WorkspaceSnapshotted,
)

TRANSCRIPT_CHARS = 3000  # of one tool input or result in the transcript
MESSAGE_CHARS = 500  # of a failed check's message


@dataclass(frozen=True)
class CheckPoint:
    """One check on the trajectory."""

    step: int  # 1-based
    candidate: str
    status: str
    correct: bool
    speedup: float | None
    by: str  # the tool call that asked for it, or `harness: <step>` for the harness's own
    message: str  # the verdict's message: why a check failed, where only the agent's own checks show it


@dataclass
class AgentView:
    sessions: list[SessionFinished] = field(default_factory=list)
    turns: int = 0
    tools: Counter[str] = field(default_factory=Counter)
    checks: list[CheckPoint] = field(default_factory=list)
    final: FinalKernelChosen | None = None
    workspace_blob: str | None = None  # the manifest of the last snapshot
    events: list[Event] = field(default_factory=list)  # the last attempt's, and the checks it replayed
    calls: dict[str, ModelCalled] = field(default_factory=dict)  # every attempt's, by request hash

    def metrics(self) -> dict[str, float]:
        return {
            "agent_sessions": len(self.sessions), "agent_turns": self.turns,
            "agent_tool_calls": sum(self.tools.values()), "agent_checks": len(self.checks),
            "agent_checks_correct": sum(1 for c in self.checks if c.correct),
        }

    def history(self) -> list[tuple[str, float, int]]:
        """(metric, value, step) per check: `check_correct`, and `check_speedup` where timed."""
        out = [("check_correct", float(c.correct), c.step) for c in self.checks]
        out += [("check_speedup", c.speedup, c.step) for c in self.checks if c.speedup is not None]
        return out

    def artifacts(self, blobs: BlobStore) -> dict[str, str]:
        """Artifact path -> text: the transcript, the checks, a CLI's report and stream, the
        workspace's final files."""
        out = {"agent/transcript.md": transcript(self.events, blobs, self.calls),
               "agent/checks.json": json.dumps([c.__dict__ for c in self.checks], indent=1)}
        if self.final is not None:
            out["agent/final.json"] = json.dumps({"rule": self.final.rule.value, "reason": self.final.reason,
                                                  "checked": self.final.checked}, indent=1)
        for session in self.sessions:  # a CLI driver's own report, beside kgb's count, and its raw stream
            if session.cli_report_blob:
                report = blobs.get(session.cli_report_blob)
                out[f"agent/cli/session-{session.session}-report.json"] = report
                stream = json.loads(report).get("stream_blob")
                if stream:
                    out[f"agent/cli/session-{session.session}-stream.jsonl"] = blobs.get(stream)
        if self.workspace_blob:
            for path, blob in json.loads(blobs.get(self.workspace_blob)).items():
                out[f"agent/workspace/{path}"] = blobs.get(blob)
        return out


def agent_view(events: list[Event]) -> AgentView | None:
    """The view of one trial's events; None if it ran no agent session."""
    starts = [i for i, e in enumerate(events) if isinstance(e, TrialStarted)]
    last = events[starts[-1]:] if starts else events
    if not any(isinstance(e, SessionStarted) for e in last):
        return None
    # every attempt's checks, as the trials table counts them (kgb.tracking.summary): a resumed
    # trial's run once showed only those its last attempt judged anew, often none
    view = AgentView(events=with_earlier_checks(events[:starts[-1]] if starts else [], last),
                     calls={e.request_hash: e for e in events if isinstance(e, ModelCalled)})
    for e in view.events:
        if isinstance(e, SessionFinished):
            view.sessions.append(e)
        elif isinstance(e, TurnTaken):
            view.turns += 1
        elif isinstance(e, ToolCalled):
            view.tools[e.tool] += 1
        elif isinstance(e, CandidateChecked):
            view.checks.append(CheckPoint(len(view.checks) + 1, e.candidate, e.verdict.status.value,
                                          e.verdict.correct, e.verdict.speedup, e.call_id, e.verdict.message))
        elif isinstance(e, FinalKernelChosen):
            view.final = e
        elif isinstance(e, WorkspaceSnapshotted):
            view.workspace_blob = e.manifest_blob
    return view


# The events an attempt logs again as it replays an earlier one, in the same order
REPLAYED = (SessionStarted, SessionFinished, TurnTaken, ToolCalled, WorkspaceSnapshotted)


def with_earlier_checks(earlier: list[Event], last: list[Event]) -> list[Event]:
    """The last attempt's events with the earlier attempts' checks put where it replayed
    them: a check is answered from the log as the replay reaches it, after as many replayed
    events as its own attempt had logged before it."""
    checks: list[tuple[int, CandidateChecked]] = []  # (replayed events before it, the check)
    steps = 0
    for e in earlier:
        if isinstance(e, TrialStarted):
            steps = 0
        elif isinstance(e, REPLAYED):
            steps += 1
        elif isinstance(e, CandidateChecked):
            checks.append((steps, e))
    if not checks:
        return last
    checks.sort(key=lambda c: c[0])  # a later attempt's own checks come after those it replayed
    out: list[Event] = []
    steps = 0
    for e in last:
        while checks and checks[0][0] <= steps and not isinstance(e, TrialStarted):
            out.append(checks.pop(0)[1])
        out.append(e)
        steps += isinstance(e, REPLAYED)
    return out + [check for _, check in checks]  # a replay that went another way: at the end


def _cut(text: str, most: int = TRANSCRIPT_CHARS) -> str:
    return text if len(text) <= most else text[:most] + f"\n[... {len(text) - most} characters cut]"


def transcript(events: list[Event], blobs: BlobStore, calls: dict[str, ModelCalled] | None = None) -> str:
    """A readable account of the sessions: each reply, each tool call and its result, each
    check. `calls`: the model calls whose replies the turns show, every attempt's (a replayed
    turn's reply is in an earlier attempt's ModelCalled); else those among `events`."""
    if calls is None:
        calls = {e.request_hash: e for e in events if isinstance(e, ModelCalled)}
    lines: list[str] = []
    for e in events:
        if isinstance(e, SessionStarted):
            lines += [f"# Session {e.session} ({e.driver}, protocol {e.protocol})", "", "## Prompt", "",
                      _cut(blobs.get(e.prompt_blob)), ""]
        elif isinstance(e, TurnTaken):
            call = calls.get(e.request_hash)
            lines += [f"## Turn {e.turn}", ""]
            if call is not None and call.response_blob:
                text = blobs.get(call.response_blob).strip()
                lines += [text, ""] if text else []
                if call.tool_uses_blob:
                    lines += [f"- calls `{u.name}`" for u in tool_uses_from_json(blobs.get(call.tool_uses_blob))] + [""]
        elif isinstance(e, ToolCalled):
            flag = " (error)" if e.is_error else ""
            lines += [f"### {e.tool}{flag}", "", "```json", _cut(blobs.get(e.input_blob)), "```", "",
                      "```text", _cut(blobs.get(e.result_blob)), "```", ""]
        elif isinstance(e, CandidateChecked):
            speed = f", speedup {e.verdict.speedup:.3g}" if e.verdict.speedup else ""
            # the harness's checks between sessions reach the agent in no tool result: their
            # message is shown here, or nowhere in MLflow
            who = f"{e.call_id}'s check" if e.call_id.startswith("harness") else "check"
            why = "" if e.verdict.correct else f": {_cut(e.verdict.message, MESSAGE_CHARS)}"
            lines += [f"**{who}** {e.candidate}: {e.verdict.status.value}{speed}{why}", ""]
        elif isinstance(e, SessionFinished):
            lines += [f"Session {e.session} ended ({e.end.value}) after {e.turns} turn(s): {e.reason}", ""]
        elif isinstance(e, FinalKernelChosen):
            lines += [f"# Final kernel: rule {e.rule.value}", "", e.reason, ""]
    return "\n".join(lines)
