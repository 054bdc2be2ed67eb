"""One row per method x model x source x chip, computed from the trial runs.

Computed from child runs rather than parent metrics, so that jobs split over several
commands (e.g. `ops=` subsets) still add up. A trial projected by two jobs counts once.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from kgb.evaluate.verdict import geomean


@dataclass(frozen=True)
class Row:
    method: str
    model: str
    source: str
    chip: str
    trials: int  # operators that ran (skipped excluded)
    correct: int
    accuracy: float
    fast_1_0: float
    geomean_speedup: float | None
    total_tokens: int
    cost_usd: float
    tokens_per_success: float | None
    skipped: int


def rows(runs: list[Any]) -> list[Row]:
    groups: dict[tuple[str, str, str, str], dict[str, Any]] = defaultdict(dict)
    for run in runs:
        tags = run.data.tags
        key = (tags.get("kgb.method", ""), tags.get("kgb.model", ""), tags.get("kgb.source", ""), tags.get("kgb.chip", ""))
        groups[key].setdefault(tags["kgb.trial"], run)  # dedupe trials seen by several jobs
    table = []
    for key, by_trial in sorted(groups.items()):
        per_op: dict[str, list[Any]] = defaultdict(list)
        skipped = set()
        for run in by_trial.values():
            op = run.data.tags["kgb.op"]
            if run.data.tags.get("kgb.status") == "skipped":
                skipped.add(op)
            else:
                per_op[op].append(run)
        n = len(per_op)
        correct = {op: rs for op, rs in per_op.items() if any(r.data.metrics.get("correct") == 1 for r in rs)}
        speedups = [max(r.data.metrics.get("speedup", 0.0) for r in rs) for rs in correct.values()]
        timed = [s for s in speedups if s > 0]
        tokens = int(sum(r.data.metrics.get("total_tokens", 0) for rs in per_op.values() for r in rs))
        cost = sum(r.data.metrics.get("cost_usd", 0.0) for rs in per_op.values() for r in rs)
        method, model, source, chip = key
        table.append(Row(
            method=method, model=model, source=source, chip=chip, trials=n, correct=len(correct), accuracy=len(correct) / n if n else 0.0,
            fast_1_0=sum(1 for s in speedups if s > 1.0) / n if n else 0.0,
            geomean_speedup=geomean(timed) if timed else None,
            total_tokens=tokens, cost_usd=cost,
            tokens_per_success=tokens / len(correct) if correct else None,
            skipped=len(skipped - set(per_op)),
        ))
    return table


COLUMNS = ("method", "model", "source", "chip", "trials", "correct", "accuracy", "fast_1_0",
           "geomean_speedup", "total_tokens", "tokens_per_success", "cost_usd", "skipped")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def render(table: list[Row], fmt: str) -> str:
    cells = [[_cell(getattr(r, c)) for c in COLUMNS] for r in table]
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(COLUMNS)
        writer.writerows(cells)
        return out.getvalue()
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c) for i, c in enumerate(COLUMNS)]
    if fmt == "md":
        lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in cells]
        return "\n".join(lines) + "\n"
    lines = ["  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(lines) + "\n"
