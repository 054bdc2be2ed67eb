"""The events of agent trials (schema version 2): sessions, turns, tool calls, checks,
workspace snapshots and the choice of the final kernel.

Spans nest trial > session > turn: a session lies between its SessionStarted and
SessionFinished; a turn is one model call (TurnTaken names its request hash) and the tool
calls it asked for (ToolCalled carries its session and turn). A check is a candidate
judged on the cases the agent may see (CandidateChecked); only the final kernel gets a
CandidateEvaluated, on every case of the job, so a check never counts as a trial's result.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from kgb.evaluate.verdict import Verdict
from kgb.tracking.events import Event


class SessionEnd(StrEnum):
    """Why an agent session ended."""

    DONE = "done"  # the agent stopped on its own (a reply without tool calls)
    TURNS = "turns"  # the session's turn limit
    BUDGET = "budget"  # a trial budget: wall clock, tokens, cost or checks
    STOPPED = "stopped"  # the method's protocol ended it (target reached, plateau, one edit made)
    ERROR = "error"  # the driver failed (a model call failed for good, a CLI crashed)


class FinalRule(StrEnum):
    """Which rule chose the final kernel of an agent trial."""

    BEST_CHECK = "best_check"  # the best candidate by the harness's own checks
    WORKSPACE = "workspace"  # no check passed: the workspace's last kernel.py
    FENCED_BLOCK = "fenced_block"  # no kernel file: the last fenced code block of a reply
    NONE = "none"  # nothing to judge


@dataclass(frozen=True, kw_only=True)
class SessionStarted(Event):
    """An agent session began in the trial's workspace."""

    kind: ClassVar[str] = "SessionStarted"
    session: int  # 1-based within the trial
    driver: str  # loop | claude | opencode
    protocol: str  # the method's protocol name
    prompt_blob: str  # the first user message (task and protocol)


@dataclass(frozen=True, kw_only=True)
class SessionFinished(Event):
    kind: ClassVar[str] = "SessionFinished"
    session: int
    end: SessionEnd
    reason: str = ""
    turns: int = 0


@dataclass(frozen=True, kw_only=True)
class TurnTaken(Event):
    """One model call of a session and the number of tools it called."""

    kind: ClassVar[str] = "TurnTaken"
    session: int
    turn: int  # 1-based within the session
    request_hash: str  # the ModelCalled of this turn
    tool_calls: int = 0


@dataclass(frozen=True, kw_only=True)
class ToolCalled(Event):
    """A tool call of the agent and its result, as the harness ran it."""

    kind: ClassVar[str] = "ToolCalled"
    session: int
    turn: int
    call_id: str  # the provider's tool-use id
    tool: str
    input_blob: str  # the arguments (JSON)
    result_blob: str  # what the agent was shown
    is_error: bool = False
    duration_s: float = 0.0


@dataclass(frozen=True, kw_only=True)
class CandidateChecked(Event):
    """A candidate judged by the check tool on the cases the agent may see."""

    kind: ClassVar[str] = "CandidateChecked"
    candidate: str
    verdict: Verdict
    logs_blob: str | None = None
    call_id: str = ""  # the tool call (or harness step) that asked for the check


@dataclass(frozen=True, kw_only=True)
class WorkspaceSnapshotted(Event):
    """The workspace's files at a moment: a manifest blob (path -> blob hash, JSON)."""

    kind: ClassVar[str] = "WorkspaceSnapshotted"
    manifest_blob: str
    files: int
    reason: str  # e.g. "session 2 ended", "final"


@dataclass(frozen=True, kw_only=True)
class FinalKernelChosen(Event):
    """The kernel that is judged on every case of the job, and the rule that chose it.
    The CandidateProposed and CandidateEvaluated of that judgement follow."""

    kind: ClassVar[str] = "FinalKernelChosen"
    rule: FinalRule
    reason: str
    checked: str | None = None  # the checked candidate it is, for rule best_check
    source_blob: str | None = None


AGENT_EVENTS: tuple[type[Event], ...] = (
    SessionStarted, SessionFinished, TurnTaken, ToolCalled, CandidateChecked, WorkspaceSnapshotted,
    FinalKernelChosen,
)
