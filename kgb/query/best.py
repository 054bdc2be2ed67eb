"""The best kernel for one operator on one chip: the fastest correct one, or any
correct one where nothing was timed.

A kernel (its source, by its sha256 in trial.json) that any trial on the chip judged not
correct is never the best, whatever settings either trial was judged under: until session
49 a kernel correct on the smoke cases and wrong on smoke+check was exported, its
verdict.json saying all its cases passed. The choice is printed with the settings it was
judged under.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kgb.query.store import Store, StoreError
from kgb.tracking.summary import TrialRow


@dataclass(frozen=True)
class Judged:
    """The sources one trial judged, from its trial.json."""

    best: str | None  # its best candidate's source sha256; None where it had no candidate
    failed: frozenset[str]  # the sources of its candidates judged anything but correct


UNREAD = Judged(None, frozenset())  # a trial whose trial.json was not read: nothing known of its sources


def judged(bundle: dict) -> Judged:
    """What a trial.json says of the sources its trial judged."""
    candidates = bundle.get("candidates", [])
    best = next((c["source_sha256"] for c in candidates if c["id"] == bundle.get("best")), None)
    failed = frozenset(c["source_sha256"] for c in candidates
                       if c.get("verdict") and c["verdict"].get("status") != "correct")
    return Judged(best, failed)


def best_row(rows: list[TrialRow], op: str, sources: Mapping[str, Judged] | None = None) -> TrialRow | None:
    """The fastest correct trial of `op` among `rows` (one chip's), its kernel judged not
    correct by none of them; `sources` by trial run id (read_sources), where known."""
    sources = sources or {}
    failed = frozenset().union(*(sources.get(r.run_id, UNREAD).failed for r in rows if r.op == op))
    correct = [r for r in rows if r.op == op and r.correct and sources.get(r.run_id, UNREAD).best not in failed]
    if not correct:
        return None
    return max(correct, key=lambda r: (r.speedup or 0.0, r.end_ms))


def read_sources(uri: str, rows: list[TrialRow], op: str) -> dict[str, Judged]:
    """The sources each trial of `op` judged, by its run id: one trial.json a trial."""
    store = Store(uri)
    found = {}
    for r in rows:
        if r.op == op:
            text = store.read_text(r.run_id, store.artifact_uri(r.run_id), "trial.json")
            if text is None:
                raise StoreError(f"run {r.run_id} has no trial.json")
            found[r.run_id] = judged(json.loads(text))
    return found


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
