"""How much GPU memory judging each operator holds, as last measured: before its bench cases
a judge reserves that much of its GPU's memory (kgb.evaluate.memory_ledger), so that the
few operators whose judgements hold tens of GB do not time their bench cases together
and run out.

On the H200 a first run of the 210 operators peaked at the GPU's whole memory and 4-14
evaluations a run ran out among others and ran again (sessions 34-35): the memory gate
(kgb.evaluate.gpus) learns of a crowd only by an evaluation failing in it. The median
judgement's processes held 9 GB at most; a few held 25-47 GB (cuBLAS's Csymv, complex swap
and dot; aten::reflection_pad1d_backward, bitwise_not, scatter; vLLM's MoE repacks), by the
sizes of their bench cases, which do not change from run to run. So the table records, per
operator, what its judge's allocator and its candidate process's held at most
(`Verdict.gpu_mib`), from the operators' own solutions; a candidate of another method may
hold more or less, and an evaluation that runs out among others still runs again.

Refresh it from a job's event log on a GPU host (gzipped or not):

    python -m kgb.evaluate.held_memory outputs/jobs/JOB/events.jsonl --measured "what ran it, where"
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
from collections.abc import Iterable
from pathlib import Path

from kgb.evaluate.verdict import Verdict
from kgb.operators import OPERATORS_DIR

TABLE = OPERATORS_DIR / "judging_memory.json"


@functools.cache
def _read(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def measured_mib(device: str, path: Path | None = None) -> dict[str, int]:
    """Each measured operator's judgement's allocators' MiB on this device type (a GPU the
    table does not name takes the CUDA figures; the CPU has none)."""
    if device == "cpu":
        return {}
    table = _read(path or TABLE)
    entry = table.get(device) or table.get("cuda") or {}
    return {op: int(mib) for op, mib in dict(entry.get("mib", {})).items()}


def expected_mib(op: str, device: str, path: Path | None = None) -> int | None:
    """What judging `op` is expected to hold on the GPU at most, its processes' allocators
    together; for an operator the table lacks, the median operator's; None on the CPU or
    with no table."""
    table = measured_mib(device, path)
    if not table:
        return None
    held = table.get(op)
    return held if held is not None else int(statistics.median(table.values()))


def most_held(judged: Iterable[tuple[str, Verdict]]) -> dict[str, int]:
    """Each operator's most held memory over its correct verdicts (judge and candidate
    process together), from (operator, verdict) pairs: a failed evaluation may end before
    its bench cases."""
    held: dict[str, int] = {}
    for op, verdict in judged:
        if verdict.correct and verdict.gpu_mib:
            held[op] = max(held.get(op, 0), sum(int(v) for v in verdict.gpu_mib.values()))
    return dict(sorted(held.items()))


def refreshed(held: dict[str, int], device: str, measured: str, path: Path | None = None) -> dict:
    """The table with `device`'s figures for the job's operators replaced; the others keep theirs."""
    if not held:
        raise ValueError("the event log has no correct verdict that says what GPU memory it held "
                         "(Verdict.gpu_mib: a job on a GPU, by kgb of session 35 or later)")
    table = dict(_read(path or TABLE))
    table[device] = merged(table.get(device, {}), "mib", held, measured)
    return table


def merged(entry: dict, key: str, figures: dict, measured: str) -> dict:
    """A device's entry of a table measured from jobs (this one, kgb.trial_order's) with
    `figures` in place of those it had for the same operators, the others kept, and what
    measured them. Until session 44 a job over one new operator replaced the device's whole
    entry with its one figure."""
    kept = {op: v for op, v in entry.get(key, {}).items() if op not in figures}
    note = f"{entry['measured']}; {', '.join(sorted(figures))}: {measured}" if kept and "measured" in entry else measured
    return {"measured": note, key: dict(sorted({**kept, **figures}.items()))}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("events", type=Path, help="a job's events.jsonl (or .jsonl.gz)")
    parser.add_argument("--device", default="cuda", help="the device type it ran on")
    parser.add_argument("--measured", required=True, help="what ran the job and where, for the table's reader")
    args = parser.parse_args(argv)
    # the job's log read as every other reader of it does; only this command leaves the
    # evaluate layer for it
    from kgb.tracking.log import read_events
    from kgb.tracking.projections import judged

    table = refreshed(most_held(judged(read_events(args.events))), args.device, args.measured)
    TABLE.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"{TABLE}: {len(table[args.device]['mib'])} operators for {args.device}")


if __name__ == "__main__":
    main()
