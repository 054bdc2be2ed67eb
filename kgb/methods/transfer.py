"""The transfer method: kernels another run produced, re-judged on this job's chip.

`method=transfer method.from=OUTPUTS_DIR chip=E` takes, for each operator, one kernel that
the runs logged under OUTPUTS_DIR proposed (typically on NVIDIA) and judges it here, with
no model call. Set beside the same method's own run on chip E, it separates "the method
cannot write for E" from "kernels written for another chip do not run on E".

Which runs: the jobs under OUTPUTS_DIR/jobs/ that judged at least one candidate, less
earlier transfer jobs (so a store shared with this job never feeds it its own output).
They must share one method configuration, model and chip; where they do not,
`method.from_method`, `from_params` (what differs from the method's defaults, as the
queries label it: `dir=/tmp/k`; '' for the defaults), `from_model` and `from_chip` choose,
and the job fails before any trial until they do. Until session 46 two configurations of
one method (two users' `method.dir`) were one source run, and their kernels mixed.

Which kernel, per operator, over every trial of those jobs: the fastest correct
candidate (the latest of equals; on a chip that times nothing, the latest correct one),
else the last candidate judged. A candidate an agent only checked is not one the run
judged, so it is never taken. An operator with no judged candidate there ends
`no_candidate`. The candidate's origin names the source job, trial and candidate.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from kgb.config import ConfigError, TransferConfig
from kgb.method_params import method_params
from kgb.methods import NoCandidate
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import CandidateProposed
from kgb.tracking.log import read_events
from kgb.tracking.projections import TrialStatus, run_started, trial_outcomes
from kgb.trial import TrialContext

TRANSFER = "transfer"
CHOOSERS = ("method", "params", "model", "chip")  # what tells source runs apart: method.from_<chooser>


@dataclass(frozen=True)
class SourceRun:
    """What made a source job's kernels."""

    method: str
    params: str  # its parameters that differ from the method's defaults (kgb.method_params); "" for none
    model: str
    chip: str

    @classmethod
    def of(cls, method: str, identity: dict, model: str, chip: str) -> SourceRun:
        """The source run a RunStarted describes (its identity is {} in logs before it had one)."""
        return cls(method, method_params(identity.get("method") or {}), model, chip)

    def __str__(self) -> str:
        return f"{self.method}/{self.model} on {self.chip}" + (f" ({self.params})" if self.params else "")


@dataclass(frozen=True)
class Kernel:
    """One judged candidate of a source job."""

    run: SourceRun
    op: str
    job: str
    trial: str
    candidate: str
    source_blob: str
    correct: bool
    speedup: float  # 0.0 where not correct or not timed
    proposed_at: tuple[float, int]  # its CandidateProposed's (ts, seq): "last" is by this

    @property
    def origin(self) -> str:
        verdict = "correct" if self.correct else "not correct"
        return f"transfer of job {self.job} trial {self.trial} candidate {self.candidate} ({self.run}, {verdict} there)"


def choose(kernels: list[Kernel]) -> Kernel:
    """The fastest correct kernel (latest of equals), else the last one judged."""
    correct = [k for k in kernels if k.correct]
    if correct:
        return max(correct, key=lambda k: (k.speedup, k.proposed_at))
    return max(kernels, key=lambda k: k.proposed_at)


def first_run(log: Path) -> SourceRun | None:
    """The run a job's log opens with (every start of a job is the same method, model and
    chip), read from its first line alone, so that logs of other runs are not read whole."""
    with log.open() as f:
        try:
            head = json.loads(f.readline())
        except json.JSONDecodeError:  # an empty or torn first line: a job that never started
            return None
    if head.get("kind") != "RunStarted" or head["method"] == TRANSFER:
        return None
    return SourceRun.of(head["method"], head.get("identity") or {}, head["model"], head["chip"])


def job_kernels(log: Path) -> list[Kernel]:
    """The judged candidates of one (not transfer) job's log."""
    events = read_events(log)
    started = run_started(events)
    if started is None:
        return []
    run = SourceRun.of(started.method, started.identity, started.model, started.chip)
    proposed = {(e.trial, e.candidate): (e.ts, e.seq) for e in events if isinstance(e, CandidateProposed)}
    kernels = []
    for t in trial_outcomes(events).values():
        if t.status == TrialStatus.INFRA_ERROR:  # its verdicts are not its result
            continue
        for c in t.candidates:
            if c.verdict is None:
                continue
            correct = c.verdict.correct
            kernels.append(Kernel(run, t.op, started.job, t.key, c.id, c.source_blob, correct,
                                  (c.verdict.speedup or 0.0) if correct else 0.0, proposed[t.key, c.id]))
    return kernels


