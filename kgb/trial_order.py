"""The order a job starts its trials in: the operators that take longest to judge first.

A job runs many trials at once (kgb.run.trials_at_once) and ends when its last one does.
Started in the operators' own order, a long one (aten::sort took 74 s to judge on the H200,
the median operator 14 s) may start near the end and run on alone: replayed over session
33's measured judging times with 20 at once, the operators' order ends at 198 s where
longest first ends at 183 s. So the job starts them by how long each took to judge before:
`operators/judging_seconds.json`, measured from the operators' own solutions, per device
type. Only the order depends on it; a trial's verdict and timing never do. Operators it
does not name (a new one) start first, as they may be long.

Refresh the table from a job's event log (its CandidateEvaluated verdicts; .jsonl or
.jsonl.gz), or from a sweep's figures (benchmarks/throughput.py --json), with

    python -m kgb.trial_order outputs/jobs/JOB/events.jsonl --device cuda --measured "what ran it, where"
"""

from __future__ import annotations

import argparse
import functools
import json
from pathlib import Path

from kgb.evaluate.held_memory import merged
from kgb.operators import OPERATORS_DIR

TABLE = OPERATORS_DIR / "judging_seconds.json"


@functools.cache
def _read(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def judging_seconds(device: str, path: Path | None = None) -> dict[str, float]:
    """Seconds each operator's solution took to judge on this device type (a GPU that the
    table does not name takes the CUDA figures: the order, not the times, is what counts)."""
    table = _read(path or TABLE)
    entry = table.get(device) or (table.get("cuda") if device != "cpu" else None) or {}
    return dict(entry.get("seconds", {}))


def longest_first(ops: list[str], device: str, path: Path | None = None) -> list[str]:
    """`ops` by how long each took to judge, longest first; those not measured first of all,
    in their given order."""
    seconds = judging_seconds(device, path)
    return sorted(ops, key=lambda op: -seconds.get(op, float("inf")))


def refreshed(sweep: dict[str, dict], device: str, measured: str, path: Path | None = None) -> dict:
    """The table with `device`'s figures for the sweep's operators replaced by the sweep's
    (only its correct verdicts: a failed one ends early and says nothing of how long judging
    the operator takes); the other operators keep theirs (a job over one new operator
    replaced the whole device's figures with its one until session 44)."""
    table = dict(_read(path or TABLE))
    seconds = {op: round(e["wall_s"], 1) for op, e in sorted(sweep.items()) if e.get("status") == "correct"}
    if not seconds:
        raise ValueError("the sweep has no correct verdict to take times from")
    table[device] = merged(table.get(device, {}), "seconds", seconds, measured)
    return table


def sweep_of(path: Path) -> dict[str, dict]:
    """A sweep as benchmarks/throughput.py's --json has it ({op: {"wall_s", "status"}}); from
    a job's event log, each operator's last verdict, its judging time without its waits at
    the memory gate and its runs that ran out of memory among others."""
    if not path.name.endswith((".jsonl", ".jsonl.gz")):
        return json.loads(path.read_text())
    from kgb.tracking.log import read_events
    from kgb.tracking.projections import judged

    return {op: {"wall_s": v.eval_s - v.gate_s - v.ran_out_s, "status": str(v.status)}
            for op, v in judged(read_events(path))}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", type=Path, help="a job's events.jsonl(.gz), or benchmarks/throughput.py's --json file")
    parser.add_argument("--device", required=True, help="the device type it ran on: cuda, cpu")
    parser.add_argument("--measured", required=True, help="what ran the sweep and where, for the table's reader")
    args = parser.parse_args(argv)
    table = refreshed(sweep_of(args.sweep), args.device, args.measured)
    TABLE.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"{TABLE}: {len(table[args.device]['seconds'])} operators for {args.device}")


if __name__ == "__main__":
    main()
