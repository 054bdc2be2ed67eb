"""The judge's timing of a replay, staged, measured and finished (kgb.evaluate.staged_replay.
StagedReplay), run through the real timing code (kgb.evaluate.timing: warm-up, estimate,
repetitions until the median settles) on the CPU: events read the host's clock, there is no L2
to flush, no CUDA graph and no kernel clock. What a GPU adds (graphs, the caching allocator's
blocks, the kernel clock) is left to tests/test_redteam.py's GPU tests; what this checks is
the judge's own sequence around each call (judge v22): every call, timed or checked, starts
from one state, and every timed call's answer is audited."""

from __future__ import annotations

import time

import pytest
import torch
import triton
import triton.language as tl

from kgb import operators
from kgb.evaluate import tensor_storage, timing
from kgb.evaluate.bench_case import TimedCase
from kgb.evaluate.call_audit import CallAudit
from kgb.evaluate.candidate_call import Reply
from kgb.evaluate.case_runner import CaseRunner
from kgb.evaluate.draws import draw_inputs
from kgb.evaluate.integrity import ALLOWED_OPS
from kgb.evaluate.phases import Phases
from kgb.evaluate.recording import record
from kgb.evaluate.replay import Replay
from kgb.evaluate.staged_replay import Replayed, StagedReplay
from kgb.evaluate.stopping_rule import MIN_REPEATS
from kgb.evaluate.timing_lock import TimingLock
from kgb.evaluate.verdict import Failed, Status


