"""The GPU's timing turn (kgb.evaluate.timing_lock) and the judge's phase accounting: only
measurements take the turn, one judge process at a time, and the phases add up."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import socket
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path

import pytest
import torch

from kgb.evaluate import candidate, candidate_process, codec, tensor_storage, timing_lock
from kgb.evaluate.phases import Phases
from kgb.evaluate.timing_lock import TimingLock


def _hold(path: str, log: str, hold_s: float) -> None:
    timing_lock.spin_up = lambda: None  # no GPU here: what is tested is the turn itself
    with TimingLock(path, Phases())():
        with open(log, "a") as f:
            f.write(f"in {time.monotonic()}\n")
        time.sleep(hold_s)
        with open(log, "a") as f:
            f.write(f"out {time.monotonic()}\n")


def test_judge_processes_take_the_gpu_one_at_a_time(tmp_path):
    lock, log = str(tmp_path / "gpu.lock"), str(tmp_path / "log")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_hold, args=(lock, log, 0.3)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    events = [line.split()[0] for line in open(log)]
    assert events == ["in", "out"] * 3  # never two inside at once


def _section(path: str, log: str, name: str, kind: str, start_after_s: float, hold_s: float,
             gather_s: float = 0.0) -> None:
    """After a delay, hold a turn or a work section for a while, logging when it was inside."""
    timing_lock.spin_up = lambda: None
    time.sleep(start_after_s)
    with open(log, "a") as f:
        f.write(f"{name} asked {time.monotonic()}\n")
    lock = TimingLock(path, Phases())
    lock.gather_s = gather_s
    with lock() if kind == "turn" else lock.work():
        with open(log, "a") as f:
            f.write(f"{name} in {time.monotonic()}\n")
        time.sleep(hold_s)
        with open(log, "a") as f:
            f.write(f"{name} out {time.monotonic()}\n")


def _run_sections(tmp_path, *sections) -> dict[str, tuple[float, float, float]]:
    """Each section's (in, out, asked) times; a loaded host may start one late."""
    lock, log = str(tmp_path / "gpu.lock"), str(tmp_path / "log")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_section, args=(lock, log, *s)) for s in sections]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    spans: dict[str, dict[str, float]] = {}
    for line in open(log):
        name, what, at = line.split()
        spans.setdefault(name, {})[what] = float(at)
    return {name: (at["in"], at["out"], at["asked"]) for name, at in spans.items()}


def _apart(work: tuple[float, float, float], turn: tuple[float, float, float]) -> None:
    """A work section and a turn never overlap, however late the host started either."""
    assert work[1] <= turn[0] or work[0] >= turn[1], (work, turn)


def test_a_turn_waits_for_running_work_and_work_waits_for_a_held_turn(tmp_path):
    """Another judge's check beside a timing slowed it up to 12x on the H200: a turn never
    overlaps a work section, and work sections overlap each other."""
    spans = _run_sections(tmp_path, ("check-a", "work", 0.0, 0.6), ("check-b", "work", 0.0, 0.6),
                          ("timing", "turn", 0.2, 0.4), ("check-c", "work", 0.4, 0.1))
    a, b, timing, c = spans["check-a"], spans["check-b"], spans["timing"], spans["check-c"]
    for work in (a, b, c):
        _apart(work, timing)
    # What follows holds where the processes asked in the order planned (a loaded host may
    # start one late): the two checks ran together, the turn waited for both, and check-c,
    # asked while the turn waited, went after it, not before.
    if max(a[2], b[2]) < min(a[1], b[1], timing[2]):
        assert a[0] < b[1] and b[0] < a[1]
    if max(a[0], b[0]) < timing[2]:
        assert timing[0] >= max(a[1], b[1])
    if timing[2] < c[2] < timing[0]:
        assert c[0] >= timing[1]


