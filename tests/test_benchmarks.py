"""The comparisons the GPU benchmarks print: two sweeps' timings (benchmarks/agreement.py) and
the baselines an earlier sweep gives a later one (benchmarks/throughput.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import agreement  # noqa: E402
import throughput  # noqa: E402


def _sweep(**cases) -> dict:
    return {"aten::add": {"status": "correct", "cases": cases}}


def test_two_sweeps_agree_within_two_percent_over_10_us_and_half_a_microsecond_under():
    new = _sweep(big=[101.9, 50.0, "eager"], small=[5.4, 3.0, "graph"], slow=[110.0, 1.0, "eager"],
                 untimed=[None, 2.0, ""])
    old = _sweep(big=[100.0, 50.0, "eager"], small=[5.0, 3.0, "graph"], slow=[100.0, 1.0, "eager"],
                 untimed=[3.0, 2.0, "eager"])
    pairs = {p.case: p for p in agreement.pairs(new, old)}
    assert set(pairs) == {"big", "small", "slow"}  # a case timed in one sweep only is left out
    assert pairs["big"].within(0.02) and pairs["small"].within(0.02)
    assert not pairs["slow"].within(0.05)


def test_two_logs_baselines_compare_split_by_whether_the_new_ones_were_timed_ahead(tmp_path, capsys):
    from kgb.evaluate.verdict import Turn
    from kgb.tracking.events import BaselineMeasured
    from kgb.tracking.log import EventLog

    def log(name: str, figures: list[tuple[str, float, str | None, Turn]]) -> Path:
        events = EventLog(tmp_path / name / "events.jsonl")
        for case, us, trial, turn in figures:
            events.append(BaselineMeasured(job=name, trial=trial, op="aten::add", case=case, baseline="torch",
                                           latency_us=us, turn=turn))
        return events.path

    new = log("new", [("a", 101.0, None, Turn.ALONE), ("b", 110.0, None, Turn.ALONE), ("c", 50.5, "t1", Turn.ALONE),
                      ("d", 80.0, None, Turn.CROWDED), ("d", 40.0, "t2", Turn.ALONE), ("e", 1.0, None, Turn.ALONE)])
    old = log("old", [("a", 100.0, "t", Turn.ALONE), ("b", 100.0, "t", Turn.ALONE), ("c", 50.0, "t", Turn.ALONE),
                      ("d", 40.2, "t", Turn.ALONE)])
    assert agreement.baseline_table(new, old) == 0
    table = capsys.readouterr().out
    assert "| timed ahead of their trials | 2 | 1 | 1 | 1.0550 |" in table  # e: in one log only
    assert "| timed by the trials' judges | 2 | 2 | 2 |" in table  # d: its crowded figure never counts
    assert "| all | 4 | 3 | 3 |" in table


def test_a_jobs_event_log_compares_as_a_sweep_of_its_last_verdicts(job_log):
    """run.py's own sweeps (benchmarks/first_run.py --events) against each other or a throughput sweep."""
    from kgb.evaluate import CaseResult, Status, Verdict
    from kgb.evaluate.verdict import TimedBy

    def evaluated(status: str, latency: float | None, spread: float | None = None,
                  by: TimedBy = TimedBy.JUDGE) -> Verdict:
        return Verdict(Status(status), "", cases=(CaseResult("bench-1", "bench", Status(status), latency_us=latency,
                                                             latency_spread=spread, timed_by=by),
                                                  CaseResult("small", "check", Status(status))))

    log = job_log([("aten::add", evaluated("correct", 101.0, 0.3)), ("aten::neg", evaluated("wrong_output", None))])
    sweep = agreement.sweep_of(log)
    assert sweep == {"aten::add": {"status": "correct", "cases": {"bench-1": [101.0]}, "spreads": {"bench-1": 0.3},
                                   "first_calls": []},
                     "aten::neg": {"status": "wrong_output", "cases": {"bench-1": [None]}, "spreads": {},
                                   "first_calls": []}}
    [pair] = agreement.pairs(sweep, _sweep(**{"bench-1": [100.0, 50.0, "eager"]}))
    assert pair.within(0.02) and pair.split is None  # a throughput sweep says no spread
    [pair] = agreement.pairs(sweep, sweep)
    assert pair.split is True  # repetitions spread 30%: they did not settle on one time
    # a case timed by its first call in one job (kgb.evaluate.first_call) says so beside its ratio
    flagged = agreement.sweep_of(job_log([("aten::add", evaluated("correct", 155.0, 0.01, TimedBy.FIRST_CALL))]))
    assert flagged["aten::add"]["first_calls"] == ["bench-1"]
    [pair] = agreement.pairs(flagged, sweep)
    assert pair.first_call == "new" and not pair.within(0.05)
    assert agreement.pairs(sweep, flagged)[0].first_call == "old" and agreement.pairs(flagged, flagged)[0].first_call == "both"
    # judge v29's logs say it in the timing mode only
    from kgb.evaluate.first_call import remembered

    v29 = CaseResult("bench-1", "bench", Status.CORRECT, latency_us=155.0, timed_by=TimedBy.JUDGE,
                     timing_mode=f"eager ({remembered(155.0, 100.0)})")
    assert agreement._by_first_call(v29) and not agreement._by_first_call(CaseResult("b", "bench", Status.CORRECT))


