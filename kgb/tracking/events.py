"""The typed events of the log: immutable, past-tense facts, one JSON object per line.

Every event carries `kind` (its tag in the union), `schema_version`, `seq` (position in
its job's log), `ts` (unix seconds), `job` and `trial` (None for job-level events). Big
texts (kernel source, prompts, completions, logs) are blob hashes, not inline text.
See docs/event-log.md for the format and its upgrade rules.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any, ClassVar

from kgb.evaluate.verdict import CaseResult, Status, Verdict
from kgb.usage import Usage

SCHEMA_VERSION = 2  # 2: agent events, ModelCalled.tool_uses_blob, CandidateProposed.produced_by


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
    """The speed baseline of one timed case (also inside each CandidateEvaluated)."""

    kind: ClassVar[str] = "BaselineMeasured"
    op: str
    case: str
    baseline: str
    latency_us: float


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


@dataclass(frozen=True, kw_only=True)
class TrialFinished(Event):
    kind: ClassVar[str] = "TrialFinished"
    end: TrialEnd
    reason: str = ""
    wall_s: float = 0.0


@dataclass(frozen=True, kw_only=True)
class RunFinished(Event):
    kind: ClassVar[str] = "RunFinished"
    wall_s: float
    trials_run: int
    trials_skipped_as_done: int


from kgb.tracking.agent_events import (  # noqa: E402 - they build on Event above
    AGENT_EVENTS,
    CandidateChecked,
    FinalKernelChosen,
    FinalRule,
    SessionEnd,
    SessionFinished,
    SessionStarted,
    ToolCalled,
    TurnTaken,
    WorkspaceSnapshotted,
)

EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        RunStarted, TrialStarted, BaselineMeasured, ModelCalled, CandidateProposed,
        CandidateEvaluated, CompletionParsed, TrialFinished, RunFinished, *AGENT_EVENTS,
    )
}


# --- encoding: dataclasses and enums to JSON-able values and back -------------------

def to_json(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, Event):
            out = {"kind": value.kind, **out}
        return out
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    return value


def _from_json(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return _from_json(inner[0], value) if len(inner) == 1 else value
    if origin is tuple:
        return tuple(_from_json(typing.get_args(tp)[0], v) for v in value)
    if origin is list:
        return [_from_json(typing.get_args(tp)[0], v) for v in value]
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(value)
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        names = {f.name for f in dataclasses.fields(tp)}
        return tp(**{k: _from_json(hints[k], v) for k, v in value.items() if k in names})  # type: ignore[operator]
    return value


def from_json(record: dict[str, Any]) -> Event:
    """Decode one current-schema record into its event class."""
    cls = EVENT_TYPES.get(record.get("kind", ""))
    if cls is None:
        raise ValueError(f"unknown event kind {record.get('kind')!r}")
    return _from_json(cls, record)


__all__ = [
    "SCHEMA_VERSION", "Event", "RunStarted", "TrialStarted", "BaselineMeasured", "ModelCalled",
    "CandidateProposed", "CandidateEvaluated", "CompletionParsed", "Extraction", "TrialEnd", "TrialFinished", "RunFinished",
    "EVENT_TYPES", "to_json", "from_json", "Usage", "Verdict", "CaseResult", "Status",
    "SessionStarted", "SessionFinished", "SessionEnd", "TurnTaken", "ToolCalled", "CandidateChecked",
    "WorkspaceSnapshotted", "FinalKernelChosen", "FinalRule",
]