def test_a_work_section_ends_once_its_gpu_work_has_run(tmp_path):
    """CUDA returns before the kernels it queued have run: a section lets go only after its
    `settle` (the judge's torch.cuda.synchronize), so no turn starts beside work it queued."""
    path = str(tmp_path / "gpu.lock")
    held_while_settling = []

    def settle() -> None:
        with open(path + timing_lock.WORK_SUFFIX, "a") as work:  # what a turn would take
            held_while_settling.append(not timing_lock._flock_within(work, fcntl.LOCK_EX, 0.05))

    with TimingLock(path, Phases(), settle).work():
        pass
    assert held_while_settling == [True]
    assert _free(path, 0.05)


def test_turns_asked_for_together_drain_the_running_work_once(tmp_path):
    """A second turn asked for while the first waits goes before work asked for after it, so
    the sections already running drain once for both."""
    spans = _run_sections(tmp_path, ("check-a", "work", 0.0, 0.6), ("timing-1", "turn", 0.2, 0.2),
                          ("timing-2", "turn", 0.3, 0.2), ("check-c", "work", 0.4, 0.1))
    a, t1, t2, c = spans["check-a"], spans["timing-1"], spans["timing-2"], spans["check-c"]
    first, second = sorted([t1, t2])
    assert second[0] >= first[1]  # one at a time
    for work in (a, c):
        _apart(work, first)
        _apart(work, second)
    if a[0] < first[2]:
        assert first[0] >= a[1]  # after the check that ran when it was asked for
    if max(t1[2], t2[2]) < c[2] < first[0]:
        assert c[0] >= second[1]  # the check asked for meanwhile waited for both


def test_a_turn_asked_for_alone_waits_for_company_without_holding_up_work(tmp_path):
    """With gather_s, a lone turn lets work sections start for a while before it stops them,
    in case another judge asks too (then the running sections drain once for both)."""
    spans = _run_sections(tmp_path, ("timing", "turn", 0.0, 0.1, 0.8), ("check", "work", 0.3, 0.1))
    timing, check = spans["timing"], spans["check"]
    if check[2] < timing[2] + 0.6:  # asked for well inside the turn's gathering (a loaded host may start it late)
        assert check[1] <= timing[0]  # ... it went first
    assert timing[0] - timing[2] >= 0.8 - 0.05  # and the turn waited out its gathering alone


def test_a_section_passing_does_not_end_a_lone_turns_gathering(tmp_path, monkeypatch):
    """A section holds `.want` whole while it passes; a host that stops it there must not look
    like another judge asking (CI saw a lone turn stop gathering after 0.46 of its 0.8 s)."""
    path = str(tmp_path / "gpu.lock")
    lock = TimingLock(path, Phases())
    lock.gather_s = 0.4
    monkeypatch.setattr(timing_lock, "spin_up", lambda: None)  # no GPU here
    lock._create()
    with open(path + timing_lock.WANT_SUFFIX, "a") as want:
        fcntl.flock(want, fcntl.LOCK_EX)  # a section stopped while passing
        threading.Timer(0.2, lambda: fcntl.flock(want, fcntl.LOCK_UN)).start()
        with lock():
            pass
    assert lock.phase.seconds[timing_lock.WAIT_FOR_COMPANY] >= 0.4  # it gathered its whole while


def test_a_lone_turns_wait_for_company_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(timing_lock.GATHER_ENV, raising=False)
    assert TimingLock(None, Phases()).gather_s == timing_lock.GATHER_S == 0.0  # off unless asked for
    monkeypatch.setenv(timing_lock.GATHER_ENV, "0.25")
    assert TimingLock(None, Phases()).gather_s == 0.25
    for bad in ("soon", "-0.1", "6"):
        monkeypatch.setenv(timing_lock.GATHER_ENV, bad)
        with pytest.raises(ValueError, match="0 to 5"):
            TimingLock(None, Phases())


