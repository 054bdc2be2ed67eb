"""What a sweep's timing turns waited for, from the judges' trace (KGB_GPU_TRACE).

    python benchmarks/gpu_trace.py TRACE.jsonl[.gz] [--until S]

Every judge appends its turns, the stretches of work sections it held and its process
starts to the file (kgb.evaluate.timing_lock.trace); `benchmarks/throughput.py --trace`
keeps one for its sweep and prints this report after its own. A turn drains the sections
running when it got the GPU's lock: the one that ended last is what it waited for. With
--until, only the turns asked for in the trace's first S seconds: a sweep cut short set
against the same stretch of a whole one.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb.evaluate.baseline_judge import AHEAD  # noqa: E402
from kgb.evaluate.first_call import remembered  # noqa: E402

# A first job's first half minute, while the first trials' candidates compile: the GPU stood idle
# 18.2-18.6 s of it on an H100 in session 69, which baselines timed ahead fill (kgb.baseline_scout)
RAMP_S = 30.0


def read(path: Path) -> list[dict]:
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def first_turns(records: list[dict], until_s: float) -> list[dict]:
    """The records with only the turns asked for in the first `until_s` seconds of the trace;
    the sections and starts they ran beside are all kept."""
    first = min(r["asked"] for r in records)
    return [r for r in records if r["kind"] != "turn" or r["asked"] - first < until_s]


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def _starts_by_wave(starts: list[dict]) -> str:
    """The starts of the sweep's first ten seconds (the engine's spares, then one judge per
    evaluation let in, all at once) set apart from the later ones: the first are the same
    work in every sweep of the same width, so slower ones say the host is slower; the later
    ones also pay for whatever starts beside them (session 28 against session 26's call 2:
    11.00 against 10.31 s for the first, 7.67 s beside 5.2 others against 4.66 s beside 3.9
    for the later)."""
    first = min(s["began"] for s in starts)
    wave = [s for s in starts if s["began"] - first < 10.0]
    later = [s for s in starts if s not in wave]
    line = f"the {len(wave)} starts of the first 10 s: median {statistics.median(s['ended'] - s['began'] for s in wave):.2f} s"
    if later:
        beside = [sum(1 for o in later if o is not s and o["began"] < s["ended"] and s["began"] < o["ended"])
                  for s in later]
        line += (f"; the {len(later)} later: median {statistics.median(s['ended'] - s['began'] for s in later):.2f} s, "
                 f"{statistics.mean(beside):.1f} others starting beside each")
    return line


def _ready_by_period(starts: list[dict], sections: list[dict], period: float = 100.0) -> str:
    """From a judge's start to its first work section, by the period of the sweep it started
    in: what a new evaluation waits for when no spare is ready (its candidate processes'
    start, then the judge's own CUDA and clock). A spare's also holds any wait for its
    request, which early in a sweep can be most of it. On the H200 the later periods' grew
    from 9.1 to 15.5 s as the operators got quicker (session 29; session 26: 7.2 to 11.0)."""
    first_section: dict[int, float] = {}
    for s in sections:
        first_section[s["pid"]] = min(first_section.get(s["pid"], s["asked"]), s["asked"])
    t0 = min(s["began"] for s in starts)
    by: dict[int, list[float]] = defaultdict(list)
    for s in starts:
        if s["pid"] in first_section:
            by[int((s["began"] - t0) // period)].append(first_section[s["pid"]] - s["began"])
    return "a start to its judge's first section, by when it started: " + ", ".join(
        f"{k * period:.0f}-{(k + 1) * period:.0f} s: {statistics.median(v):.2f} s ({len(v)})" for k, v in sorted(by.items()))


def _warm_ups(warm: list[dict], t0: float, early_s: float = 20.0) -> str:
    """The spares' warm-ups before their requests (kgb.evaluate.spare: their CUDA context, the
    judge's clock, the draws, then the comparison kernels), those of the job's first seconds
    apart: on a host whose Triton cache is empty they compile the comparison kernels, where the
    others load them (session 67: a job's first spares reached their first work section 8.5-8.8 s
    after their start)."""
    def summary(ws: list[dict]) -> str:
        spans = [w["ended"] - w["began"] for w in ws]
        comparing = [w.get("comparisons", 0.0) for w in ws]
        cut = sum(1 for w in ws if w.get("cut_short"))  # stopped early: the request had come
        return (f"{len(ws)}, median {statistics.median(spans):.2f} s (the comparison kernels "
                f"{statistics.median(comparing):.2f} s), most {max(spans):.2f} s"
                + (f", {cut} cut short by their request" if cut else ""))
    early = [w for w in warm if w["began"] - t0 < early_s]
    later = [w for w in warm if w not in early]
    line = f"spares' warm-ups begun in the first {early_s:.0f} s: {summary(early) if early else 0}"
    return line + (f"; later: {summary(later)}" if later else "")


def _closed_by_period(turns: list[dict], t0: float, end: float, period: float = 20.0) -> str:
    """The share of each period in which no new work section could start: some turn was
    asked for or held (from its ask to its end; turns overlap). On the H200 at 20 in flight
    (session 33) it was 49-69% of every 20 s from the 20th second on: what a judgement's
    checks wait for most."""
    spans: list[list[float]] = []
    for a, b in sorted((t["asked"] - t0, t["ended"] - t0) for t in turns):
        if spans and a <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], b)
        else:
            spans.append([a, b])
    shares = []
    for k in range(int((end - t0) // period) + 1):
        lo, hi = k * period, (k + 1) * period
        shares.append(f"{lo:.0f} s: {100 * sum(max(0.0, min(b, hi) - max(a, lo)) for a, b in spans) / period:.0f}%")
    return "no section could start (a turn asked for or held), each 20 s: " + ", ".join(shares)


# What the GPU was doing at each moment, by the most exclusive thing going on then
GPU_TIME = ("a turn measuring (or spinning the GPU up)", "a turn draining the sections", "a turn behind another turn",
            "work sections only", "nothing (no section, no turn)")


def gpu_time(turns: list[dict], sections: list[dict]) -> dict[str, float]:
    """Seconds of the trace's span in each of GPU_TIME: a moment counts once, for the most
    exclusive thing then (a turn measuring over a turn draining, over one waiting behind
    another turn, over sections). On the H200 in session 35's call 1: measuring 31%,
    draining 22%, sections only 46%, nothing 0.4%. Outside the turns no section ran 3.6% of
    the time, and from a moment there the GPU next fell quiet 0.79 s later on average: a
    turn that waited for a quiet moment rather than stopping new sections and draining the
    running ones (0.25 s on average, median 0.165 s) would wait three times as long."""
    edges: list[tuple[float, int, int]] = []  # (when, level, +1 or -1); level 0 is the most exclusive
    for t in turns:
        # a turn gathering company (KGB_GATHER_S) stops no section: from asked to gathered it
        # is not behind anything (traces before session 37 have no `gathered`)
        waiting = (t.get("gathered", t["asked"]), t["began"])
        for level, (a, b) in enumerate(((t["drained"], t["ended"]), (t["began"], t["drained"]), waiting)):
            if b > a:
                edges += [(a, level, 1), (b, level, -1)]
    for s in sections:
        if s["ended"] > s["began"]:
            edges += [(s["began"], 3, 1), (s["ended"], 3, -1)]
    seconds = dict.fromkeys(GPU_TIME, 0.0)
    if not edges:
        return seconds
    edges.sort()
    active = [0, 0, 0, 0]
    last = edges[0][0]
    for when, level, step in edges:
        now = next((i for i, n in enumerate(active) if n > 0), 4)
        seconds[GPU_TIME[now]] += when - last
        active[level] += step
        last = when
    return seconds


def idle_s(turns: list[dict], sections: list[dict], start: float, end: float) -> float:
    """Seconds of [start, end] with no turn (from its ask) and no work section on the GPU."""
    spans = sorted([(max(t.get("gathered", t["asked"]), start), min(t["ended"], end)) for t in turns]
                   + [(max(r["began"], start), min(r["ended"], end)) for r in sections])
    busy, reach = 0.0, start
    for a, b in spans:
        if b > reach:
            busy += b - max(a, reach)
            reach = b
    return (end - start) - busy


def clocks_line(measures: list[dict]) -> str:
    """The SM clock as each measurement started, by whose call: its median and lowest, how many
    started 5% or more below the clock's most, with what held it down (NVML's reasons), and
    how many ended there (a long call's repetitions may bring the power cap down on it)."""
    parts = []
    for who in sorted({m.get("who", "replay") for m in measures}):
        ms = [m for m in measures if m.get("who", "replay") == who]
        low = [m for m in ms if m["sm_mhz"] < 0.95 * m["max_sm_mhz"]]
        why = Counter(r for m in low for r in m.get("held_by", []))
        ended = [m for m in ms if m.get("end_sm_mhz")]
        ended_low = [m for m in ended if m["end_sm_mhz"] < 0.95 * m["max_sm_mhz"]]
        parts.append(f"{who} {len(ms)}: median {statistics.median(m['sm_mhz'] for m in ms):.0f} MHz, lowest "
                     f"{min(m['sm_mhz'] for m in ms)}, {len(low)} at 5% or more below {ms[0]['max_sm_mhz']}"
                     + (f" (held down by {', '.join(f'{r} {n}' for r, n in why.most_common())})" if why else "")
                     + (f", {len(ended_low)} of {len(ended)} ended there" if ended else ""))
    return "the SM clock as a measurement started: " + "; ".join(parts)


def first_calls(firsts: list[dict], others: list[dict] = ()) -> str:
    """Judge v29's first calls on the timed inputs against the repetitions after them
    (kgb.evaluate.first_call): how many replays warmed up on turned values (or, judge v31, on
    another draw), how the ratios of those timed by the GPU's count spread, which were timed by
    their first call, and the five furthest over their repetitions, with what of `others`
    (process starts and ends, memory releases, work sections) another process ran beside each."""
    turned = [r for r in firsts if r.get("turned_bytes")]
    drawn = [r for r in firsts if r.get("drawn_bytes")]  # judge v31: another draw where nothing turns
    counted = [r for r in turned + drawn if r.get("first_us") is not None and r.get("repeated_us")]
    ratios = sorted(r["first_us"] / r["repeated_us"] for r in counted)
    flagged = [r for r in counted if remembered(r["first_us"], r["repeated_us"])]
    # under judge v31 a replay warms up on the timed values only where its inputs hold nothing
    why = "no input to turn or draw" if any("drawn_bytes" in r for r in firsts) else "no floating storage to turn"
    line = (f"first calls on the timed inputs: {len(firsts)} replays, {len(turned)} warmed up on turned values"
            + (f", {len(drawn)} on another draw" if drawn else "")
            + f" ({len(counted)} of them with a first call by the repetitions' clock), "
            f"{len(firsts) - len(turned) - len(drawn)} on the timed values ({why})")
    if ratios:
        line += ("; first / repetitions: " + ", ".join(f"p{int(q * 100)} {_quantile(ratios, q):.3f}"
                                                        for q in (0.01, 0.1, 0.5, 0.9, 0.99))
                 + f", most {ratios[-1]:.3f}; timed by the first call: {len(flagged)}"
                 + _split_by_starts(counted, [o for o in others if o["kind"] == "start"])
                 + "".join(f"\n  timed by the first call: {_first_call(r, others)}" for r in flagged[:20])
                 + "".join(f"\n  furthest over: {_first_call(r, others)}" for r in sorted(
                     counted, key=lambda r: r["first_us"] / r["repeated_us"])[-5:][::-1]))
    return line


def _split_by_starts(counted: list[dict], starts: list[dict]) -> str:
    """The ratios of first calls with another process starting CUDA beside them, against the
    others': the turn keeps work sections out, not starts (session 53)."""
    beside_one = [r for r in counted if beside(r, starts)]
    parts = []
    for name, rs in (("with a process start beside", beside_one),
                     ("without", [r for r in counted if r not in beside_one])):
        ratios = sorted(r["first_us"] / r["repeated_us"] for r in rs)
        parts.append(f"{name} {len(rs)}" + (f" (p99 {_quantile(ratios, 0.99):.3f}, most {ratios[-1]:.3f}, over 1.1 "
                                            f"{sum(x > 1.1 for x in ratios)})" if ratios else ""))
    return "\n  " + "; ".join(parts)


def beside(r: dict, others: list[dict], after_s: float = 0.0) -> list[dict]:
    """Those of `others` (another process's) that overlap the record `r`, each taken to last
    `after_s` past its end."""
    return [o for o in others
            if o["pid"] != r["pid"] and o["began"] < r["ended"] and r["began"] < o["ended"] + after_s]


def _first_call(r: dict, others: list[dict]) -> str:
    near = Counter(o["kind"] for o in beside(r, others))
    return (f"{r.get('tag', '?')} ({r.get('mode')}): first {r['first_us']:.1f} us, repetitions "
            f"{r['repeated_us']:.1f} us, x{r['first_us'] / r['repeated_us']:.3f}"
            + (f"; beside it: {', '.join(f'{n} {k}' for k, n in sorted(near.items()))}" if near else ""))


def _longest_sections(sections: list[dict], shown: int = 10) -> list[str]:
    """The longest sections one by one, each with its place among its judge's sections of that
    phase: a first-use compile or load inside a section stands out as a long one early in its
    judge, where a section long by its work is long wherever it falls."""
    place: dict[tuple, int] = defaultdict(int)
    ranked = []
    for s in sorted(sections, key=lambda s: s["began"]):
        key = (s["pid"], s["what"] or "?")
        place[key] += 1
        ranked.append((s["ended"] - s["began"], s.get("tag") or "?", key, place[key]))
    lines = [f"\n| the {shown} longest sections: operator | phase | seconds | its judge's nth of that phase |",
             "|---|---|---|---|"]
    for seconds, tag, key, nth in sorted(ranked, key=lambda r: -r[0])[:shown]:
        lines.append(f"| {tag} | {key[1]} | {seconds:.2f} | {nth} of {place[key]} |")
    return lines


def report(records: list[dict]) -> str:
    turns = [r for r in records if r["kind"] == "turn"]
    sections = [r for r in records if r["kind"] == "section"]
    starts = [r for r in records if r["kind"] == "start"]
    lines = []
    drains = [r["drained"] - r["began"] for r in turns]
    measures = [r["ended"] - (r["measured"] or r["drained"]) for r in turns]
    lines.append(f"{len(turns)} turns: drains {sum(drains):.1f} s (median {statistics.median(drains or [0]):.2f}, "
                 f"p90 {_quantile(drains, 0.9):.2f}, max {max(drains, default=0):.2f}), measurements "
                 f"{sum(measures):.1f} s, behind other turns {sum(r['began'] - r.get('gathered', r['asked']) for r in turns):.1f} s, "
                 f"{sum(r['crowded'] for r in turns)} crowded")
    if turns:
        lines.append(_closed_by_period(turns, min(r["asked"] for r in records), max(r["ended"] for r in records)))
    spent = gpu_time(turns, sections)
    if sum(spent.values()) > 0:
        lines.append("the GPU's time: " + ", ".join(
            f"{what} {s:.1f} s ({100 * s / sum(spent.values()):.0f}%)" for what, s in spent.items()))
        # a first job's ramp: the first trials' candidates compile while the GPU waits
        t0 = min(r["asked"] for r in records)
        lines.append(f"the GPU idle (no turn, no section) in the trace's first {RAMP_S:.0f} s: "
                     f"{idle_s(turns, sections, t0, t0 + RAMP_S):.1f} s")

    # what each drain waited for: the section of another judge, running when the turn got
    # the lock, that ended last
    waited: dict[str, list[float]] = defaultdict(list)
    by_operator: dict[tuple[str, str], list[float]] = defaultdict(list)  # whose section, in which phase
    for t in turns:
        running = [s for s in sections if s["pid"] != t["pid"] and s["began"] < t["began"] < s["ended"]]
        if running and t["drained"] > t["began"]:
            last = max(running, key=lambda s: s["ended"])
            wait = min(last["ended"], t["drained"]) - t["began"]
            waited[last["what"] or "?"].append(wait)
            by_operator[(last.get("tag") or "?", last["what"] or "?")].append(wait)
    lines.append("\n| the drain waited for | turns | seconds | longest |\n|---|---|---|---|")
    for what, waits in sorted(waited.items(), key=lambda kv: -sum(kv[1])):
        lines.append(f"| {what} | {len(waits)} | {sum(waits):.1f} | {max(waits):.2f} |")
    # the sections worth shortening: an operator's few long ones (a reference compiling its
    # kernels, a comparison that waits for the device per expert) stand out here, not above
    lines.append("\n| the drain waited for: operator, phase (the 8 longest in all) | turns | seconds |\n|---|---|---|")
    for (tag, what), waits in sorted(by_operator.items(), key=lambda kv: -sum(kv[1]))[:8]:
        lines.append(f"| {tag}, {what} | {len(waits)} | {sum(waits):.1f} |")

    held: dict[str, list[float]] = defaultdict(list)
    for s in sections:
        held[s["what"] or "?"].append(s["ended"] - s["began"])
    lines.append("\n| work section (its longest phase) | count | seconds | median | p90 | max |\n|---|---|---|---|---|---|")
    for what, spans in sorted(held.items(), key=lambda kv: -sum(kv[1])):
        lines.append(f"| {what} | {len(spans)} | {sum(spans):.1f} | {statistics.median(spans):.3f} | "
                     f"{_quantile(spans, 0.9):.3f} | {max(spans):.2f} |")

    lines.extend(_longest_sections(sections))

    if ahead := [t for t in turns if t.get("tag", "").endswith(AHEAD)]:  # kgb.baseline_scout's
        t0 = min(r["asked"] for r in records)
        lines.append(f"\nturns of baselines timed ahead of their trials: {len(ahead)}, measuring "
                     f"{sum(t['ended'] - (t['measured'] or t['drained']) for t in ahead):.1f} s, "
                     f"{len({t['tag'] for t in ahead})} operators, the last ended {max(t['ended'] for t in ahead) - t0:.1f} s "
                     "after the trace's start")

    # turns that measured while a judge or spare was starting its processes' CUDA contexts
    beside = [t for t in turns if t["measured"] is not None and any(
        s["began"] < t["ended"] and t["measured"] < s["ended"] for s in starts)]
    apart = [t for t in turns if t["measured"] is not None and t not in beside]

    def measuring(ts: list[dict]) -> str:
        spans = [t["ended"] - t["measured"] for t in ts]
        return f"{len(ts)} ({sum(spans):.1f} s, median {statistics.median(spans):.3f} s)" if spans else "0"

    lines.append(f"\n{len(starts)} process starts ({sum(s['ended'] - s['began'] for s in starts):.1f} s); "
                 f"turns that measured beside one: {measuring(beside)}, the others: {measuring(apart)}")
    if starts:
        lines.append(_starts_by_wave(starts))
        lines.append(_ready_by_period(starts, sections))
    if warm := [r for r in records if r["kind"] == "warm-up"]:
        lines.append(_warm_ups(warm, min(r["began"] for r in records)))
    # judge v21 closes a candidate process and waits for it to go before timing a baseline
    # (kgb.evaluate.bench_timing): what that wait costs a judgement
    waited = [r["ended"] - r["began"] for r in records if r["kind"] == "exit" and r.get("waited")]
    if waited:
        lines.append(f"candidate processes closed and waited for before a baseline: {len(waited)}, "
                     f"{sum(waited):.1f} s (median {statistics.median(waited):.3f}, max {max(waited):.3f})")
    measures = [r for r in records if r["kind"] == "measure"]
    if measures:  # each replay's measurement in a turn, by step (kgb.evaluate.timing.measure)
        lines.append("\n| a measurement's step | seconds | median | p90 | max |\n|---|---|---|---|---|")
        named = sorted({k for m in measures for k in m["steps"]}, key=lambda k: -sum(m["steps"].get(k, 0) for m in measures))
        for k in named:
            spans = [m["steps"][k] for m in measures if k in m["steps"]]
            lines.append(f"| {k} | {sum(spans):.1f} | {statistics.median(spans):.3f} | {_quantile(spans, 0.9):.3f} "
                         f"| {max(spans):.2f} |")
        whose: dict[str, list[dict]] = defaultdict(list)  # the judge's replays, and a chip's first baselines
        for m in measures:
            whose[m.get("who", "replay")].append(m)
        lines.append("measurements by whose call: " + "; ".join(
            f"{who} {len(ms)} ({sum(m['ended'] - m['began'] for m in ms):.1f} s, "
            f"{sum(m['mode'] == 'graph' for m in ms)} on graphs)" for who, ms in sorted(whose.items())))
        clocked = [m for m in measures if m.get("sm_mhz")]
        if clocked:  # the SM clock as each started (kgb.evaluate.nvml): a replay, timed first in its turn, slower?
            lines.append(clocks_line(clocked))
        slowest = sorted(measures, key=lambda m: m["began"] - m["ended"])[:8]
        lines.append("the slowest: " + "; ".join(
            f"{m.get('who', 'replay')} {m['tag']} {m['ended'] - m['began']:.2f} s {m['mode']} x{m['repeats']} "
            + " ".join(f"{k} {v:.2f}" for k, v in m["steps"].items()) for m in slowest))
    held = {}  # each judge's most, by the end of any of its turns (kgb.evaluate.timing_lock._peak_mib)
    for r in turns:
        if r.get("peak_mib") is not None and r["peak_mib"] >= held.get(r["pid"], (0, ""))[0]:
            held[r["pid"]] = (r["peak_mib"], r.get("tag", "?"))
    if held:
        most = sorted(held.values(), reverse=True)[:8]
        lines.append("judges' most GPU memory held (their caching allocator's, by a turn's end): "
                     + ", ".join(f"{tag} {mib:,} MiB" for mib, tag in most))
    reserved = [r for r in records if r["kind"] == "memory"]
    if reserved:  # judges' bench phases, each under a reservation of GPU memory (kgb.evaluate.memory_ledger)
        waits = sorted(((r["began"] - r["asked"], r.get("tag", "?")) for r in reserved), reverse=True)
        lines.append(f"bench memory reserved {len(reserved)} times, waited {sum(w for w, _ in waits):.1f} s "
                     f"({sum(w > 0.1 for w, _ in waits)} over 0.1 s); the longest waits: "
                     + ", ".join(f"{tag} {w:.1f} s" for w, tag in waits[:5]))
    if firsts := [r for r in records if r["kind"] == "first call"]:
        lines.append(first_calls(firsts, [r for r in records if r["kind"] in ("start", "exit", "release", "section")]))
    if alone := [r for r in records if r["kind"] == "measure" and "alone" in r]:
        # judge v31: the replays of runs again for a case timed by its first call (kgb.evaluate.quiet_gate)
        waits = [r["alone_wait_s"] for r in alone]
        lines.append(f"replays measured holding the quiet gate: {len(alone)}, {sum(r['alone'] for r in alone)} with "
                     f"nothing under way; waited {sum(waits):.2f} s (most {max(waits):.2f})")
    gate = [r for r in records if r["kind"] == "gate"]
    if gate:  # the harness's GPU memory gate moved its ceiling (kgb.evaluate.gpus.MemoryGate)
        first = min(r["asked"] for r in records)
        lines.append("memory gate's ceiling: " + ", ".join(
            f"{r['ceiling'] if r['ceiling'] is not None else 'none'} at {r['began'] - first:.0f} s" for r in gate))
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("trace", type=Path)
    parser.add_argument("--until", type=float, default=None, help="only the turns asked for in the first S seconds")
    args = parser.parse_args()
    records = read(args.trace)
    print(report(first_turns(records, args.until) if args.until is not None else records))