def test_an_earlier_sweeps_baseline_is_given_only_for_the_same_spec_version(tmp_path):
    earlier = {"vllm::paged_attention_v2": {"spec_version": 2, "cases": {"b": [1.0, 400.0, "eager"]}},
               "aten::add": {"spec_version": 1, "cases": {"b": [1.0, 180.0, "eager"]}},
               "aten::sub": {"cases": {"b": [1.0, 170.0, "eager"]}}}  # before sweeps named versions
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(earlier))
    known = throughput._baselines(str(path), {"vllm::paged_attention_v2": 3, "aten::add": 1, "aten::sub": 1})
    assert known == {"aten::add": {"b": 180.0}, "aten::sub": {"b": 170.0}}


def test_an_evaluations_wall_splits_into_the_judges_phases_and_the_harness_steps():
    from kgb.evaluate import COMPILE_STORE, ENGINE, Status, Verdict

    verdict = Verdict(Status.CORRECT, "", phase_s={"draw": 1.0, "candidate": 2.0}, judge_s=3.5, gate_s=0.25,
                      harness_s={COMPILE_STORE: 0.5, ENGINE: 4.25})
    split = throughput.split_of(verdict, wall=5.5)
    assert split["judge, other"] == 0.5
    assert split[throughput.STORE] == 0.5 and split[throughput.HANDOFF] == 0.75
    assert split[throughput.OUTSIDE] == 0.5  # the wall less the judge, the gate, the store and the hand-off
    assert sum(split.values()) == 5.5


def test_the_host_profile_puts_a_commands_cpu_time_and_its_childrens_under_their_roles(tmp_path):
    """benchmarks/host_profile.py: a command that burns a second of CPU in itself, then a
    second in a child it starts and reaps (as a candidate process starts ptxas)."""
    import subprocess

    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.0: pass\n"
    # the last fraction of a sample interval of a process is lost when it ends: the command idles then
    command = f"import subprocess, sys\n{burn}subprocess.run([sys.executable, '-c', {burn!r}])\ntime.sleep(1.5)\n"
    out = tmp_path / "profile.json"
    subprocess.run([sys.executable, str(Path(throughput.__file__).parent / "host_profile.py"), "--every", "0.1",
                    "--json", str(out), "--", sys.executable, "-c", command], check=True, timeout=120,
                   capture_output=True)
    profile = json.loads(out.read_text())
    # the burn's clock is a system call: a second of user and system time together
    user, system, reaped_user, reaped_system = profile["cpu_s"]["harness"]
    assert user + system >= 0.8  # its own second
    seen = sum(profile["cpu_s"].get("child of harness", [0, 0])[:2])
    assert reaped_user + reaped_system + seen >= 0.8  # its child's, seen running or reaped
    assert profile["doing"]["harness"]["user"] > 0


def test_the_gpu_trace_says_how_much_of_each_period_no_section_could_start():
    """Turns overlap; the share counts their union, from each one's ask to its end."""
    import gpu_trace

    def turn(asked, ended):
        return {"kind": "turn", "pid": 1, "asked": 100 + asked, "began": 100 + asked, "drained": 100 + asked,
                "measured": 100 + asked, "ended": 100 + ended, "crowded": False, "tag": "t"}

    report = gpu_trace.report([turn(0, 4), turn(2, 6), turn(25, 30)])
    assert "each 20 s: 0 s: 30%, 20 s: 25%" in report
    assert "most GPU memory" not in report  # traces before session 34 hold no memory figure


def test_the_gpu_trace_says_what_waiting_for_candidate_processes_to_go_cost():
    """Judge v21 waits for its candidate process to be reaped before it times a baseline."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import gpu_trace

    turn = {"kind": "turn", "pid": 1, "asked": 0.0, "began": 0.0, "ended": 1.0, "drained": 0.1, "measured": 0.2,
            "gathered": 0.0, "crowded": False, "tag": "op"}
    exits = [{"kind": "exit", "pid": 2, "asked": 0.0, "began": 0.0, "ended": 0.3, "waited": True},
             {"kind": "exit", "pid": 3, "asked": 2.0, "began": 2.0, "ended": 2.5, "waited": True},
             {"kind": "exit", "pid": 4, "asked": 3.0, "began": 3.0, "ended": 3.0, "waited": False}]
    report = gpu_trace.report([turn, *exits])
    assert "closed and waited for before a baseline: 2, 0.8 s (median 0.400, max 0.500)" in report
    assert "closed and waited for" not in gpu_trace.report([turn, exits[2]])


def test_the_gpu_trace_tells_the_spares_warm_ups_of_a_jobs_start_from_the_later_ones():
    """A job's first spares compile the comparison kernels on a host whose cache is empty;
    the later ones load them (kgb.evaluate.spare traces each warm-up)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import gpu_trace

    def warm(began, seconds, comparisons):
        return {"kind": "warm-up", "pid": 1, "asked": began, "began": began, "ended": began + seconds,
                "comparisons": comparisons}

    report = gpu_trace.report([warm(100, 8.0, 7.0), warm(101, 9.0, 8.0), warm(103, 7.0, 6.0), warm(150, 0.5, 0.2)])
    assert ("spares' warm-ups begun in the first 20 s: 3, median 8.00 s (the comparison kernels 7.00 s), "
            "most 9.00 s; later: 1, median 0.50 s (the comparison kernels 0.20 s), most 0.50 s") in report
    assert "warm-ups" not in gpu_trace.report([{"kind": "exit", "pid": 2, "asked": 0.0, "began": 0.0, "ended": 0.1}])
    # a spare whose request came before its comparison kernels were all warm stops (session 69)
    cut = dict(warm(102, 0.8, 0.0), cut_short=True)
    assert "3, median 8.00 s (the comparison kernels 7.00 s), most 9.00 s, 1 cut short by their request; later: 1" in (
        gpu_trace.report([warm(100, 8.0, 7.0), warm(101, 9.0, 8.0), cut, warm(150, 0.5, 0.2)]))