def test_a_gathering_turn_goes_as_soon_as_another_judge_asks(tmp_path):
    spans = _run_sections(tmp_path, ("check-a", "work", 0.0, 0.5), ("timing-1", "turn", 0.1, 0.1, 5.0),
                          ("timing-2", "turn", 0.3, 0.1), ("check-b", "work", 0.35, 0.1))
    a, t1, t2, b = spans["check-a"], spans["timing-1"], spans["timing-2"], spans["check-b"]
    first, second = sorted([t1, t2])
    assert second[0] >= first[1]
    for work in (a, b):
        _apart(work, first)
        _apart(work, second)
    assert t1[0] - t1[2] < 4.0 or t2[2] > t1[2] + 4.0  # nowhere near the 5 s it would have gathered alone
    if max(t1[2], t2[2]) < b[2] < first[0]:
        assert b[0] >= second[1]  # asked for after both turns: it waited for them


def test_a_turn_times_beside_a_section_that_outlasts_its_wait_and_says_so(tmp_path, monkeypatch):
    """A candidate hanging in its check must not stop every timing of the GPU."""
    monkeypatch.setattr(timing_lock, "DRAIN_LIMIT_S", 0.2)
    monkeypatch.setattr(timing_lock, "spin_up", lambda: None)
    lock, log = str(tmp_path / "gpu.lock"), str(tmp_path / "log")
    ctx = multiprocessing.get_context("fork")
    hung = ctx.Process(target=_section, args=(lock, log, "hung", "work", 0.0, 3.0))
    hung.start()
    deadline = time.monotonic() + 20  # a loaded host may start it late: wait until it is inside
    while not (os.path.exists(log) and "hung in" in Path(log).read_text()) and time.monotonic() < deadline:
        time.sleep(0.01)
    turn = TimingLock(lock, Phases())
    started = time.monotonic()
    with turn():
        pass
    assert time.monotonic() - started < 2.0
    assert turn.crowded_turns == 1
    hung.join(30)
    with turn():  # nothing running now: a quiet turn
        pass
    assert turn.crowded_turns == 1


def test_the_first_turn_after_an_idle_gpu_spins_it_up_and_a_busy_one_does_not(tmp_path, monkeypatch):
    spun = []
    monkeypatch.setattr(timing_lock, "spin_up", lambda: spun.append(1))
    phase = Phases()
    turn = TimingLock(str(tmp_path / "gpu.lock"), phase)
    with turn():
        pass
    with turn():  # right after another timing: the clocks are up
        pass
    assert spun == [1]
    old = time.time() - 10 * timing_lock.IDLE_S
    os.utime(tmp_path / "gpu.lock", (old, old))
    with turn():
        pass
    assert spun == [1, 1]
    assert {timing_lock.WAIT_FOR_TURN, timing_lock.WAIT_FOR_DRAIN} <= set(phase.seconds)


def test_a_turn_right_after_a_work_section_needs_no_spin_up(tmp_path, monkeypatch):
    """A judge's check keeps the GPU's clocks up as well as a timing does."""
    spun = []
    monkeypatch.setattr(timing_lock, "spin_up", lambda: spun.append(1))
    turn = TimingLock(str(tmp_path / "gpu.lock"), Phases())
    with turn.work():
        pass
    with turn():  # no turn before it, but a section just ended
        pass
    assert spun == []
    old = time.time() - 10 * timing_lock.IDLE_S
    for name in ("gpu.lock", "gpu.lock" + timing_lock.WORK_SUFFIX):
        os.utime(tmp_path / name, (old, old))
    with turn():  # neither timed nor worked on for a while
        pass
    assert spun == [1]


def test_no_lock_path_means_no_turn_to_wait_for(monkeypatch):
    monkeypatch.setattr(timing_lock, "spin_up", lambda: (_ for _ in ()).throw(AssertionError("spun up")))
    phase = Phases()
    with TimingLock(None, phase)():
        pass
    assert phase.seconds == {}


