"""Does each operator's speed baseline compute what its spec's reference computes? Prints a table.

    python benchmarks/baselines.py [--source cublas] [--ops a::b,...] [--cases smoke,check,bench]
                                   [--jobs N] [--json FILE]

A speedup is only a speedup over the same computation. For cuBLAS the baseline is the
routine itself in libcublas (through `kgb.cublas`), and the spec's reference is PyTorch
written from the cuBLAS documentation; where the two disagree, either the spec states
the routine wrongly (column-major layout, a transpose or fill flag, conjugation, beta = 0
reading C) or the ctypes call passes something else than it means to. This runs both on
every case's inputs, the baseline on the judge's poisoned output buffers (NaN where C
must not be read), and judges the baseline's answer with the spec's own comparison, as
if it were a candidate.

Each operator runs in a process of its own, so a routine that crashes in the library
costs only its row.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kgb import chips, operators  # noqa: E402


def agree(op: str, tags: tuple[str, ...], device: str) -> dict:
    """One operator, in this process: each case's baseline answer judged against the reference."""
    import torch

    from kgb.evaluate.correctness import clone_exact, compare_outputs, poison_
    from kgb.evaluate.draws import draw_inputs
    from kgb.operators import CaseTag

    spec = operators.load(op)
    written = spec.written_args
    rows = []
    for case in spec.cases_for({CaseTag(t) for t in tags}):
        entry = spec.entry_of(case)
        hook = getattr(spec.module, "speed_baseline", None)
        found = hook(entry.name, device) if hook else None
        if found is None:
            return {"op": op, "baseline": "reference", "cases": [], "note": "no baseline other than the reference"}
        name, fn = found
        pristine = draw_inputs(spec, case, case.seed, device)
        ref_in, base_in = clone_exact(pristine), clone_exact(pristine)
        for n, t in base_in.items():
            if n in spec.output_args and isinstance(t, torch.Tensor):
                poison_(t)
        args, kwargs = entry.bind(ref_in)
        with torch.no_grad():
            expected = spec.reference_for(entry.name)(*args, **kwargs)
        args, kwargs = entry.bind(base_in)
        print(f"case {case.name}", file=sys.stderr, flush=True)  # a crash below is this case's
        try:
            actual = fn(*args, **kwargs)
            if device == "cuda":
                torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 - the row says what the library said
            rows.append({"case": case.name, "agrees": False, "message": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        exp = {"return": expected, **{n: ref_in[n] for n in written if isinstance(ref_in.get(n), torch.Tensor)}}
        act = {"return": actual, **{n: base_in[n] for n in written if isinstance(base_in.get(n), torch.Tensor)}}
        message, _, _ = compare_outputs(spec, case, act, exp, base_in)
        rows.append({"case": case.name, "agrees": message is None, "message": (message or "")[:300]})
    return {"op": op, "baseline": name if rows else "-", "cases": rows}


def run_one(op: str, tags: str) -> dict:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--one", op, "--cases", tags], capture_output=True, text=True,
                          timeout=600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        at = [line for line in done.stderr.splitlines() if line.startswith("case ")]
        return {"op": op, "baseline": "?", "cases": [], "seconds": time.perf_counter() - started,
                "note": f"the process ended with {done.returncode} at {at[-1] if at else 'its start'}: "
                        f"{done.stderr.strip()[-300:]}"}
    return {**json.loads(lines[-1]), "seconds": time.perf_counter() - started}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", default="cublas")
    parser.add_argument("--ops", default="")
    parser.add_argument("--cases", default="smoke,check,bench")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--json", default=None)
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    device = chips.local_device()
    if args.one:
        print(json.dumps(agree(args.one, tuple(args.cases.split(",")), device)), flush=True)
        return 0
    ops = operators.select(args.source, [o for o in args.ops.split(",") if o] or None)
    print(f"{len(ops)} operator(s) on {chips.device_name()} ({device}), cases {args.cases}", file=sys.stderr)
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda op: run_one(op, args.cases), ops))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    print("| operator | baseline | cases agreeing | first disagreement |\n|---|---|---|---|")
    agreeing = 0
    for r in results:
        good = sum(c["agrees"] for c in r["cases"])
        first = next((f"{c['case']}: {c['message']}" for c in r["cases"] if not c["agrees"]), r.get("note", ""))
        agreeing += bool(r["cases"]) and good == len(r["cases"])
        print(f"| {r['op']} | {r['baseline']} | {good}/{len(r['cases'])} | {first.replace('|', '/')[:200]} |")
    print(f"\n{agreeing} of {len(ops)} operators: the baseline agrees with the reference on every case.")
    return 0 if agreeing == len(ops) else 1


if __name__ == "__main__":
    sys.exit(main())