def test_the_gpu_trace_says_how_long_the_gpu_stood_idle_in_a_jobs_first_30_s():
    import gpu_trace

    turn = {"kind": "turn", "pid": 1, "asked": 10.0, "gathered": 10.0, "began": 10.5, "drained": 11.0,
            "measured": 11.0, "ended": 12.0, "crowded": False, "tag": "t"}
    sections = [{"kind": "section", "pid": 2, "asked": 0.0, "began": 0.0, "ended": 3.0, "what": "draw"},
                {"kind": "section", "pid": 3, "asked": 2.0, "began": 2.0, "ended": 4.0, "what": "draw"},
                {"kind": "section", "pid": 2, "asked": 11.0, "began": 11.5, "ended": 13.0, "what": "compare"},
                {"kind": "section", "pid": 2, "asked": 29.0, "began": 29.0, "ended": 40.0, "what": "compare"}]
    assert gpu_trace.idle_s([turn], sections, 0.0, 30.0) == pytest.approx(30.0 - 4.0 - 3.0 - 1.0)
    assert "the GPU idle (no turn, no section) in the trace's first 30 s: 22.0 s" in gpu_trace.report([turn, *sections])


def test_the_gpu_trace_counts_the_turns_of_baselines_timed_ahead_of_their_trials():
    import gpu_trace

    def turn(asked, ended, tag):
        return {"kind": "turn", "pid": 1, "asked": asked, "began": asked, "drained": asked, "measured": asked + 0.1,
                "ended": ended, "crowded": False, "tag": tag}

    report = gpu_trace.report([turn(10.0, 11.0, "aten::add"), turn(11.0, 11.5, "aten::cos (baselines ahead)"),
                               turn(12.0, 13.1, "aten::cos (baselines ahead)"), turn(14.0, 14.3, "aten::abs (baselines ahead)")])
    assert "baselines timed ahead of their trials: 3, measuring 1.6 s, 2 operators, the last ended 4.3 s after" in report
    assert "timed ahead" not in gpu_trace.report([turn(10.0, 11.0, "aten::add")])


def test_the_gpu_trace_counts_each_moment_of_the_gpu_once_by_its_most_exclusive_use():
    import gpu_trace

    turn = {"kind": "turn", "pid": 1, "asked": 1.0, "began": 2.0, "drained": 3.0, "measured": 3.5, "ended": 4.0,
            "crowded": False, "tag": "t"}
    behind = {**turn, "pid": 2, "asked": 3.0, "began": 4.0, "drained": 4.0, "measured": 4.0, "ended": 5.0}
    sections = [{"kind": "section", "pid": 3, "asked": 0.0, "began": 0.0, "ended": 2.5, "what": "reference"},
                {"kind": "section", "pid": 4, "asked": 5.0, "began": 6.0, "ended": 7.0, "what": "compare"}]
    spent = gpu_trace.gpu_time([turn, behind], sections)
    # 0-1 sections; 1-2 the turn asked (behind none, beside a section: that section's time);
    # 2-3 draining; 3-3.5 the spin-up, counted as measuring; 3.5-5 measuring (the second turn
    # waited behind the first meanwhile); 5-6 nothing; 6-7 sections
    assert spent == {"a turn measuring (or spinning the GPU up)": 2.0, "a turn draining the sections": 1.0, "a turn behind another turn": 1.0,
                     "work sections only": 2.0, "nothing (no section, no turn)": 1.0}
    assert "the GPU's time: a turn measuring (or spinning the GPU up) 2.0 s (29%)" in gpu_trace.report([turn, behind, *sections])


def test_the_gpu_trace_says_whose_sections_the_drains_waited_for():
    """Each drain is put down to the section of another judge that ended last, by its
    operator and phase: a few long sections of one operator stand out there."""
    import gpu_trace

    def turn(pid, began, drained):
        return {"kind": "turn", "pid": pid, "asked": began, "began": began, "drained": drained,
                "measured": drained, "ended": drained + 0.5, "crowded": False, "tag": "t"}

    def section(pid, tag, what, began, ended):
        return {"kind": "section", "pid": pid, "asked": began, "began": began, "ended": ended, "what": what, "tag": tag}

    records = [turn(1, 1.0, 3.0), turn(1, 10.0, 10.5), turn(1, 20.0, 20.2),
               section(2, "op::a", "reference", 0.0, 3.0), section(3, "op::b", "compare", 0.5, 2.0),
               section(2, "op::a", "reference", 9.0, 10.5), section(4, "op::c", "compare", 19.0, 20.2)]
    report = gpu_trace.report(records)
    table = report[report.index("operator, phase"):].splitlines()
    assert table[2:5] == ["| op::a, reference | 2 | 2.5 |", "| op::c, compare | 1 | 0.2 |", ""]