def test_nested_phases_count_their_time_once():
    phase = Phases()
    started = time.perf_counter()
    with phase("timing"):
        time.sleep(0.05)
        with phase("waiting for the GPU"):
            time.sleep(0.1)
    total = time.perf_counter() - started
    assert phase.seconds["waiting for the GPU"] >= 0.09 and phase.seconds["timing"] >= 0.04
    # the wait is not counted twice: the two add up to the whole, however late the sleeps woke
    assert abs(phase.seconds["timing"] + phase.seconds["waiting for the GPU"] - total) < 0.01


def test_a_candidate_that_keeps_the_gpu_turn_is_cut_off_and_the_turn_released(monkeypatch, tmp_path):
    """The judge waits a bounded time for the candidate's "timed" while it holds the work section
    every other judge of the GPU waits for; past it, the candidate process is killed."""
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # a candidate process that stages, then sits on the turn
        ours.close()
        conn = Connection(theirs.detach())
        codec.receive(conn, "cpu", adopt=True)
        codec.send(conn, "gpu")
        codec.receive(conn, "cpu")  # granted
        codec.send(conn, "staged")
        codec.receive(conn, "cpu")
        time.sleep(600)
        os._exit(0)
    theirs.close()
    process = candidate_process.CandidateProcess.__new__(candidate_process.CandidateProcess)
    monkeypatch.setattr(candidate_process, "TURN_LIMIT_S", 0.5)
    monkeypatch.setattr(timing_lock, "spin_up", lambda: None)
    phase = Phases()
    turn = TimingLock(str(tmp_path / "gpu.lock"), phase)
    process.pid, process.conn, process.device, process.exclusive = pid, Connection(ours.detach()), "cpu", turn
    x = torch.ones(4)
    with pytest.raises(candidate_process.TurnOverrun, match="held the GPU"):
        process.time("f", ((x,), {}), ((x.clone(),), {}))
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # killed and reaped
    with open(tmp_path / "gpu.lock") as f:  # the turn is free again
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _free(path: str, wait_s: float) -> bool:
    """Whether a turn could drain the work sections of `path` within wait_s."""
    with open(path + timing_lock.WORK_SUFFIX, "a") as work:
        if not timing_lock._flock_within(work, fcntl.LOCK_EX, wait_s):
            return False
        fcntl.flock(work, fcntl.LOCK_UN)
        return True


def test_a_judge_lets_go_of_its_work_section_while_its_candidate_compiles(tmp_path, monkeypatch):
    """Compiling is seconds of host work: other judges' turns go on meanwhile, and the
    candidate goes on only once its judge is back in its section (session 15: waiting for
    the GPU was 63% of a sweep's evaluation time, most of it spent behind compiles)."""
    from triton.runtime import jit

    path = str(tmp_path / "gpu.lock")
    lock = TimingLock(path, Phases())
    free_while_compiling = []

    def compile_(self, *args, **kwargs):
        free_while_compiling.append(_free(path, 1.0))
        return "binary"

    def build_launcher(kernel):  # Triton 3.6 runs the C compiler for it: no section held either
        free_while_compiling.append((kernel, _free(path, 1.0)))

    monkeypatch.setattr(jit.JITFunction, "_do_compile", compile_)
    monkeypatch.setattr(candidate.launcher, "build", build_launcher)
    ours, theirs = socket.socketpair()
    judge_end, candidate_end = Connection(ours.detach()), Connection(theirs.detach())
    candidate._say_when_compiling(candidate_end, "cpu")
    replies = []

    def candidate_call():  # a call that compiles one kernel, then answers
        binary = jit.JITFunction._do_compile(None)
        replies.append(_free(path, 0.05))  # the judge's section is held again
        codec.send(candidate_end, "returned", None, binary=binary)

    process = candidate_process.CandidateProcess.__new__(candidate_process.CandidateProcess)
    process.conn, process.device, process.exclusive = judge_end, "cpu", lock
    with lock.work():
        assert not _free(path, 0.05)
        worker = threading.Thread(target=candidate_call)
        worker.start()
        msg = process._receive()
        worker.join(10)
    assert free_while_compiling == [True, ("binary", True)]
    assert replies == [False]
    assert msg.kind == "returned" and msg.fields["binary"] == "binary"
    assert "candidate compile" in lock.phase.seconds


