"""The typed events of the log: immutable, past-tense facts, one JSON object per line.

Every event carries `kind` (its tag in the union), `schema_version`, `seq` (position in
its job's log), `ts` (unix seconds), `job` and `trial` (None for job-level events). Big
texts (kernel source, prompts, completions, logs) are blob hashes, not inline text.
Their JSON form (to_json, from_json) is kgb.tracking.encoding. See docs/event-log.md for
the format and its upgrade rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from kgb.evaluate.verdict import CaseResult, Status, Turn, Verdict
from kgb.usage import Usage

SCHEMA_VERSION = 2  # 2: RunStarted.identity/.settings/.sandbox, TrialEnd.INFRA_ERROR, agent events,
#    ModelCalled.tool_uses_blob, CandidateProposed.produced_by (all additive)


@dataclass(frozen=True, kw_only=True)
class Event:
    """Fields common to every event. `seq` and `ts` are set by the log when appended."""

    kind: ClassVar[str]
    job: str
    trial: str | None = None
    seq: int = -1
    ts: float = 0.0
    schema_version: int = SCHEMA_VERSION


@dataclass(frozen=True, kw_only=True)
class RunStarted(Event):
    """A job began (or resumed). Everything needed to say what was run, and where."""

    kind: ClassVar[str] = "RunStarted"
    method: str
    model: str
    source: str
    chip: str
    config: dict[str, Any]  # the resolved config, secrets excluded
    git_commit: str | None
    packages: dict[str, str]  # name -> version: torch, triton, kgb, mlflow, ...
    device: str  # device name, e.g. "NVIDIA H200" or "cpu (Triton interpreter)"
    driver: str | None
    specs: dict[str, str]  # operator id -> "v<version>:<spec digest>"
    n_ops: int
    # kgb.identity.Identity as JSON: what the trial keys hash (method, model, chip and its
    # notes, judging settings); {} in logs of schema 1, which did not record it.
    identity: dict[str, Any] = field(default_factory=dict)
    # Judging.summary(): the settings every verdict of this job was given under, e.g.
    # "cpu cases=smoke timeout=300s judge=v2". Results are compared only within one value.
    settings: str = ""
    # kgb.evaluate.sandbox.SandboxLevel: how candidate processes are confined on this machine
    # ("landlock+seccomp" in full; "none" where the kernel offers neither); "" before it was recorded.
    sandbox: str = ""
    # The keys of this run's trials, those it judges and those it keeps: what the job's summary
    # counts (a trial of an operator since removed, of an edited file, is not). Empty in logs
    # before session 45, whose summaries count every trial of the log.
    trial_keys: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class TrialStarted(Event):
    """A trial began; a resumed trial starts again with attempt + 1."""

    kind: ClassVar[str] = "TrialStarted"
    op: str
    spec_version: int
    sample: int
    attempt: int = 1


@dataclass(frozen=True, kw_only=True)
class BaselineMeasured(Event):
    """The speed baseline of one timed case, measured once per chip (kgb.tracking.baselines):
    later evaluations with the same fingerprint are given it, and their cases name this
    event (`CaseResult.baseline_from`)."""

    kind: ClassVar[str] = "BaselineMeasured"
    op: str
    case: str
    baseline: str
    latency_us: float
    spec_version: int = 0
    fingerprint: str = ""  # device, judge settings, torch/Triton versions (baselines.fingerprint)
    timing_mode: str = ""  # how the judge timed it (CaseResult.baseline_mode); empty in older logs
    # whether its turn had the GPU to itself (CaseResult.baseline_turn); a crowded one is never
    # given to later evaluations. None in older logs
    turn: Turn | None = None


@dataclass(frozen=True, kw_only=True)
class ModelCalled(Event):
    """One call to a model API, successful or not, with exact usage and cost."""

    kind: ClassVar[str] = "ModelCalled"
    provider: str
    model: str
    request_hash: str  # hash of the request body: replays and resumes match on it
    request_blob: str  # the full request (messages, parameters), secrets excluded
    response_blob: str | None  # the raw completion text
    usage: Usage = field(default_factory=Usage)
    raw_usage: dict[str, Any] = field(default_factory=dict)  # the provider's usage block as sent
    latency_s: float = 0.0
    retries: int = 0
    stop_reason: str | None = None
    error: str | None = None
    tool_uses_blob: str | None = None  # the tool calls of the reply (JSON list of id, name, input)


@dataclass(frozen=True, kw_only=True)
class CandidateProposed(Event):
    """A method proposed kernel source for evaluation."""

    kind: ClassVar[str] = "CandidateProposed"
    candidate: str  # id, unique within the trial
    source_blob: str
    parents: tuple[str, ...] = ()  # candidates this one refines
    origin: str = ""  # where it came from: "solution.py", a file path, "completion 3"
    produced_by: str = ""  # the tool call id (agents) or request hash whose output this source is


@dataclass(frozen=True, kw_only=True)
class CandidateEvaluated(Event):
    """The evaluator's verdict on one candidate. The logs are a blob."""

    kind: ClassVar[str] = "CandidateEvaluated"
    candidate: str
    verdict: Verdict
    logs_blob: str | None = None