def test_a_turn_gathering_company_is_not_counted_as_holding_up_the_gpu():
    """KGB_GATHER_S: a lone turn waits for another to ask while sections run on (session 37's
    call 2 counted that wait as "a turn behind another turn", 14% of its GPU's time)."""
    import gpu_trace

    gathering = {"kind": "turn", "pid": 1, "asked": 1.0, "gathered": 1.75, "began": 2.0, "drained": 2.5,
                 "measured": 2.5, "ended": 3.0, "crowded": False, "tag": "t"}
    sections = [{"kind": "section", "pid": 3, "asked": 0.0, "began": 0.0, "ended": 2.5, "what": "reference"}]
    spent = gpu_trace.gpu_time([gathering], sections)
    assert spent["work sections only"] == 1.75 and spent["a turn behind another turn"] == 0.25
    assert "behind other turns 0.2 s" in gpu_trace.report([gathering, *sections])


def test_the_gpu_trace_names_the_judges_that_held_the_most_gpu_memory():
    import gpu_trace

    def turn(pid, tag, at, mib):
        return {"kind": "turn", "pid": pid, "asked": at, "began": at, "drained": at, "measured": at,
                "ended": at + 1, "crowded": False, "tag": tag, "peak_mib": mib}

    report = gpu_trace.report([turn(1, "aten::add", 0, 900), turn(1, "aten::add", 5, 4200),
                               turn(2, "aten::t", 2, 300), turn(3, "aten::sort", 3, 12000)])
    assert "held (their caching allocator's, by a turn's end): aten::sort 12,000 MiB, aten::add 4,200 MiB, " \
           "aten::t 300 MiB" in report


def test_the_drift_benchmark_says_where_an_in_place_operators_values_went():
    import inplace_drift
    import torch

    from kgb import operators

    spec = operators.load("aten::div_")  # writes `self`
    x = torch.tensor([0.25, 8.0, float("inf"), 0.0])
    assert inplace_drift.written_range(spec, {"self": x, "other": torch.ones(4)}) == "2^-2..2^3, 25.0% not finite"
    assert inplace_drift.written_range(spec, {"self": torch.zeros(3, dtype=torch.int64), "other": 1}) == "-"


def test_the_first_run_benchmark_reads_gpu_memory_as_numbers_and_an_event_log_as_its_figures():
    """benchmarks/first_run.py: sessions 31-33 compared nvidia-smi's lines as text, and "99887"
    came out above "142373"."""
    import first_run

    assert first_run.parse_mib("99887\n142373\n") == 242260  # two GPUs: their sum
    assert max(first_run.parse_mib(line) for line in ("99887", "142373")) == 142373
    assert first_run.parse_mib("[N/A]\n") is None

    def evaluated(ts, status, ran_out=0.0, engine=10.0, judge=9.0, **again):
        return {"kind": "CandidateEvaluated", "ts": ts, "verdict": {
            "status": status, "eval_s": 12.0, "ran_out_s": ran_out, "gate_s": 1.0, **again,
            "harness_s": {"engine": engine}, "judge_s": judge, "phase_s": {"candidate compile": 5.0, "draw": 1.0}}}

    # an evaluation that ran again for a case timed by its first call; one of an older log, whose
    # verdicts say only how long their earlier runs took (which only running out made then)
    events = [{"kind": "RunStarted", "ts": 107.5}, {"kind": "TrialStarted", "ts": 107.7},
              {"kind": "BaselineMeasured", "ts": 110.0}, evaluated(117.0, "correct", ran_out=3.0, again=["first_call"]),
              {"kind": "TrialFinished", "ts": 117.0}, {"kind": "TrialStarted", "ts": 107.8},
              evaluated(130.0, "wrong_output", ran_out=4.0), {"kind": "TrialFinished", "ts": 130.0}]
    figures = first_run.summarise(events, launched=100.0)
    assert figures["launch to RunStarted (s)"] == 7.5
    assert abs(figures["launch to the first trial (s)"] - 7.7) < 1e-9
    assert figures["launch to the last trial's end (s)"] == 30.0
    assert (figures["trials"], figures["correct"], figures["baselines measured"]) == (2, 1, 1)
    assert figures["evaluations run again after running out of GPU memory"] == 1
    assert figures["evaluations run again after a case was timed by its first call"] == 1
    assert figures["... their first runs (s)"] == 7.0 and figures["the engine's hand-off (s)"] == 2.0
    assert first_run.phases(events) == [("candidate compile", 10.0), ("draw", 2.0)]


def test_the_first_run_benchmark_puts_each_process_memory_down_to_the_operator_its_judge_judged(tmp_path):
    """A first run on the H200 peaked at the GPU's whole memory (session 34) and which
    judgements held it was not known: nvidia-smi names processes, the judges' trace names
    each judge's operator, and a candidate process counts to the judge above it."""
    import json

    import first_run

    assert first_run.parse_processes("4242, 612\n77, 9000\n[N/A], 1\n") == {4242: 612, 77: 9000}
    trace = tmp_path / "trace"
    trace.write_text("\n".join(json.dumps(r) for r in (
        {"kind": "turn", "pid": 10, "tag": "aten::sort"}, {"kind": "section", "pid": 20, "tag": "aten::t"},
        {"kind": "start", "pid": 30})) + "\n")
    judged = first_run.judged_operators(trace)
    assert judged == {10: "aten::sort", 20: "aten::t"}
    ancestry = {11: [12, 10, 1], 21: [20, 1], 99: [1]}  # 11: sort's candidate under its sandbox's init
    samples = [{10: 600, 11: 5000, 20: 600, 99: 700}, {10: 600, 11: 9000, 21: 400}]
    most, busiest = first_run.by_operator(samples, ancestry, judged)
    assert most == {"aten::sort": 9600, "aten::t": 600, "the harness and spare judges": 700}
    assert busiest == {"aten::sort": 9600, "aten::t": 400}
    assert first_run.ancestors(1) == []


