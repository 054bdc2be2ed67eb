"""Do two sweeps time the same? Per bench case, the candidate's latency in one sweep's
`--json` file (benchmarks/throughput.py) against another's: how many agree within 2% (within
0.5 us under 10 us, issue 11's bound for the judge against Nsight Compute) and within 5%, the
median ratio, and the cases furthest apart.

    python benchmarks/agreement.py NEW.json OLD.json [--worst 8]

Either may be a job's event log instead (events.jsonl, or .jsonl.gz as docs/results keeps
them): `run.py`'s own sweeps, as benchmarks/first_run.py --events keeps them.

With --baselines, two event logs' speed baselines instead (their BaselineMeasured events, the
first of each case whose turn was not crowded), the new log's split into those its job's scout
timed ahead of their trials (kgb.baseline_scout) and those its trials' judges timed.

Verdicts are compared too: an operator judged in both whose status differs is listed.
From event logs, each timing's spread ((p80 - p20) / median of its repetitions) is shown
beside the cases furthest apart, and the cases apart by over 5% are counted by whether
either timing's repetitions were spread over SPLIT_SPREAD: on the H200 (session 37) half of
those apart were, against one in twenty of those that agreed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb.evaluate.first_call import TIMED_BY_FIRST_CALL  # noqa: E402
from kgb.evaluate.verdict import TimedBy, Turn  # noqa: E402
from kgb.tracking.events import BaselineMeasured  # noqa: E402
from kgb.tracking.log import read_events  # noqa: E402
from kgb.tracking.projections import judged  # noqa: E402

SMALL_US = 10.0  # under this, the bound is absolute
SMALL_BOUND_US = 0.5
SPLIT_SPREAD = 0.05  # a timing whose repetitions spread this much did not settle on one time


@dataclass(frozen=True)
class Pair:
    op: str
    case: str
    new_us: float
    old_us: float
    new_spread: float | None = None  # where the sweep says (event logs do)
    old_spread: float | None = None
    first_call: str = ""  # which sweep timed it by its first call: "new", "old" or "both" (event logs say)

    @property
    def ratio(self) -> float:
        return self.new_us / self.old_us

    def within(self, share: float) -> bool:
        bound = SMALL_BOUND_US if self.old_us < SMALL_US else share * self.old_us
        return abs(self.new_us - self.old_us) <= bound

    @property
    def split(self) -> bool | None:
        """Whether either timing's repetitions were spread over SPLIT_SPREAD; None unknown."""
        if self.new_spread is None or self.old_spread is None:
            return None
        return max(self.new_spread, self.old_spread) > SPLIT_SPREAD


def pairs(new: dict, old: dict) -> list[Pair]:
    """Every bench case that both sweeps timed (a case whose latency is None was not)."""
    found = []
    for op, entry in new.items():
        for case, timing in entry.get("cases", {}).items():
            before = old.get(op, {}).get("cases", {}).get(case)
            if timing and before and timing[0] is not None and before[0] is not None:
                by_first = [name for name, sweep in (("new", entry), ("old", old[op]))
                            if case in sweep.get("first_calls", ())]
                found.append(Pair(op, case, float(timing[0]), float(before[0]),
                                  entry.get("spreads", {}).get(case), old[op].get("spreads", {}).get(case),
                                  "both" if len(by_first) == 2 else "".join(by_first)))
    return found


def verdicts_that_differ(new: dict, old: dict) -> list[tuple[str, str, str]]:
    return [(op, new[op]["status"], old[op]["status"]) for op in new
            if op in old and new[op]["status"] != old[op]["status"]]


def sweep_of(path: Path) -> dict:
    """A sweep as throughput.py's --json has it: {op: {"status", "cases": {case: [latency_us]}}};
    from an event log, each operator's last verdict, with "spreads": {case: spread} and
    "first_calls": the cases timed by their first call (kgb.evaluate.first_call)."""
    if not path.name.endswith((".jsonl", ".jsonl.gz")):
        return json.loads(path.read_text())
    sweep = {}
    for op, v in judged(read_events(path)):
        bench = [case for case in v.cases if case.tag == "bench"]
        sweep[op] = {"status": str(v.status), "cases": {case.name: [case.latency_us] for case in bench},
                     "spreads": {case.name: case.latency_spread for case in bench if case.latency_spread is not None},
                     "first_calls": [case.name for case in bench if _by_first_call(case)]}
    return sweep