def test_a_compile_notice_without_its_end_is_a_wire_error():
    ours, theirs = socket.socketpair()
    judge_end, candidate_end = Connection(ours.detach()), Connection(theirs.detach())
    process = candidate_process.CandidateProcess.__new__(candidate_process.CandidateProcess)
    process.conn, process.device, process.exclusive = judge_end, "cpu", None
    codec.send(candidate_end, "compiling")
    codec.send(candidate_end, "returned")
    with pytest.raises(codec.WireError, match="compile notice"):
        process._receive()


def test_inputs_cross_with_the_work_section_let_go_of_and_the_call_runs_inside_it(tmp_path, monkeypatch):
    """A bench case's inputs are hundreds of MB of host bytes on a socket: seconds that no
    timing turn should wait out. The judge copies them off the GPU and writes them, and
    reads the reply and copies it to the GPU, with its section let go of (the copies in
    short sections of their own: on the H200, session 20, whole copies inside sections
    were what most turns waited for); the candidate process asks for the GPU once it has
    read them, and its call runs inside the judge's section."""
    from kgb.evaluate.sandbox import Limits

    monkeypatch.setenv("KGB_SANDBOX", "off")  # the candidate below opens the lock file to look at it
    path = str(tmp_path / "gpu.lock")
    lock = TimingLock(path, Phases())
    lock._create()
    (tmp_path / "ws").mkdir()
    process = candidate_process.CandidateProcess("cpu", tmp_path / "ws", Limits(cpu_s=120)).wait_ready()
    try:
        process.exclusive = lock
        free_while_writing, free_while_encoding, free_while_decoding = [], [], []
        write, encode, decode = codec.write, codec.encode, codec.decode

        def watched(conn, out):
            if out.header["kind"] == "call":
                free_while_writing.append(_free(path, 0.5))
            write(conn, out)

        def encoding(kind, *args, **kwargs):
            if kind == "call":
                free_while_encoding.append(_free(path, 0.5))
            return encode(kind, *args, **kwargs)

        def decoding(header, *args, **kwargs):
            if header.get("kind") == "returned":
                free_while_decoding.append(_free(path, 0.5))
            return decode(header, *args, **kwargs)

        monkeypatch.setattr(codec, "write", watched)
        monkeypatch.setattr(codec, "encode", encoding)
        monkeypatch.setattr(codec, "decode", decoding)
        source = (
            "import fcntl\n"
            "def f(x):\n"
            f"    with open({path + timing_lock.WORK_SUFFIX!r}, 'a') as work:\n"
            "        try:\n"
            "            fcntl.flock(work, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
            "        except BlockingIOError:\n"
            "            return 'inside a section'\n"
            "    return 'outside every section'\n"
        )
        assert process.load(source).failure is None
        with lock.work():
            reply = process.call("f", (torch.ones(1 << 20),), {})
        assert free_while_writing == free_while_encoding == free_while_decoding == [True]
        assert reply.value == "inside a section"
    finally:
        process.close()


def _traced_section(path: str, marks: str, kind: str, what: str, hold_s: float, after: tuple[str, ...]) -> None:
    """Hold a turn or a work section (with a phase `what` in it) for hold_s, once the marks
    named in `after` exist; mark `<what>.in` once inside and `<what>.out` once out."""
    timing_lock.spin_up = lambda: None
    deadline = time.monotonic() + 30
    while not all(os.path.exists(os.path.join(marks, m)) for m in after) and time.monotonic() < deadline:
        time.sleep(0.01)
    phases = Phases()
    lock = TimingLock(path, phases)
    lock.tag = f"op-{what}"
    with phases("outer"):
        with lock() if kind == "turn" else lock.work():
            open(os.path.join(marks, f"{what}.in"), "w").close()
            if what == "outer":  # a section in which no phase ends is named after the one it ran in
                time.sleep(hold_s)
            else:
                with phases(what):
                    time.sleep(hold_s)
        open(os.path.join(marks, f"{what}.out"), "w").close()