def test_the_gpu_check_refuses_a_host_without_a_gpu_and_writes_nothing(tmp_path):
    """benchmarks/gpu_check.sh runs the GPU tests and two whole jobs: on a CPU host it says
    so at once rather than report a CPU run as a GPU host's check."""
    import subprocess

    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU host would run the whole check")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(["bash", str(root / "benchmarks" / "gpu_check.sh"), str(tmp_path / "out")], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no CUDA GPU" in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()
    usage = subprocess.run(["bash", str(root / "benchmarks" / "gpu_check.sh")], capture_output=True, text=True)
    assert usage.returncode == 2 and usage.stderr.startswith("usage:")
    unknown = subprocess.run(["bash", str(root / "benchmarks" / "gpu_check.sh"), "--no-test", str(tmp_path / "out")],
                             capture_output=True, text=True)
    assert unknown.returncode == 2 and "unknown option: --no-test" in unknown.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("script", ["clock_recovery.py", "steady_timing.py", "comparison.py"])
def test_the_clock_benchmarks_refuse_a_host_without_a_gpu_and_the_clocks_say_none(tmp_path, script):
    """benchmarks/clock_recovery.py, steady_timing.py and comparison.py time on a GPU: on a CPU host each says
    so; and kgb.evaluate.nvml answers None where NVML is missing rather than raise."""
    import subprocess

    import torch

    from kgb.evaluate.nvml import Clocks

    if torch.cuda.is_available():
        pytest.skip("a GPU host would run the benchmark")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, str(root / "benchmarks" / script)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "no CUDA GPU" in done.stderr, done.stderr
    clocks = Clocks()
    assert not clocks.available and clocks.read() is None and clocks.held_by() is None and clocks.memory_mhz() is None


