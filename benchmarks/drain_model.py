"""How long a sweep's timing turns would have waited for the running work sections, had some
kinds of section been split into shorter ones; from the judges' trace (KGB_GPU_TRACE); prints
a table.

    python benchmarks/drain_model.py TRACE.jsonl[.gz] [--cap 0.02] [--kinds compare,draw,reference]

A turn asked for stops new sections and waits for the running ones to end (its drain;
kgb.evaluate.timing_lock). On the H200 the drains held the GPU 48 s of a 210 s first job
(session 58), while it did only what the sections left running did. This is a first-order
model of them: each turn's drain is the longest time any section running when the turn was
asked (its `gathered` moment) still had to run, and a section of a split kind runs at most
--cap seconds past that moment (its next piece waits behind the turn). What a shorter drain
changes later (sections and turns starting sooner) is not followed, nor what splitting a
section costs. A judge can split only its own work (comparisons, say); the candidate's calls
are what they are.
"""

from __future__ import annotations

import argparse
import bisect
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpu_trace import read  # noqa: E402


def modelled_drains(records: list[dict], caps: dict[str, float]) -> float:
    """The turns' drains summed, each the longest any running section still had to run when
    the turn was asked, a section of a kind in `caps` at most its cap."""
    sections = sorted((r for r in records if r["kind"] == "section"), key=lambda r: r["began"])
    began = [s["began"] for s in sections]
    longest_section = max((s["ended"] - s["began"] for s in sections), default=0.0)
    total = 0.0
    for turn in (r for r in records if r["kind"] == "turn"):
        at = turn.get("gathered", turn["asked"])
        first, last = bisect.bisect_left(began, at - longest_section), bisect.bisect_left(began, at)
        total += max((min(s["ended"] - at, caps.get(s["what"], math.inf))
                      for s in sections[first:last] if s["ended"] > at), default=0.0)
    return total


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("trace", type=Path)
    parser.add_argument("--cap", type=float, default=0.02, help="the longest piece of a split section, seconds")
    parser.add_argument("--kinds", default="compare,draw,reference", help="the kinds of section split, one at a time, then all")
    args = parser.parse_args()
    records = read(args.trace)
    turns = [r for r in records if r["kind"] == "turn"]
    if not turns:
        print(f"{args.trace}: no timing turns in the trace", file=sys.stderr)
        return 1
    kinds = [k for k in args.kinds.split(",") if k]
    every = sorted({r["what"] for r in records if r["kind"] == "section"})
    waited = sum(t["drained"] - t.get("gathered", t["asked"]) for t in turns if "drained" in t)
    print(f"{len(turns)} turns; asked to drained, summed: {waited:.1f} s (turns queued behind turns included)")
    print("| sections split | modelled drains (s) |\n|---|---|")
    print(f"| none | {modelled_drains(records, {}):.1f} |")
    rows = [(k, [k]) for k in kinds] + ([(", ".join(kinds), kinds)] if len(kinds) > 1 else []) + [("every kind", every)]
    for name, split in rows:
        print(f"| {name}, at most {args.cap:g} s | {modelled_drains(records, dict.fromkeys(split, args.cap)):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
