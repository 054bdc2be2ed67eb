"""The best kernel for one operator on one chip: the fastest correct one, or any
correct one where nothing was timed."""

from __future__ import annotations

import json
from pathlib import Path

from kgb.query.store import Store, StoreError
from kgb.tracking.summary import TrialRow


def best_row(rows: list[TrialRow], op: str) -> TrialRow | None:
    correct = [r for r in rows if r.op == op and r.correct]
    if not correct:
        return None
    return max(correct, key=lambda r: (r.speedup or 0.0, r.end_ms))


def download(uri: str, row: TrialRow, dest: Path) -> list[Path]:
    """Write the trial's kernel.py and its verdict.json into dest."""
    store = Store(uri)
    kernel = store.copy(row.run_id, "kernel.py", dest)
    bundle = store.read_text(row.run_id, store.artifact_uri(row.run_id), "trial.json")
    if bundle is None:
        raise StoreError(f"run {row.run_id} has no trial.json")
    verdict = dest / "verdict.json"
    verdict.write_text(json.dumps(json.loads(bundle)["verdict"], indent=1) + "\n")
    return [kernel, verdict]