def test_the_gpu_trace_says_at_what_clock_the_measurements_started():
    """Session 37: a replay, timed first in its turn, came out 15-25% slower now and then
    while its baseline did not; the trace's clock readings say whether the GPU's clock was down."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import gpu_trace

    def measure(who, mhz, held_by=()):
        return {"kind": "measure", "who": who, "tag": "aten::mm", "began": 0.0, "ended": 0.1, "mode": "eager",
                "repeats": 5, "steps": {}, "sm_mhz": mhz, "max_sm_mhz": 1980, "held_by": list(held_by)}

    capped = dict(measure("baseline", 1980), end_sm_mhz=1440)
    line = gpu_trace.clocks_line([measure("replay", 1980), measure("replay", 1650, ["power cap"]),
                                  measure("replay", 1500, ["power cap"]), capped])
    assert line == ("the SM clock as a measurement started: baseline 1: median 1980 MHz, lowest 1980, 0 at 5% or "
                    "more below 1980, 1 of 1 ended there; replay 3: median 1650 MHz, lowest 1500, 2 at 5% or more "
                    "below 1980 (held down by power cap 2)")


def test_slow_replays_are_told_apart_with_what_was_beside_them(job_log, tmp_path, capsys, monkeypatch):
    """benchmarks/slow_measurements.py: a replay over 1.05x its case's median across jobs is
    slow, and a memory release of another judge beside it is counted for it."""
    import gzip

    import slow_measurements

    from kgb.evaluate import CaseResult, Status, Verdict

    def log(name: str, first: float, second: float) -> Path:
        cases = (CaseResult("bench-1", "bench", Status.CORRECT, latency_us=first),
                 CaseResult("bench-2", "bench", Status.CORRECT, latency_us=second))
        path = job_log([("aten::mm", Verdict(Status.CORRECT, "", cases=cases))])
        return path.rename(tmp_path / name)

    mine, a, b = log("mine.jsonl.gz", 120.0, 50.0), log("a.jsonl.gz", 100.0, 50.0), log("b.jsonl.gz", 100.0, 50.5)

    def record(kind, pid, began, ended, **fields):
        return {"kind": kind, "pid": pid, "asked": began, "began": began, "ended": ended, **fields}

    trace = [record("measure", 1, 0.0, 1.0, who="replay", tag="aten::mm", sm_mhz=1980, max_sm_mhz=1980),
             record("measure", 1, 1.0, 1.1, who="baseline", tag="aten::mm bench-1"),
             record("measure", 1, 2.0, 3.0, who="replay", tag="aten::mm", sm_mhz=1500, max_sm_mhz=1980),
             record("measure", 1, 3.0, 3.1, who="baseline", tag="aten::mm bench-2"),
             record("release", 2, 0.5, 0.6, tag="aten::add"),
             record("exit", 3, 3.2, 3.2, waited=False)]
    path = tmp_path / "trace.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in trace).encode()))
    monkeypatch.setattr(sys, "argv", ["slow_measurements.py", str(path), str(mine), str(a), str(b)])
    assert slow_measurements.main() == 0
    table = capsys.readouterr().out
    assert "| measurements | 1 | 1 |" in table
    assert "| beside a memory release | 1 (100%) | 0 (0%) |" in table
    assert "| beside a process's end | 0 (0%) | 0 (0%) |" in table  # it ended after the measurement
    assert "| SM clock as it started: median MHz, under 95% of most | 1980, 0 | 1500, 1 |" in table


def test_a_measurements_clocks_are_read_as_it_starts_and_ends_only_when_traced(monkeypatch):
    """kgb.evaluate.nvml.clocks_around: the replay's and the baseline's trace lines carry the
    clocks at both ends; without a trace kept nothing is read."""
    from kgb.evaluate import nvml

    reads = []

    def fields(prefix=""):
        reads.append(prefix)
        return {prefix + "sm_mhz": 1980 - 540 * len(reads) + 540}

    monkeypatch.setattr(nvml, "trace_fields", fields)
    monkeypatch.delenv(nvml.TRACE_ENV, raising=False)
    with nvml.clocks_around() as clock:
        pass
    assert clock == {} and reads == []
    monkeypatch.setenv(nvml.TRACE_ENV, "/nonexistent/trace.jsonl")
    with nvml.clocks_around() as clock:
        assert clock == {"sm_mhz": 1980}
    assert clock == {"sm_mhz": 1980, "end_sm_mhz": 1440} and reads == ["", "end_"]


def test_a_later_job_alone_is_given_the_chips_baselines_from_an_earlier_jobs_log(tmp_path):
    """benchmarks/first_run.py --baselines-from: a lent GPU's ten minutes hold the GPU tests and
    a first job, or a later job alone, not both; the later job's baselines come from the first
    job's event log, returned from an earlier call."""
    import gzip

    import first_run

    from kgb import operators
    from kgb.tracking.baselines import load_book
    from kgb.tracking.encoding import to_json
    from kgb.tracking.events import BaselineMeasured

    spec = operators.load("aten::add")
    started = {"kind": "RunStarted", "job": "j1", "seq": 0}
    events = [started,
              BaselineMeasured(job="j1", seq=1, op=spec.id, spec_version=spec.version, case="bench-1",
                               baseline="torch", latency_us=180.5, fingerprint="f1"),
              BaselineMeasured(job="j1", seq=2, op=spec.id, spec_version=spec.version, case="bench-2",
                               baseline="torch", latency_us=99.0, fingerprint="another machine's")]
    log = tmp_path / "first-events.jsonl.gz"
    with gzip.open(log, "wt") as f:
        f.writelines(json.dumps(e if isinstance(e, dict) else to_json(e)) + "\n" for e in events)
    root = tmp_path / "outputs"
    assert first_run.seed_baselines(log, root) == 2
    assert load_book(root, "f1").known(spec) == {"bench-1": 180.5}
    assert [p.parent.name for p in (root / "jobs").glob("*/events.jsonl")] == ["known-baselines"]
    empty = tmp_path / "none.jsonl"
    empty.write_text(json.dumps(started) + "\n")
    with pytest.raises(SystemExit, match="no BaselineMeasured"):
        first_run.seed_baselines(empty, tmp_path / "other")


def test_the_gpu_trace_says_how_judge_v29s_first_calls_compare_and_which_timed_a_case():
    """kgb.evaluate.first_call: a replay warmed up on turned values has its first call timed
    alone; the report spreads their ratios and names a case timed by its first call."""
    import gpu_trace

    def first(tag, turned, first_us, repeated_us, at=0.0):
        return {"kind": "first call", "pid": 1, "asked": at, "began": at, "ended": at + 0.001, "tag": tag,
                "first_us": first_us, "repeated_us": repeated_us, "turned_bytes": turned, "mode": "graph"}

    turn = {"kind": "turn", "pid": 1, "asked": 0.0, "began": 0.0, "ended": 1.0, "drained": 0.1, "measured": 0.2,
            "crowded": False, "tag": "op"}
    # another process starting as b's first call ran; none beside a's
    start = {"kind": "start", "pid": 2, "asked": 0.5, "began": 0.5, "ended": 0.9}
    records = [turn, start, first("a", 4096, 10.2, 10.0), first("b", 4096, 241.8, 1.7, at=0.6),
               first("view", 64, None, 1.3), first("ints", 0, None, 5.0)]
    report = gpu_trace.report(records)
    assert ("first calls on the timed inputs: 4 replays, 3 warmed up on turned values (2 of them with a first call "
            "by the repetitions' clock), 1 on the timed values") in report
    assert ("most 142.235; timed by the first call: 1\n  with a process start beside 1 (p99 142.235, most "
            "142.235, over 1.1 1); without 1 (p99 1.020, most 1.020, over 1.1 0)\n  timed by the first call: b "
            "(graph): first 241.8 us, repetitions 1.7 us, x142.235; beside it: 1 start\n  furthest over: b (graph)") in report
    assert "furthest over: a (graph): first 10.2 us, repetitions 10.0 us, x1.020\n" in report + "\n"
    assert "first calls" not in gpu_trace.report([turn])
    # judge v31: a replay with nothing to turn warms up on another draw, its first call timed alone too
    drawn = dict(first("ints", 0, 5.1, 5.0), drawn_bytes=2048)
    report = gpu_trace.report([turn, first("a", 4096, 10.2, 10.0), drawn, dict(first("view", 0, None, 1.3),
                                                                                drawn_bytes=0)])
    assert ("first calls on the timed inputs: 3 replays, 1 warmed up on turned values, 1 on another draw (2 of them "
            "with a first call by the repetitions' clock), 1 on the timed values (no input to turn or draw)") in report
    # judge v31: the replays of a run again, measured holding the quiet gate
    measured = {"kind": "measure", "pid": 1, "asked": 0.2, "began": 0.2, "ended": 0.3, "who": "replay", "mode": "graph",
                "repeats": 20, "steps": {"repetitions": 0.05}, "tag": "b"}
    report = gpu_trace.report([turn, measured, dict(measured, alone=True, alone_wait_s=0.31),
                               dict(measured, alone=False, alone_wait_s=3.0)])
    assert "replays measured holding the quiet gate: 2, 1 with nothing under way; waited 3.31 s (most 3.00)" in report