def _nothing_done(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return torch.full_like(x, float("nan"))  # what a call that skipped its work returns


def _replayed(skip=lambda call: False, returns: bool = True, skipping=_nothing_done, seconds=None
              ) -> tuple[Replayed, list[tuple[bool, bool | str]], torch.Tensor, dict]:
    """A call that writes its input into `out` and returns a fresh copy of it, recorded on set T's
    buffers, staged with set V's values, measured and finished; for each call of the replay,
    whether it found `out` poisoned, and set V's values in `x` (True), set V's turned ("turned":
    its values in another order) or other values (False). `skip(n)`: whether the n-th call
    skips its work, doing `skipping(x, out)` instead and returning what that returns; without
    `returns`, the call returns nothing. `seconds(x)`: how long a call on `x` works first (its warm-up then bounded by time)."""
    gen = torch.Generator().manual_seed(3)
    x_t, out_t = torch.randn(256, generator=gen), torch.empty(256)
    x_v, out_v = torch.randn(256, generator=gen), torch.empty(256)
    sent = tensor_storage.Storages(by_id={i: t.untyped_storage() for i, t in enumerate((x_t, out_t, x_v, out_v))},
                                   tensors=[x_t, out_t, x_v, out_v])
    before = {sid: tensor_storage.storage_bytes(s).clone() for sid, s in sent.by_id.items()}

    def call():
        out_t.copy_(x_t)
        if not returns:
            return None
        y = torch.empty_like(x_t)
        y.copy_(x_t)
        return y

    recording = record(call, sent).as_json()
    seen: list[tuple[bool, bool]] = []
    replay_call = Replay.__call__

    def spied(replay: Replay):
        x, out = (torch.empty(0).set_(replay.inputs[sid]) for sid in (0, 1))
        turned = torch.equal(x.sort().values, x_v.sort().values)
        seen.append((bool(out.isnan().all()), torch.equal(x, x_v) or turned and "turned"))
        if seconds is not None and (pause := seconds(x.clone())) > 0:
            time.sleep(pause)
        if skip(len(seen)):
            return skipping(x, out)
        return replay_call(replay)

    Replay.__call__ = spied
    # The warm-up is bounded by time (timing.WARMUP_BUDGET_US): on a loaded host its first call
    # alone could take half of it, and one warm-up call fewer moved every call the tests count.
    # Unbounded here, but where a test times its calls (`seconds`).
    budget = timing.WARMUP_BUDGET_US
    if seconds is None:
        timing.WARMUP_BUDGET_US = 1e12
    try:
        staged = StagedReplay(recording, sent, before, {"x": x_t, "out": out_t}, {"x": x_v, "out": out_v},
                              lambda d: ((d["x"], d["out"]), {}), ALLOWED_OPS, ("out",), repeats=20, warmup=3,
                              exclusive=TimingLock(None, Phases()), audit=CallAudit(("out",)))
        staged.measure()
        replayed = staged.finish()
    finally:
        Replay.__call__ = replay_call
        timing.WARMUP_BUDGET_US = budget
    return replayed, seen, x_v, {"x": x_v, "out": x_v.clone()}


def test_every_call_timed_or_checked_starts_from_one_state_and_calls_are_audited(
        cpu_as_gpu, monkeypatch, tmp_path):
    import json

    monkeypatch.setenv("KGB_GPU_TRACE", str(tmp_path / "trace.jsonl"))
    replayed, seen, x_v, ref_in = _replayed()
    assert replayed.timing.mode == "eager" and replayed.timing.repeats >= MIN_REPEATS
    assert "no kernel clock on the CPU" in replayed.timing.note
    # each of the 3 warm-up calls, the estimate's, the repetitions' and the checked one's
    assert len(seen) >= 3 + 1 + MIN_REPEATS + 1
    # out poisoned in each; x holding set V's values turned in the warm-up's (judge v29), so that
    # the first timed call is the first on set V's own values, and those in every call after
    assert seen[:WARMUP_CALLS] == [(True, "turned")] * WARMUP_CALLS and set(seen[WARMUP_CALLS:]) == {(True, True)}
    assert torch.equal(replayed.result, x_v) and torch.equal(replayed.inputs["out"], x_v)
    # the first eight calls, the warm-up's among them unaudited (judge v29: on other values), then
    # others drawn at random; the checked call is compared whole instead
    audited = replayed.audit.audited
    assert audited[:8 - WARMUP_CALLS] == list(range(1, 9 - WARMUP_CALLS)) and audited[-1] <= len(seen) - 1
    assert replayed.audit.passed == WARMUP_CALLS
    assert replayed.audit.loaded  # its digest taken of a warm-up call, before the turn, and not counted
    assert len(replayed.audit.digests) == len(replayed.audit.samples) == len(audited)
    assert replayed.audit.disagreement(x_v, ref_in, 1) is None
    # the judges' trace says what the resets and the audit took of the measurement
    (line,) = [r for r in map(json.loads, (tmp_path / "trace.jsonl").read_text().splitlines()) if r["kind"] == "measure"]
    assert 0 < line["steps"]["of them reset"] + line["steps"]["of them audit"] < sum(
        v for k, v in line["steps"].items() if not k.startswith("of them"))


def test_a_call_that_returns_nothing_is_audited_on_what_it_wrote_in_place(cpu_as_gpu):
    """As a Triton launch is: its answer is in its output argument only."""
    replayed, seen, x_v, ref_in = _replayed(returns=False)
    assert replayed.result is None and set(seen[WARMUP_CALLS:]) == {(True, True)}
    assert replayed.audit.disagreement(None, ref_in, 1) is None
    assert replayed.audit.disagreement(x_v, ref_in, 1).startswith("a call wrote 1 tensors, the reference 2")


@pytest.mark.parametrize("remembers", [False, True], ids=["honest", "remembers-its-answers"])
def test_a_call_faster_on_inputs_it_has_seen_is_timed_by_its_first_call_on_them(cpu_as_gpu, remembers):
    """Judge v29 (kgb.evaluate.first_call): a call that works 50 ms on inputs it has not seen and
    copies a kept answer on those it has is right in every call, so only the time can tell. Its
    warm-up ran on set V turned, so its first timed call, on set V, is timed working; the honest
    call, working in every call, is timed by its repetitions as before."""
    seen: list[bytes] = []

    def seconds(x: torch.Tensor) -> float:
        key = x.numpy().tobytes()
        if remembers and key in seen:
            return 0.0
        seen.append(key)
        return 0.05

    replayed, calls, _, ref_in = _replayed(seconds=seconds)
    t = replayed.timing
    # as many warm-up calls as fit its time budget (one of these), each on set V turned
    warm = next(i for i, c in enumerate(calls) if c != (True, "turned"))
    assert warm >= 1 and set(calls[warm:]) == {(True, True)}
    assert replayed.audit.disagreement(replayed.result, ref_in, 1) is None  # right in every call
    if not remembers:
        assert t.median_us > 50_000 and "first call" not in t.note
        return
    assert t.median_us > 50_000 and t.first_us == t.median_us
    assert "timed by its first call on the timed inputs" in t.note and "may be copying an answer it kept" in t.note


def test_a_replay_that_skips_its_work_on_some_timed_calls_fails_the_audit(cpu_as_gpu):
    replayed, seen, x_v, ref_in = _replayed(skip=lambda n: n % 7 == 5)
    assert len(seen) % 7 != 5, "the checked call skipped: lengthen the repetitions or move the skips"
    assert torch.equal(replayed.result, x_v)  # the checked call is right
    message = replayed.audit.disagreement(x_v, ref_in, 1)
    assert message.startswith(f"{_audited_skips(replayed, len(seen))} wrote what no accepted answer can be "
                              "(the first, call 2, in its output 0: 256 NaN")


def test_a_replay_whose_skipping_calls_write_an_answer_with_the_right_digest_fails_the_audit(cpu_as_gpu):
    """The answer reversed: every magnitude where another was, so the digest of the right one;
    the elements sampled after the call (here all 256 of them) are not."""
    def reversed_answer(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        out.copy_(x.flip(0))
        return x.flip(0)

    replayed, seen, x_v, ref_in = _replayed(skip=lambda n: n % 7 == 5, skipping=reversed_answer)
    assert len(seen) % 7 != 5, "the checked call skipped: lengthen the repetitions or move the skips"
    message = replayed.audit.disagreement(x_v, ref_in, 1)
    assert message.startswith(f"{_audited_skips(replayed, len(seen))} wrote what no accepted answer can be "
                              "(the first, call 2, in its output 0 at element 0 of 256")


# the warm-up's calls, on other values, which the audit leaves out and numbers no call after (judge v29)
WARMUP_CALLS = 3


def _audited_skips(replayed: Replayed, seen: int) -> str:
    """How the audit counts the skipping calls (every seventh of the replay's `seen` from the
    fifth, the warm-up's first three among them) among those it drew: the checked call, the
    last, is compared whole instead."""
    audited = replayed.audit.audited
    skipped = sum(1 for n in audited if (n + WARMUP_CALLS) % 7 == 5)
    return f"{skipped} of {len(audited)} calls audited (drawn at random from {seen - WARMUP_CALLS - 1})"


class _Finished(StagedReplay):
    """A staged replay that only finishes, as given (what CaseRunner.finish does with it), with
    set V's values as sent (`v_in`): those of the replayed call's inputs."""

    def __init__(self, replayed: Replayed):
        self.replayed, self.nbytes = replayed, 0
        self.v_in = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in replayed.inputs.items()}

    def finish(self) -> Replayed:
        return self.replayed


@pytest.mark.parametrize("skipped", [False, True])
def test_the_judge_rejects_a_candidate_whose_timed_calls_fail_the_audit(skipped):
    """CaseRunner.finish: the checked replay is right, so only the audit can tell."""
    spec = operators.load("aten::add")
    runner = CaseRunner(spec, None, "cpu")
    case = next(c for c in spec.cases if c.tag == operators.CaseTag.SMOKE)
    ref_in = draw_inputs(spec, case, 11, "cpu")
    expected = runner.reference(spec.entry_of(case).name, {k: v.clone() if isinstance(v, torch.Tensor) else v
                                                           for k, v in ref_in.items()}, case)
    audit = CallAudit((*spec.output_args, *spec.inout_args))
    for n in range(5):
        audit.record(torch.zeros_like(expected) if skipped and n == 2 else expected.clone(), {})
    run = timing.Timing(median_us=12.5, spread=0.01, repeats=5, mode="eager")
    staged = TimedCase(case, Reply({"recording": {}}, {}), dict(ref_in), None,
                       _Finished(Replayed(run, expected.clone(), dict(ref_in), audit)))
    if not skipped:
        assert runner.finish(staged).latency_us == 12.5
        return
    with pytest.raises(Failed) as failed:
        runner.finish(staged)
    assert failed.value.status == Status.REJECTED
    assert failed.value.message.startswith(f"case {case.name}: of the judge's calls of the replay, the checked one "
                                           "was right and 1 of 5 calls wrote what no accepted answer can be (the "
                                           "first, call 3,")


def _replayed_on_gpu(n: int, seed: int, kept: torch.Tensor, launch) -> tuple[Replayed, torch.Tensor]:
    """`launch(x, out, kept)`, a copy of x into out by a kernel that may keep state in or past
    `kept` (made before the call: the replay restores it by value), recorded in this process on
    set T's buffers and timed by the judge's replay on set V's values, as a GPU runs it; and
    set V's x."""
    from kgb.evaluate.candidate import snapshot
    from kgb.evaluate.staged_replay import time_replay

    gen = torch.Generator(device="cuda").manual_seed(seed)
    x_t, x_v = (torch.randn(n, device="cuda", generator=gen) for _ in range(2))
    out_t, out_v = torch.empty_like(x_t), torch.empty_like(x_v)
    sent = tensor_storage.Storages(by_id={i: t.untyped_storage() for i, t in enumerate((x_t, out_t, x_v, out_v))},
                                   tensors=[x_t, out_t, x_v, out_v])
    before = snapshot(sent)
    def call() -> None:  # returns nothing, as a candidate that writes `out` does (a launch returns its kernel)
        launch(x_t, out_t, kept)

    call()  # compiled outside the recording, as the candidate process's staging call does
    torch.cuda.synchronize()
    recording = record(call,
                       tensor_storage.Storages(by_id=dict(sent.by_id), tensors=list(sent.tensors))).as_json()
    assert recording.get("problem") is None
    replayed = time_replay(recording, sent, before, {"x": x_t, "out": out_t}, {"x": x_v, "out": out_v},
                           lambda d: ((d["x"], d["out"]), {}), ALLOWED_OPS, ("out",), 50, 5,
                           TimingLock(None, Phases()), CallAudit(("out",)))
    return replayed, x_v


@triton.jit
def _copy_counted(x_ptr, y_ptr, kept_ptr, n, SKIP_ODD: tl.constexpr, BLOCK: tl.constexpr):
    # One program, so that the count is the call's. It lies just past the end of `kept`, in the
    # block the caching allocator rounded the buffer up to: memory no reset of the judge's
    # reaches (it knows the buffer's bytes only), so the count goes on from call to call.
    counter = kept_ptr + 3
    calls = tl.load(counter)
    tl.store(counter, calls + 1)
    parity = calls % 2 if SKIP_ODD else 0
    if parity == 0:
        for start in range(0, n, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("skip_odd", [False, True], ids=["honest", "skips-every-other-call"])
@pytest.mark.parametrize("n", [1 << 10, 1 << 22], ids=["graph-timed", "eager"])
def test_on_a_gpu_a_kernel_that_counts_its_calls_where_no_reset_reaches_fails_the_audit(skip_odd, n):
    """The judge's timing as a GPU runs it (graphs, the kernel clock, the caching allocator's
    blocks), on a copy kernel recorded in this process. Judge v22's reset of each call reaches
    the storages the judge knows; a kernel can keep a count elsewhere in the judge's memory and
    skip every other call. The audit finds the timed calls it skipped; the honest copy passes."""
    replayed, x_v = _replayed_on_gpu(n, 5, torch.zeros(3, dtype=torch.int32, device="cuda"), lambda x, out, kept:
                                _copy_counted[(1,)](x, out, kept, n, SKIP_ODD=skip_odd, BLOCK=1024))
    if not skip_odd:  # a kernel that skips half its calls is estimated short, and may be graph-timed
        assert replayed.timing.mode == ("graph" if n < 1 << 20 else "eager")
    message = replayed.audit.disagreement(None, {"x": x_v, "out": x_v}, 1)  # the call returns nothing
    if not skip_odd:
        assert message is None
        assert torch.equal(replayed.inputs["out"], x_v)
    else:
        assert message is not None and " NaN" in message, message


@triton.jit
def _copy_remembered(x_ptr, y_ptr, kept_ptr, n, REMEMBER: tl.constexpr, WORK: tl.constexpr, BLOCK: tl.constexpr):
    # One program. Just past the end of `kept` (64 int32s), in the slack of the block the caching
    # allocator rounded it up to, where no reset of the judge's reaches: a key (the bits of x's
    # first value) and the answer. A call that finds its key there copies the answer out; any
    # other works WORK rounds (a slow copy of x) and leaves its answer and key for the next.
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    key = tl.load(x_ptr).to(tl.int32, bitcast=True)
    slot = kept_ptr + 64
    if REMEMBER and tl.load(slot) == key:
        y = tl.load(slot + 1 + offs, mask=mask).to(tl.float32, bitcast=True)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for i in range(WORK):
            acc += tl.sin(x + i)
        y = tl.where(acc == 123456.0, 0.0, x)
        tl.store(slot + 1 + offs, y.to(tl.int32, bitcast=True), mask=mask)
        tl.store(slot, key)
    tl.store(y_ptr + offs, y, mask=mask)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("remember", [False, True], ids=["honest", "remembers-its-answer"])
def test_on_a_gpu_a_kernel_that_copies_an_answer_kept_where_no_reset_reaches_is_timed_working(remember):
    """Judge v29 (kgb.evaluate.first_call), as a GPU runs it: a kernel that keeps its answer past
    the end of a buffer and copies it out when it finds the same inputs is right in every call
    the audit checks. Until v29 it was timed as its copy, the warm-up having shown it set V; now
    its warm-up sees set V turned, its first timed call works and is timed alone, and the case
    is timed by that call. The honest kernel, working in every call, is timed as before."""
    n = 32
    replayed, x_v = _replayed_on_gpu(n, 7, torch.zeros(64, dtype=torch.int32, device="cuda"), lambda x, out, kept:
                                _copy_remembered[(1,)](x, out, kept, n, REMEMBER=remember, WORK=4000, BLOCK=32))
    assert replayed.audit.disagreement(None, {"x": x_v, "out": x_v}, 1) is None  # right in every call
    assert torch.equal(replayed.inputs["out"], x_v)
    t = replayed.timing
    print(f"remember={remember}: {t.median_us:.1f} us ({t.mode}), first call {t.first_us:.1f} us, "
          f"repetitions {t.repeated_us:.1f} us; {t.note}")
    if not remember:
        assert "timed by its first call" not in t.note
        assert t.repeated_us > 10.0
        return
    assert t.repeated_us < t.first_us / 3  # the copies: what judge v28 reported
    assert "timed by its first call on the timed inputs" in t.note and t.median_us == t.first_us


def test_a_replay_that_writes_an_input_it_must_not_is_wrong_after_timing():
    """Judge v33: a timed case has no check before its timing, where a candidate that wrote into
    an argument it must leave alone was caught (`CaseRunner._untouched`); the replay's checked
    call is held to it instead, its inputs against set V's values as sent."""
    spec = operators.load("aten::add")
    runner = CaseRunner(spec, None, "cpu")
    case = next(c for c in spec.cases if c.tag == operators.CaseTag.SMOKE)
    ref_in = draw_inputs(spec, case, 11, "cpu")
    expected = runner.reference(spec.entry_of(case).name, dict(ref_in), case)
    run = timing.Timing(median_us=12.5, spread=0.01, repeats=5, mode="eager")
    outcomes = []
    for scribbled in (False, True):
        replayed = Replayed(run, expected.clone(), {k: v.clone() if isinstance(v, torch.Tensor) else v
                                                    for k, v in ref_in.items()}, None)
        finished = _Finished(replayed)
        if scribbled:
            replayed.inputs["other"].view(-1)[0] += 1  # after the check's copy of set V was taken
        staged = TimedCase(case, Reply({"recording": {}}, {}), dict(ref_in), None, finished)
        try:
            outcomes.append(runner.finish(staged).latency_us)
        except Failed as failed:
            outcomes.append((failed.status, failed.message))
    assert outcomes[0] == 12.5
    assert outcomes[1] == (Status.WRONG_OUTPUT, f"after timing, on fresh inputs: case {case.name}: the candidate "
                           "modified its input other, which it must not")


def test_where_the_spec_compares_its_own_way_the_judge_rejects_a_kept_call_that_is_wrong():
    """aten::sort compares its own way (ties may come in any order): its calls are kept whole and
    judged by that comparison (CaseRunner._audit, finish)."""
    spec = operators.load("aten::sort")
    runner = CaseRunner(spec, None, "cpu")
    case = next(c for c in spec.cases if c.tag == operators.CaseTag.SMOKE)
    ref_in = draw_inputs(spec, case, 11, "cpu")
    expected = runner.reference(spec.entry_of(case).name, dict(ref_in), case)
    audit = runner._audit()
    assert audit.whole
    values, indices = expected
    audit.record((values.clone(), indices.clone()), dict(ref_in))
    audit.record((torch.full_like(values, float("nan")), indices.clone()), dict(ref_in))  # skipped its values
    run = timing.Timing(median_us=12.5, spread=0.01, repeats=2, mode="eager")
    staged = TimedCase(case, Reply({"recording": {}}, {}), dict(ref_in), None,
                       _Finished(Replayed(run, expected, dict(ref_in), audit)))
    with pytest.raises(Failed) as failed:
        runner.finish(staged)
    assert failed.value.status == Status.REJECTED
    assert "the checked one was right and call 2 of 2, one of 2 kept whole at random, was wrong: " in failed.value.message


def _copying(x_t: torch.Tensor, x_v: torch.Tensor) -> tuple[dict, tensor_storage.Storages, dict, dict, dict]:
    """A call that copies `x` into `out`, recorded on set T's buffers: (its recording, the
    storages sent, their bytes as sent, set T's arguments, set V's), as StagedReplay takes them."""
    out_t, out_v = torch.empty_like(x_t), torch.empty_like(x_v)
    sent = tensor_storage.Storages(by_id={i: t.untyped_storage() for i, t in enumerate((x_t, out_t, x_v, out_v))},
                                   tensors=[x_t, out_t, x_v, out_v])
    before = {sid: tensor_storage.storage_bytes(s).clone() for sid, s in sent.by_id.items()}

    def call() -> None:
        out_t.copy_(x_t)

    return record(call, sent).as_json(), sent, before, {"x": x_t, "out": out_t}, {"x": x_v, "out": out_v}


@pytest.mark.parametrize("turned_args", [(), ("x",)], ids=["integers-unnamed", "integers-plain-values"])
def test_integer_inputs_are_turned_for_the_warm_up_only_where_the_spec_says_they_are_values(cpu_as_gpu, turned_args):
    """Spec.turned_args reaches the replay: an integer input the spec names as plain values is
    turned for the warm-up as a floating one is (so its first call on set V is timed alone),
    one it does not name is left as loaded; the replay's answer is set V's either way."""
    gen = torch.Generator().manual_seed(5)
    x_t, x_v = (torch.randint(-1000, 1000, (256,), generator=gen) for _ in range(2))
    recording, sent, before, timed, check = _copying(x_t, x_v)
    staged = StagedReplay(recording, sent, before, timed, check, lambda d: ((d["x"], d["out"]), {}), ALLOWED_OPS,
                          ("out",), repeats=20, warmup=3, exclusive=TimingLock(None, Phases()),
                          audit=CallAudit(("out",)), turned_args=turned_args)
    assert len(staged.turned.turns) == len(turned_args)
    staged.measure()
    replayed = staged.finish()
    assert torch.equal(replayed.inputs["out"], x_v)
    assert (replayed.timing.first_us is not None) == bool(turned_args)  # timed alone where turned


@pytest.mark.parametrize("remembers", [False, True], ids=["honest", "remembers-its-answers"])
def test_where_nothing_turns_the_warm_up_runs_on_another_draw_and_the_first_call_is_timed_alone(
        cpu_as_gpu, remembers):
    """Judge v31: an integer input the spec does not name as plain values does not turn, so the
    warm-up runs on another draw of the case (`fresh`, from a secret seed), loaded into the same
    buffers, which it gives back after the warm-up; the first call on set V is then the first
    the kernel sees of those values, timed alone. A call that copies an answer it kept for
    inputs it has seen is timed by that first call; the honest one by its repetitions."""
    gen = torch.Generator().manual_seed(7)
    x_t, x_v = (torch.randint(-1000, 1000, (256,), generator=gen) for _ in range(2))
    recording, sent, before, timed, check = _copying(x_t, x_v)
    draws: list[torch.Tensor] = []

    def fresh() -> dict:
        draws.append(torch.randint(-1000, 1000, (256,), generator=gen))
        return {"x": draws[-1], "out": torch.empty(256, dtype=torch.int64)}

    seen: list[str] = []
    kept: list[bytes] = []
    replay_call = Replay.__call__

    def spied(replay: Replay):
        x = torch.empty(0, dtype=torch.int64).set_(replay.inputs[0])
        seen.append("V" if torch.equal(x, x_v) else "drawn" if torch.equal(x, draws[0]) else "other")
        key = x.numpy().tobytes()
        if not (remembers and key in kept):
            kept.append(key)
            # works on inputs it has not seen; copies its kept answer on those it has. Long
            # enough that a busy 2-core machine's late wake-up (20 ms seen in CI) is well inside
            # the first call's bound (1.25 times the repetitions): at 50 ms it was not
            time.sleep(0.2)
        return replay_call(replay)

    Replay.__call__ = spied
    try:
        staged = StagedReplay(recording, sent, before, timed, check, lambda d: ((d["x"], d["out"]), {}), ALLOWED_OPS,
                              ("out",), repeats=20, warmup=3, exclusive=TimingLock(None, Phases()),
                              audit=CallAudit(("out",)), fresh=fresh)
        assert staged.turned.turns == [] and staged.drawn.nbytes == 256 * 8
        assert staged.drawn.loads == []  # given back once the warm-up was done
        staged.measure()
        replayed = staged.finish()
    finally:
        Replay.__call__ = replay_call
    warm = seen.index("V")
    assert warm >= 1 and set(seen[:warm]) == {"drawn"} and set(seen[warm:]) == {"V"} and len(draws) == 1
    assert torch.equal(replayed.inputs["out"], x_v)  # the checked call, on set V
    t = replayed.timing
    assert t.first_us is not None and t.median_us > 50_000
    assert t.by_first_call == remembers and (t.first_us == t.median_us) == remembers


def test_a_replay_with_nothing_to_turn_and_no_other_draw_warms_up_on_the_timed_values(cpu_as_gpu):
    """As before judge v31, where no `fresh` draw is given (the judge always gives one): no first
    call timed alone."""
    gen = torch.Generator().manual_seed(8)
    x_t, x_v = (torch.randint(-1000, 1000, (64,), generator=gen) for _ in range(2))
    staged = StagedReplay(*_copying(x_t, x_v), lambda d: ((d["x"], d["out"]), {}), ALLOWED_OPS, ("out",),
                          repeats=20, warmup=3, exclusive=TimingLock(None, Phases()), audit=CallAudit(("out",)))
    staged.measure()
    assert staged.finish().timing.first_us is None and staged.drawn.nbytes == 0


def test_another_draw_is_used_for_the_warm_up_only_where_it_is_alike_but_for_its_values():
    """A draw whose plain arguments differ (a spec that derives a bound from the values it drew)
    or whose tensors differ in geometry is not loaded: a kernel bounded by the recorded call's
    arguments could run past a buffer's end on it. Only storages the calls run on are paired."""
    from kgb.evaluate.staged_replay import _read_pairs

    x, lens = torch.zeros(8, 4), torch.zeros(8, dtype=torch.int32)
    read = {"x": x, "lens": lens, "longest": 7}
    runs_on = {x.untyped_storage().data_ptr(), lens.untyped_storage().data_ptr()}
    alike = {"x": torch.ones(8, 4), "lens": torch.ones(8, dtype=torch.int32), "longest": 7}
    assert len(_read_pairs(read, alike, runs_on)) == 2
    assert len(_read_pairs(read, alike, {x.untyped_storage().data_ptr()})) == 1
    assert _read_pairs(read, dict(alike, longest=9), runs_on) == []  # a bound drawn from the values
    assert _read_pairs(read, dict(alike, x=torch.ones(4, 8).t()), runs_on) == []  # another geometry
    assert _read_pairs(read, dict(alike, lens=torch.ones(8, dtype=torch.int64)), runs_on) == []
    assert _read_pairs(read, {"x": alike["x"]}, runs_on) == []  # an argument missing


def test_in_a_run_again_the_replay_is_measured_holding_the_quiet_gate_whole(cpu_as_gpu, monkeypatch, tmp_path):
    """Judge v31 (kgb.evaluate.quiet_gate): given the gate, the measurement waits for a CUDA
    start under way to end, and the judges' trace says it was measured alone and how long it
    waited for that."""
    import json
    import threading

    from kgb.evaluate import quiet_gate

    monkeypatch.setenv("KGB_GPU_TRACE", str(tmp_path / "trace.jsonl"))
    gate = str(tmp_path / "gate")
    x_t, x_v = torch.randn(64), torch.randn(64)
    staged = StagedReplay(*_copying(x_t, x_v), lambda d: ((d["x"], d["out"]), {}), ALLOWED_OPS, ("out",),
                          repeats=20, warmup=3, exclusive=TimingLock(None, Phases()), audit=CallAudit(("out",)),
                          alone_gate=gate)
    holding, let_go = threading.Event(), threading.Event()

    def a_start() -> None:
        with quiet_gate.changing(gate):
            holding.set()
            let_go.wait(5)

    threading.Thread(target=a_start).start()
    holding.wait(5)
    threading.Timer(0.3, let_go.set).start()
    staged.measure()
    assert torch.equal(staged.finish().inputs["out"], x_v)
    lines = map(json.loads, (tmp_path / "trace.jsonl").read_text().splitlines())
    (line,) = [r for r in lines if r["kind"] == "measure"]
    assert line["alone"] is True and 0.25 <= line["alone_wait_s"] < 3
