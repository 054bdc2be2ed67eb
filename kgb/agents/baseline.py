"""`method.baseline=OUTPUTS_DIR`: start an optimise-mode method from the best correct
kernel an earlier run (any method, e.g. oneshot) left for the operator."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kgb.tracking.blobs import BlobStore
from kgb.tracking.log import read_events
from kgb.tracking.projections import trial_outcomes


@dataclass(frozen=True)
class Baseline:
    source: str
    origin: str  # which job and candidate it is, for the log


def baseline_logs(root: str) -> list[Path]:
    """The event logs under tracking root `root`; none is a ValueError, which the method's
    constructor raises before any trial (else every trial ended method_error)."""
    base = Path(root).expanduser()
    logs = sorted(base.glob("jobs/*/events.jsonl"))
    if not logs:
        raise ValueError(f"method.baseline={root}: no event logs under {base}/jobs/ (give a run's tracking.root)")
    return logs


def find_baseline(root: str, op: str) -> Baseline | None:
    """The fastest correct kernel for `op` under tracking root `root` (the latest of equals)."""
    base = Path(root).expanduser()
    logs = baseline_logs(root)
    found: list[tuple[float, str, str, str]] = []  # speedup, job, candidate, source blob
    for log in logs:
        for t in trial_outcomes(read_events(log)).values():
            best = t.best
            if t.op == op and t.correct and best is not None:
                found.append((t.speedup or 0.0, log.parent.name, best.id, best.source_blob))
    if not found:
        return None
    speedup, job, candidate, blob = max(reversed(found), key=lambda f: f[0])
    return Baseline(BlobStore(base / "blobs").get(blob), f"baseline from job {job}, candidate {candidate}")