def test_the_context_starts_benchmark_measures_first_calls_as_the_judge_measures_a_replay():
    """benchmarks/context_starts.py --first-call: each call from the inputs loaded again, the
    warm-up on them turned (kgb.evaluate.first_call.Turned), and a cell of the first calls'
    ratios that counts those over the judge's bound."""
    import context_starts
    import torch

    from kgb.evaluate.first_call import FIRST_RATIO

    x = torch.arange(64, dtype=torch.float32)
    pristine = x.clone()
    around = context_starts._as_a_replay(lambda: None, [x])
    around["before_warm_up"]()
    assert not torch.equal(x, pristine) and torch.equal(x.sort().values, pristine)  # turned, every value kept
    x.add_(1.0)  # what a call left
    around["before_each"]()
    assert torch.equal(x, pristine)
    cell = context_starts.first_calls([1.0, 1.02, FIRST_RATIO + 0.5])
    assert cell == f"1.020, {FIRST_RATIO + 0.5:.3f}, 1 of 3 over {FIRST_RATIO:g}"
    assert context_starts.first_calls([]) == "-"


def test_the_ncu_benchmark_sums_each_calls_kernels_and_keeps_the_markers_as_the_floor(tmp_path):
    """benchmarks/ncu.py: a marker kernel (grid = label) opens each call; the kernels after it
    sum to that call's figure, and the markers' own durations are ncu's floor."""
    import ncu

    header = '"ID","Kernel Name","Grid Size","Metric Name","Metric Unit","Metric Value"'

    def row(i: int, kernel: str, grid: int, ns: str) -> str:
        return f'"{i}","{kernel}","({grid}, 1, 1)","gpu__time_duration.sum","ns","{ns}"'

    lines = ["==PROF== a line ncu writes that is not CSV", header, row(0, "kgb_ncu_marker", 1, "1,600"),
             row(1, "warm_up", 4, "9,999"), row(2, "kgb_ncu_marker", 2, "1,700"), row(3, "add_kernel", 8, "5,000"),
             row(4, "add_kernel", 8, "2,000"), row(5, "kgb_ncu_marker", 3, "1,800"), row(6, "add_kernel", 8, "6,000")]
    (tmp_path / "ncu.csv").write_text("\n".join(lines) + "\n")
    labels = {"2": ["aten::add", "bench-1", "solution", "0"], "3": ["aten::add", "bench-1", "solution", "1"]}
    assert ncu.parse_ncu(tmp_path / "ncu.csv", labels) == {("aten::add", "bench-1", "solution"): 6.5}
    assert ncu.marker_floor_ncu(tmp_path / "ncu.csv") == [1.6, 1.7, 1.8]
    kernels = ncu.kernels_per_call(tmp_path / "ncu.csv", labels)
    assert kernels == {("aten::add", "bench-1", "solution"): 1.5}
    assert ncu.less_floor(6.5, kernels[("aten::add", "bench-1", "solution")], 1.0) == 5.0


def test_the_kernel_split_keeps_each_device_activity_of_a_call_in_the_order_it_ran():
    """benchmarks/kernel_split.py reads the kernels of a call from PyTorch's profiler: the
    device's activities, by their start, none of the host's, none of zero length."""
    from types import SimpleNamespace

    import kernel_split

    def event(name: str, device: str, start: float, end: float) -> SimpleNamespace:
        return SimpleNamespace(name=name, device_type=f"DeviceType.{device}", time_range=SimpleNamespace(start=start, end=end))

    profile = SimpleNamespace(events=lambda: [event("aten::mul", "CPU", 0.0, 9.0), event("mul_kernel", "CUDA", 5.0, 8.0),
                                              event("pow_kernel", "CUDA", 1.0, 4.0), event("empty", "CUDA", 9.0, 9.0)])
    assert kernel_split.kernels_of(profile) == [("pow_kernel", 1.0, 4.0), ("mul_kernel", 5.0, 8.0)]