def _by_first_call(case) -> bool:
    # judge v29's logs say it only in the timing mode
    return case.timed_by == TimedBy.FIRST_CALL or TIMED_BY_FIRST_CALL in (case.timing_mode or "")


def baselines_of(path: Path) -> dict[tuple[str, str], tuple[float, bool]]:
    """Each case's baseline in an event log, and whether it was timed ahead of its trials."""
    found: dict[tuple[str, str], tuple[float, bool]] = {}
    for e in read_events(path):
        if isinstance(e, BaselineMeasured) and e.turn is not Turn.CROWDED:
            found.setdefault((e.op, e.case), (e.latency_us, e.trial is None))
    return found


def baseline_table(new: Path, old: Path) -> int:
    now, before = baselines_of(new), baselines_of(old)
    both = [(Pair(op, case, us, before[(op, case)][0]), ahead) for (op, case), (us, ahead) in now.items()
            if (op, case) in before]
    if not both:
        print("no case's baseline was measured in both logs")
        return 1
    print("| the new log's baselines | cases in both | within 2% (0.5 us under 10 us) | within 5% | median ratio, new / old |\n"
          "|---|---|---|---|---|")
    for what, group in (("timed ahead of their trials", [p for p, ahead in both if ahead]),
                        ("timed by the trials' judges", [p for p, ahead in both if not ahead]),
                        ("all", [p for p, _ in both])):
        if group:
            print(f"| {what} | {len(group)} | {sum(p.within(0.02) for p in group)} | {sum(p.within(0.05) for p in group)} "
                  f"| {statistics.median(p.ratio for p in group):.4f} |")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("new", type=Path)
    parser.add_argument("old", type=Path)
    parser.add_argument("--worst", type=int, default=8, help="list this many of the cases furthest apart")
    parser.add_argument("--baselines", action="store_true", help="compare two event logs' speed baselines")
    args = parser.parse_args()
    if args.baselines:
        return baseline_table(args.new, args.old)
    new, old = sweep_of(args.new), sweep_of(args.old)
    found = pairs(new, old)
    if not found:
        print("no bench case was timed in both sweeps")
        return 1
    print("| figure | value |\n|---|---|")
    print(f"| operators judged in both | {len(set(new) & set(old))} |")
    print(f"| bench cases timed in both | {len(found)} |")
    print(f"| within 2% (0.5 us under 10 us) | {sum(p.within(0.02) for p in found)} |")
    print(f"| within 5% (0.5 us under 10 us) | {sum(p.within(0.05) for p in found)} |")
    print(f"| median ratio, new / old | {statistics.median(p.ratio for p in found):.4f} |")
    apart = [p for p in found if not p.within(0.05) and p.split is not None]
    if apart:
        print(f"| apart by over 5%, either timing's repetitions spread over {SPLIT_SPREAD} | "
              f"{sum(p.split for p in apart)} of {len(apart)} |")
    if firsts := [p for p in found if p.first_call]:
        print(f"| timed by their first call, new / old | {sum(p.first_call in ('new', 'both') for p in firsts)} / "
              f"{sum(p.first_call in ('old', 'both') for p in firsts)} |")
    print("\nfurthest apart (new / old, us):")
    for p in sorted(found, key=lambda p: abs(p.ratio - 1), reverse=True)[:args.worst]:
        spreads = f", spreads {p.new_spread:.2f} / {p.old_spread:.2f}" if p.split is not None else ""
        first = f"; timed by its first call in {p.first_call}" if p.first_call else ""
        print(f"  {p.op} {p.case}: {p.new_us:.2f} / {p.old_us:.2f} ({(p.ratio - 1) * 100:+.1f}%{spreads}{first})")
    differ = verdicts_that_differ(new, old)
    print(f"\nverdicts that differ: {len(differ)}")
    for op, now, before in differ:
        print(f"  {op}: {now} (was {before})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