def test_the_trace_says_which_section_a_turn_drained(tmp_path, monkeypatch):
    """benchmarks/throughput.py --trace: each judge appends its turns and the sections it
    held to one file, and the report names what each turn's drain waited for."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import gpu_trace

    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv(timing_lock.TRACE_ENV, str(trace))
    lock, marks = str(tmp_path / "gpu.lock"), str(tmp_path)
    ctx = multiprocessing.get_context("fork")
    # the turn is asked for while the reference runs, once the draw and the other section have ended
    procs = [ctx.Process(target=_traced_section, args=(lock, marks, *s)) for s in
             (("work", "reference", 0.8, ()), ("work", "draw", 0.1, ()), ("work", "outer", 0.1, ()),
              ("turn", "replay timing", 0.1, ("reference.in", "draw.out", "outer.out")))]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    records = gpu_trace.read(trace)
    assert sorted(r["kind"] for r in records) == ["section", "section", "section", "turn"]
    turn = next(r for r in records if r["kind"] == "turn")
    reference = next(r for r in records if r.get("what") == "reference")
    assert turn["tag"] == "op-replay timing"
    assert turn["began"] < reference["ended"] < turn["drained"]  # it waited for the reference
    assert {r["what"] for r in records if r["kind"] == "section"} == {"reference", "draw", "outer"}
    report = gpu_trace.report(records)
    assert "| reference | 1 |" in report  # the drain's culprit, not the draw that had ended
    assert "| draw |" not in report.split("| work section")[0]


def test_the_candidates_recorded_call_waits_for_a_turn_asked_for_during_its_first_call(monkeypatch, tmp_path):
    """The candidate's first call (its kernels loaded) and its recorded call (with the call on
    set V) hold two work sections: a turn asked for during the first gets the GPU once it
    ends, and the candidate process goes on only when the judge says so, after the turn.
    (Until session 24 the candidate went on by itself, on the GPU beside that turn.)"""
    monkeypatch.setattr(timing_lock, "spin_up", lambda: None)
    path = str(tmp_path / "gpu.lock")
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # a candidate process that answers the timing protocol, and a turn beside it
        ours.close()
        conn = Connection(theirs.detach())
        known = tensor_storage.Storages()
        codec.receive(conn, "cpu", known, adopt=True)
        codec.send(conn, "gpu")
        codec.receive(conn, "cpu")  # granted
        with open(path + timing_lock.WANT_SUFFIX, "a") as want, open(path + timing_lock.WORK_SUFFIX, "a") as work:
            fcntl.flock(want, fcntl.LOCK_EX)  # a turn asked for while the candidate's first call runs
            codec.send(conn, "staged")
            drained, until = False, time.monotonic() + 5
            while not drained and time.monotonic() < until:
                try:
                    fcntl.flock(work, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    drained = True
                except BlockingIOError:
                    time.sleep(0.01)
            go_during_the_turn = conn.poll(0.3)
        go_after = conn.poll(5) and codec.receive(conn, "cpu").kind == "go"
        codec.send(conn, "timed", {"recording": {
            "drained": drained, "go during the turn": go_during_the_turn, "go after": go_after}})
        os._exit(0)
    theirs.close()
    process = candidate_process.CandidateProcess.__new__(candidate_process.CandidateProcess)
    turn = TimingLock(path, Phases())
    process.pid, process.conn, process.device, process.exclusive = pid, Connection(ours.detach()), "cpu", turn
    x = torch.ones(4)
    reply, _, _ = process.time("f", ((x,), {}), ((x.clone(),), {}))
    assert reply.failure is None
    assert reply.value["recording"] == {"drained": True, "go during the turn": False, "go after": True}
    os.waitpid(pid, 0)


def test_the_trace_report_sums_each_step_of_the_measurements():
    """A replay's measurement in a turn traces its steps (kgb.evaluate.replay): the report
    sums each over the sweep, the largest first, and names the slowest measurements."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import gpu_trace

    records = [{"kind": "measure", "pid": 1, "asked": 0.0, "began": 0.0, "ended": e, "tag": tag, "mode": "eager",
                "repeats": 100, "steps": steps}
               for tag, e, steps in (("a::x", 2.0, {"synchronize": 0.1, "repetitions": 1.9}),
                                     ("a::y", 0.5, {"synchronize": 0.4, "repetitions": 0.1}))]
    report = gpu_trace.report(records)
    rows = [line for line in report.splitlines() if line.startswith("| repetitions") or line.startswith("| synchronize")]
    assert rows == ["| repetitions | 2.0 | 1.000 | 1.900 | 1.90 |", "| synchronize | 0.5 | 0.250 | 0.400 | 0.40 |"]
    assert "the slowest: replay a::x 2.00 s eager x100" in report
    # a chip's first run also measures baselines in the turns; the report sets them apart
    records.append({"kind": "measure", "pid": 2, "asked": 0.0, "began": 0.0, "ended": 3.0, "tag": "a::z big",
                    "who": "baseline", "mode": "graph", "repeats": 40, "steps": {"repetitions": 3.0}})
    report = gpu_trace.report(records)
    assert "measurements by whose call: baseline 1 (3.0 s, 1 on graphs); replay 2 (2.5 s, 0 on graphs)" in report
    assert "the slowest: baseline a::z big 3.00 s graph x40" in report