def test_the_ncu_benchmark_lays_the_judges_kernels_against_ncus_less_copies_and_fills(monkeypatch, capsys):
    """benchmarks/ncu.py's kernels against kernels: the judge's figure less the copies and fills
    it counts and ncu does not (kernel_split's clock), against ncu less its floor; a call whose
    runs did not agree on their activities is not counted as within."""
    import kernel_split
    import ncu

    assert kernel_split.is_copy("Memcpy DtoD (Device -> Device)") and kernel_split.is_copy("Memset (Device)")
    assert not kernel_split.is_copy("triton_red_fused_mean_pow_0")
    monkeypatch.setattr(ncu, "bench_calls", lambda op: [("prefill", "baseline", "a"), ("decode", "baseline", "b")])
    monkeypatch.setattr(kernel_split, "copies_us", lambda call, k=10: {"a": 88.0, "b": None}[call])
    rows = [{"op": "vllm::rms_norm", "case": "prefill", "who": "baseline", "judge_us": 1105.0, "ncu_less_floor_us": 1010.0},
            {"op": "vllm::rms_norm", "case": "decode", "who": "baseline", "judge_us": 30.8, "ncu_less_floor_us": 30.0}]
    ncu.kernels_against_kernels(["vllm::rms_norm"], rows)
    assert rows[0]["judge_less_copies_us"] == 1017.0 and rows[0]["within_goal_kernels"]
    assert rows[1]["judge_less_copies_us"] is None and not rows[1]["within_goal_kernels"]
    assert "within the goal against ncu less its floor: 1 of 2 timings" in capsys.readouterr().out


def test_the_drain_model_cuts_only_the_split_kinds_of_section_at_their_cap():
    """benchmarks/drain_model.py: a turn's modelled drain is the longest time a section running
    when it was asked still had to run; a split kind's at most the cap; sections that ended
    before, or began after, the turn was asked do not count."""
    import drain_model

    def section(what: str, began: float, ended: float) -> dict:
        return {"kind": "section", "what": what, "asked": began, "began": began, "ended": ended}

    records = [section("compare", 0.0, 2.0), section("candidate", 0.5, 1.5), section("draw", 0.0, 0.9),
               section("reference", 1.2, 9.0),
               {"kind": "turn", "asked": 1.0, "gathered": 1.0, "began": 1.0, "drained": 2.0, "ended": 3.0}]
    assert drain_model.modelled_drains(records, {}) == 1.0  # the comparison's last second
    assert drain_model.modelled_drains(records, {"compare": 0.1}) == 0.5  # then the candidate's call
    assert drain_model.modelled_drains(records, {"compare": 0.1, "candidate": 0.2}) == 0.2


def test_the_mapped_copy_benchmark_reads_each_writers_sealed_file_every_way_it_can_on_the_host(monkeypatch, capsys):
    """benchmarks/mapped_copy.py on the CPU: each writer's file, sealed, read through every
    mapping the host can make (locking pages for a GPU's copy engine needs one) and through the
    first mapping again, each a row of the table with its time."""
    import mapped_copy

    monkeypatch.setattr(sys, "argv", ["mapped_copy.py", "--device", "cpu", "--mb", "1", "--repeats", "1"])
    assert mapped_copy.main() == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and " s |" in line]
    writers = ("off the GPU, pages not made", "off the GPU, pages made", "from the host, pages made")
    reads = [n for n, (_, _, before) in mapped_copy.READS.items() if before != "lock"]
    wanted = {f"onto the GPU: {r}; {w}" for r in reads + ["the first mapping again (its pages mapped)"] for w in writers}
    assert wanted <= {row.split(" | ")[0].removeprefix("| ") for row in rows}
    assert not any("locked" in row for row in rows)


def test_the_gpu_trace_lists_the_longest_sections_with_their_place_in_their_judge():
    """A compile or a load at a kernel's first use is a long section early among its judge's
    sections of that phase; the table says which of them each long one was."""
    import gpu_trace

    def section(pid, tag, what, began, ended):
        return {"kind": "section", "pid": pid, "asked": began, "began": began, "ended": ended, "what": what, "tag": tag}

    records = [section(1, "op::a", "reference", 0.0, 0.01), section(1, "op::a", "reference", 1.0, 2.0),
               section(1, "op::a", "reference", 3.0, 3.01), section(2, "op::b", "compare", 0.0, 0.5)]
    lines = gpu_trace._longest_sections(records, shown=2)
    assert lines[2:] == ["| op::a | reference | 1.00 | 2 of 3 |", "| op::b | compare | 0.50 | 1 of 1 |"]
    assert "the 10 longest sections" in gpu_trace.report(records)


def test_compare_steps_times_each_step_of_a_bench_cases_check(monkeypatch):
    """benchmarks/compare_steps.py: one row per bench case, every step timed, the comparison
    kernels warmed first only when asked (small cases of a batched GEMM stand in for its own)."""
    import dataclasses

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import compare_steps

    from kgb import operators
    from kgb.evaluate import comparison_kernels

    spec = operators.load("cublas::cublasSgemmStridedBatched")
    checks = spec.cases_for({"check"})[:2]
    small = [*checks, *(dataclasses.replace(c, name=f"bench-{c.name}", tag="bench") for c in checks)]
    monkeypatch.setattr(operators, "load", lambda op: dataclasses.replace(spec, cases=small))
    warmed = []
    monkeypatch.setattr(comparison_kernels, "warm_up", lambda device: warmed.append(device))
    for warm in (False, True):
        rows = compare_steps.measure("cublas::cublasSgemmStridedBatched", "cpu", warm)
        assert [name for name, _, _ in rows] == ["bench-nn", "bench-nt"]
        for _, elements, seconds in rows:
            assert elements > 0 and set(seconds) == set(compare_steps.STEPS)
            assert all(s >= 0 for s in seconds.values())
    assert warmed == ["cpu"]