def wanted(run: SourceRun, cfg: TransferConfig) -> bool:
    """Whether `run` is one the `method.from_*` settings given leave in."""
    return all(getattr(cfg, f"from_{c}") in (None, getattr(run, c)) for c in CHOOSERS)


def no_match(root: Path, found: set[SourceRun], cfg: TransferConfig) -> ConfigError:
    given = " ".join(f"method.from_{c}={getattr(cfg, f'from_{c}')}" for c in CHOOSERS if getattr(cfg, f"from_{c}") is not None)
    return ConfigError(f"method.from={root}: no run matches {given}; it holds runs of: {'; '.join(sorted(map(str, found)))}")


def pick_run(root: Path, found: set[SourceRun], cfg: TransferConfig) -> SourceRun:
    """The one source run the settings leave, or a ConfigError saying how to choose."""
    left = {r for r in found if wanted(r, cfg)}
    if not left:
        raise no_match(root, found, cfg)
    if len(left) > 1:
        # each setting that tells the runs left apart, with its values as one would type them
        values = {c: sorted({getattr(r, c) for r in left}) for c in CHOOSERS}
        choices = ", and ".join(" or ".join(override(c, v) for v in vs) for c, vs in values.items() if len(vs) > 1)
        raise ConfigError(f"method.from={root} holds kernels of several runs ({'; '.join(sorted(map(str, left)))}): "
                          f"choose one with {choices}")
    return left.pop()


def override(chooser: str, value: str) -> str:
    """`method.from_<chooser>=<value>` as typed in a shell. Hydra reads a value with `=` or a
    space (`mode=answer`), the defaults' "" and words such as null only inside quotes:
    `method.from_params=mode=answer` is a grammar error."""
    if re.fullmatch(r"[A-Za-z_][\w.:/+-]*", value) and value.lower() not in ("true", "false", "null", "nan", "inf"):
        return f"method.from_{chooser}={value}"
    quoted = value.replace("\\", "\\\\").replace('"', '\\"')
    return "'" + f'method.from_{chooser}="{quoted}"'.replace("'", "'\\''") + "'"


class Transfer:
    """Judges, per operator, the kernel the chosen source run left for it (see the module doc)."""

    def __init__(self, cfg: TransferConfig):
        given = getattr(cfg, "from", None)
        if not given:
            raise ConfigError("method=transfer re-judges the kernels of an earlier run: add method.from=OUTPUTS_DIR "
                              "(that run's tracking.root)")
        self.root = Path(given).expanduser()
        if not self.root.is_dir():
            raise ConfigError(f"method.from={given}: no such folder (give the tracking.root of the run whose kernels to judge)")
        logs = sorted(self.root.glob("jobs/*/events.jsonl"))
        if not logs:
            raise ConfigError(f"method.from={given}: no event logs under {self.root}/jobs/ (give a run's tracking.root)")
        heads = {log: first_run(log) for log in logs}
        runs = {run for run in heads.values() if run is not None}
        if runs and not any(wanted(r, cfg) for r in runs):
            raise no_match(self.root, runs, cfg)
        kernels = [k for log, run in heads.items() if run is not None and wanted(run, cfg) for k in job_kernels(log)]
        if not kernels:
            raise ConfigError(f"method.from={given}: its {len(logs)} job(s) judged no candidate to transfer")
        run = pick_run(self.root, {k.run for k in kernels}, cfg)
        # Pinned into the config the job records (RunStarted, trial keys, MLflow params), so
        # that a job whose command line left the source to be found still names it.
        cfg.from_method, cfg.from_params, cfg.from_model, cfg.from_chip = run.method, run.params, run.model, run.chip
        self.run = run
        self.by_op: dict[str, list[Kernel]] = {}
        for k in kernels:
            if k.run == run:
                self.by_op.setdefault(k.op, []).append(k)
        self.blobs = BlobStore(self.root / "blobs")

    def input_digest(self, op: str) -> str:
        """The kernel it will judge, in the trial's key (kgb.methods): a source run that has
        since logged a better kernel for `op` makes a new trial."""
        kernels = self.by_op.get(op)
        return choose(kernels).source_blob if kernels else "none"

    def solve(self, ctx: TrialContext) -> None:
        kernels = self.by_op.get(ctx.problem.op)
        if not kernels:
            raise NoCandidate(f"{self.run} under {self.root} judged no candidate for {ctx.problem.op}")
        kernel = choose(kernels)
        ctx.evaluate(self.blobs.get(kernel.source_blob), origin=kernel.origin)