def test_the_trace_report_sets_the_sweeps_first_starts_apart_from_the_later_ones():
    """benchmarks/gpu_trace.py: the starts of a sweep's first ten seconds are the same work in
    every sweep of its width (what tells a slower host), the later ones are counted with the
    starts that overlapped each."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import gpu_trace

    def start(began: float, took: float) -> dict:
        return {"kind": "start", "pid": int(began * 10), "asked": began, "began": began, "ended": began + took,
                "processes": 2}

    records = [start(40.0, 1.5), start(42.0, 10.0), start(42.1, 11.0),  # the first ten seconds
               start(80.0, 4.0), start(81.0, 6.0), start(100.0, 2.0)]   # two overlapping, one alone
    line = next(x for x in gpu_trace.report(records).splitlines() if x.startswith("the 3 starts"))
    assert line == "the 3 starts of the first 10 s: median 10.00 s; the 3 later: median 4.00 s, 0.7 others starting beside each"


def test_the_trace_report_says_how_long_a_judge_took_from_its_start_to_its_first_section():
    """benchmarks/gpu_trace.py: what a new evaluation waits for when no spare is ready, by the
    period of the sweep, from each judge's start to the first work section of the same pid."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import gpu_trace

    def start(pid: int, began: float) -> dict:
        return {"kind": "start", "pid": pid, "asked": began, "began": began, "ended": began + 3.0, "processes": 2}

    def section(pid: int, asked: float) -> dict:
        return {"kind": "section", "pid": pid, "asked": asked, "began": asked, "ended": asked + 0.1, "what": "import"}

    records = [start(1, 10.0), section(1, 18.0), section(1, 30.0), start(2, 12.0), section(2, 16.0),
               start(3, 150.0), section(3, 160.0), start(4, 160.0)]  # the last never got a request
    line = next(x for x in gpu_trace.report(records).splitlines() if x.startswith("a start to"))
    assert line == "a start to its judge's first section, by when it started: 0-100 s: 6.00 s (2), 100-200 s: 10.00 s (1)"