class Extraction(StrEnum):
    """What code extraction found in a completion (kgb/methods/extraction.py)."""

    ONE_BLOCK = "one_block"  # one Python code block: the candidate
    CHOSEN_BLOCK = "chosen_block"  # several blocks; the reason says which one was taken and why
    JOINED_BLOCKS = "joined_blocks"  # several blocks that define the entry points only together
    UNFENCED = "unfenced"  # no fence, but the whole reply is Python source
    PROSE = "prose"  # no code at all
    TRUNCATED = "truncated"  # max_tokens was reached before the code was complete
    EMPTY = "empty"  # an empty reply

    @property
    def usable(self) -> bool:
        """Whether a candidate came of it."""
        return self in (Extraction.ONE_BLOCK, Extraction.CHOSEN_BLOCK, Extraction.JOINED_BLOCKS, Extraction.UNFENCED)


@dataclass(frozen=True, kw_only=True)
class CompletionParsed(Event):
    """Code extraction from one completion. A usable outcome is followed by the
    CandidateProposed of its code; the others say why no candidate came of this round."""

    kind: ClassVar[str] = "CompletionParsed"
    request_hash: str  # the ModelCalled whose completion this is
    round: int  # 1-based: the method's round (passk) or turn (refine)
    outcome: Extraction
    reason: str = ""
    blocks: int = 0  # code blocks found


class TrialEnd(StrEnum):
    """How a trial ended (facts; its score is derived by projections)."""

    COMPLETED = "completed"  # the method ran to its end
    NO_CANDIDATE = "no_candidate"  # the method had nothing to propose
    SKIPPED = "skipped"  # not run here: the chip is absent, with the reason
    BUDGET = "budget"  # a token or cost budget was reached
    METHOD_ERROR = "method_error"  # the method itself raised (not the candidate)
    # The infrastructure failed (provider down after its retries, the judge's worker killed
    # from outside, a full disk): no verdict on the method, and a re-run retries the trial.
    INFRA_ERROR = "infra_error"


@dataclass(frozen=True, kw_only=True)
class TrialFinished(Event):
    kind: ClassVar[str] = "TrialFinished"
    end: TrialEnd
    reason: str = ""
    wall_s: float = 0.0


@dataclass(frozen=True, kw_only=True)
class RunFinished(Event):
    """The job's loop ended: every trial run, or Ctrl-C stopped it (`interrupted`)."""

    kind: ClassVar[str] = "RunFinished"
    wall_s: float
    trials_run: int  # trials begun by this run, those Ctrl-C cut short too
    trials_skipped_as_done: int
    # Ctrl-C ended the run: the trials it did not start, or cut short, are left to the next
    # run. A fact of the log, so that a rebuild ends the job's MLflow run as the job did (KILLED).
    interrupted: bool = False


# --- agent trials (schema 2) ---------------------------------------------------------
# The events of agent trials (schema version 2): sessions, turns, tool calls, checks,
# workspace snapshots and the choice of the final kernel.
#
# Spans nest trial > session > turn: a session lies between its SessionStarted and
# SessionFinished; a turn is one model call (TurnTaken names its request hash) and the tool
# calls it asked for (ToolCalled carries its session and turn). A check is a candidate
# judged on the cases the agent may see (CandidateChecked); only the final kernel gets a
# CandidateEvaluated, on every case of the job, so a check never counts as a trial's result.


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
    cli_report_blob: str | None = None  # a CLI driver's own token report beside kgb's count (JSON)


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


EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        RunStarted, TrialStarted, BaselineMeasured, ModelCalled, CandidateProposed,
        CandidateEvaluated, CompletionParsed, TrialFinished, RunFinished, *AGENT_EVENTS,
    )
}


__all__ = [
    "SCHEMA_VERSION", "Event", "RunStarted", "TrialStarted", "BaselineMeasured", "ModelCalled",
    "CandidateProposed", "CandidateEvaluated", "CompletionParsed", "Extraction", "TrialEnd", "TrialFinished", "RunFinished",
    "EVENT_TYPES", "Usage", "Verdict", "CaseResult", "Status",
    "SessionStarted", "SessionFinished", "SessionEnd", "TurnTaken", "ToolCalled", "CandidateChecked",
    "WorkspaceSnapshotted", "FinalKernelChosen", "FinalRule",
]
