"""The judge's replay of a call's recorded work (kgb.evaluate.replay), on the CPU: what is
recorded, what a replay computes on other buffers, and what the judge refuses to replay.
Triton launches are replayed only on a GPU (benchmarks/judge_gpu.py shows them there)."""

from __future__ import annotations

import pytest
import torch

from kgb.evaluate import codec, tensor_storage
from kgb.evaluate.recording import Unreplayable, record
from kgb.evaluate.replay import Replay, _check_type


def _wire(value):
    """The recording as the judge receives it: through the codec, never as Python objects."""
    import multiprocessing

    a, b = multiprocessing.Pipe()
    codec.send(a, "timed", value)
    return codec.receive(b, "cpu").value


def _known(*tensors):
    return tensor_storage.Storages(by_id={i: t.untyped_storage() for i, t in enumerate(tensors)}, tensors=list(tensors))


def test_a_replay_does_the_recorded_work_on_the_judges_own_buffers():
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    table = torch.tensor([10.0, 20.0, 30.0])  # made before the call: it travels by value

    def call():
        y = torch.empty_like(x)
        y.copy_(x)
        z = y.t().to(torch.float64)
        w = torch.empty(3)
        w.copy_(table)
        return z, w, x[0]

    rec = record(call, _known(x))
    assert rec.problem is None
    # views do no work and are not steps; allocations and writes are
    assert [s["op"] for s in rec.steps] == ["aten::empty_like", "aten::copy_", "aten::_to_copy",
                                            "aten::empty.memory_format", "aten::copy_"]
    mine = torch.full((2, 3), 7.0)
    z, w, row = Replay(_wire(rec.as_json()), {0: mine.untyped_storage()})()
    assert torch.equal(z, torch.full((3, 2), 7.0, dtype=torch.float64))
    assert torch.equal(w, table)
    assert row.untyped_storage().data_ptr() == mine.untyped_storage().data_ptr()  # a view of the input stays one


def test_writes_into_an_input_land_in_the_judges_input():
    out = torch.zeros(4)

    def call():
        out.fill_(3.0)

    rec = record(call, _known(out))
    mine = torch.zeros(4)
    Replay(_wire(rec.as_json()), {0: mine.untyped_storage()})()
    assert torch.equal(mine, torch.full((4,), 3.0))


def test_a_computing_op_is_not_replayed():
    x = torch.ones(3)
    rec = record(lambda: x * 2, _known(x))
    with pytest.raises(Unreplayable, match="aten::mul"):
        Replay(_wire(rec.as_json()), {0: torch.ones(3).untyped_storage()})


def test_an_argument_the_judge_cannot_rebuild_makes_the_call_unreplayable():
    x = torch.ones(3)
    rec = record(lambda: torch.ops.aten.set_.source_Storage(torch.empty(0), x.untyped_storage()), _known(x))
    assert rec.problem and "UntypedStorage" in rec.problem
    with pytest.raises(Unreplayable):
        Replay(_wire(rec.as_json()), {})


@pytest.mark.parametrize("text", ["i32", "*fp32", "*kbf16", "fp64", "constexpr", ["*fp16", "i64"]])
def test_triton_types_are_accepted(text):
    _check_type(text)


@pytest.mark.parametrize("text", ['i32); system("id"); //', "*fp32 x; int y", "tensordesc<fp16[64,64]>", "nvTmaDesc", 3])
def test_other_kernel_argument_types_are_refused(text):
    """Signature types become C code in Triton's launcher, which the judge compiles and loads."""
    with pytest.raises(Unreplayable):
        _check_type(text)


def test_a_recording_that_names_an_unknown_storage_is_refused():
    x = torch.ones(2)
    rec = record(lambda: torch.empty(2).copy_(x), _known(x)).as_json()
    rec["steps"][1]["args"]["list"][1]["t"]["s"] = ["in", 5]
    with pytest.raises(Unreplayable, match="never had"):
        Replay(_wire(rec), {0: torch.ones(2).untyped_storage()})


@pytest.fixture(scope="module")
def sm90_kernel(tmp_path_factory):
    """A real kernel compiled for the H200 by this machine's Triton, as a candidate process has it."""
    import os

    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def add_one(x_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + i, tl.load(x_ptr + i, mask=i < n) + 1, mask=i < n)

    before = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = str(tmp_path_factory.mktemp("triton-cache"))
    try:
        source = ASTSource(add_one, {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, constexprs={"BLOCK": 128})
        yield triton.compile(source, target=GPUTarget("cuda", 90, 32))
    finally:
        if before is None:
            os.environ.pop("TRITON_CACHE_DIR")
        else:
            os.environ["TRITON_CACHE_DIR"] = before


def test_a_recorded_kernel_loads_back_from_its_description(sm90_kernel, tmp_path, monkeypatch):
    from kgb.evaluate.recording import _describe
    from kgb.evaluate.replay import _Kernel

    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (9, 0))
    desc = _wire(_describe(sm90_kernel))
    loaded = _Kernel(desc, tmp_path)
    assert loaded.compiled.name == "add_one" and loaded.n_args == 3
    assert loaded.compiled.kernel == sm90_kernel.asm["cubin"]
    assert loaded.compiled.metadata.shared == sm90_kernel.metadata.shared
    assert loaded.compiled.src.signature == {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}


@pytest.mark.parametrize("tamper", ["signature", "name", "arch", "arg_names"])
def test_a_tampered_kernel_description_is_refused(sm90_kernel, tmp_path, monkeypatch, tamper):
    import json

    from kgb.evaluate.recording import _describe
    from kgb.evaluate.replay import _Kernel

    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (9, 0))
    desc = _describe(sm90_kernel)
    meta = json.loads(desc["metadata"])
    if tamper == "signature":
        desc["signature"][1][1] = 'i32 n); system("id"); (void'
    elif tamper == "name":
        meta["name"] = "add_one(void); int x"
    elif tamper == "arch":
        meta["target"]["arch"] = 80
    else:
        desc["arg_names"] = ["x_ptr", "n"]
    desc["metadata"] = json.dumps(meta)
    with pytest.raises(Unreplayable):
        _Kernel(desc, tmp_path)


def test_the_event_log_keeps_whose_clock_timed_a_case_and_reads_older_logs():
    import dataclasses

    from kgb.evaluate.verdict import CaseResult, Status, TimedBy, Verdict
    from kgb.tracking import encoding, events

    case = CaseResult("big", "bench", Status.CORRECT, latency_us=3.0, baseline_us=4.0, timed_by=TimedBy.JUDGE)
    required = {f.name: None for f in dataclasses.fields(events.CandidateEvaluated)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    record = encoding.to_json(events.CandidateEvaluated(**{**required, "verdict": Verdict(Status.CORRECT, "ok", (case,))}))
    assert encoding.from_json(record).verdict.cases[0].timed_by is TimedBy.JUDGE
    del record["verdict"]["cases"][0]["timed_by"]  # a log written before the judge replayed calls
    assert encoding.from_json(record).verdict.cases[0].timed_by is None


def test_a_trial_run_says_whose_clock_timed_it():
    from types import SimpleNamespace

    from kgb.evaluate.verdict import CaseResult, Status, TimedBy, Verdict
    from kgb.tracking.mlflow_projection import first_call_cases, timed_by

    def trial(*clocks):
        cases = tuple(CaseResult(f"c{i}", "bench", Status.CORRECT, latency_us=1.0, timed_by=c) for i, c in enumerate(clocks))
        return SimpleNamespace(best=SimpleNamespace(verdict=Verdict(Status.CORRECT, "ok", cases)))

    assert timed_by(trial(TimedBy.JUDGE, TimedBy.JUDGE)) == "judge"
    assert timed_by(trial(TimedBy.JUDGE, TimedBy.CANDIDATE)) == "mixed"
    assert timed_by(trial(TimedBy.JUDGE, TimedBy.FIRST_CALL)) == "judge"  # the judge's replay, its first call
    assert first_call_cases(trial(TimedBy.JUDGE, TimedBy.FIRST_CALL)) == ["c1"]
    assert first_call_cases(trial(TimedBy.JUDGE, TimedBy.JUDGE)) == []
    assert timed_by(trial(TimedBy.CANDIDATE)) == "candidate"
    assert timed_by(trial()) is None  # the CPU: nothing timed


def test_a_replay_that_copies_from_host_memory_says_so_and_one_on_the_device_does_not():
    """A copy from pageable host memory (swap_blocks moves its CPU block mapping with `.to`)
    cannot be captured in a CUDA graph: the judge times such a replay eagerly instead of
    trying a capture that fails midway in its own CUDA context."""
    mapping, out = torch.arange(4), torch.zeros(4)

    def call():
        out.copy_(mapping.to(torch.float32))

    rec = _wire(record(call, _known(mapping, out)).as_json())
    assert Replay(rec, {0: mapping.clone().untyped_storage(), 1: out.clone().untyped_storage()}).reads_host
    on_device = {0: torch.empty(4, dtype=torch.int64, device="meta").untyped_storage(),
                 1: torch.empty(4, device="meta").untyped_storage()}  # stand-ins for GPU storages
    assert not Replay(rec, on_device).reads_host


def test_a_kernel_that_reads_host_memory_is_not_replayed(sm90_kernel, monkeypatch):
    """Seen on the H200: swap_blocks's candidate process got its CPU block mapping on the GPU,
    recorded a kernel reading it, and the judge's replay, whose copy is in host memory,
    faulted. Host memory reaches a kernel only pinned; the judge refuses such a launch."""
    from kgb.evaluate.recording import _describe

    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (9, 0))
    x = {"t": {"s": ["in", 0], "dtype": "float32", "size": [4], "stride": [1], "offset": 0, "conj": False, "neg": False}}
    rec = _wire({"kernels": {"k": _describe(sm90_kernel)}, "snapshots": [], "result": {"v": None},
                 "steps": [{"launch": "k", "grid": [1, 1, 1], "args": [x, {"v": 4}, {"v": 128}]}]})
    with pytest.raises(Unreplayable, match="reads host memory"):
        Replay(rec, {0: torch.zeros(4).untyped_storage()})
    Replay(rec, {0: torch.empty(4, device="meta").untyped_storage()})  # a stand-in for a GPU storage


def test_what_a_call_returns_from_before_it_is_poisoned_before_the_final_check():
    """A candidate that keeps its answer between calls (one zeros tensor per shape) returns it
    unchanged after a decoy store: the replay would return the snapshot's bytes, right, and
    the judge would time the decoy alone. Poisoned, only a call that writes it again is right;
    a table it only reads is left alone."""
    x = torch.ones(4)
    kept, table = torch.zeros(2, 4), torch.tensor([1.0, 2.0])

    def lazy():
        x.fill_(1.0)  # the decoy
        return kept[0], kept.expand(3, 2, 4)

    def honest():
        out = torch.empty(3)
        out.copy_(table[:1].expand(3))
        return out

    replay = Replay(_wire(record(lazy, _known(x)).as_json()), {0: torch.ones(4).untyped_storage()})
    row, wide = replay()
    assert torch.equal(row, torch.zeros(4))  # the snapshot, as the judge timed it
    replay.poison_what_it_returns_from_before()
    row, wide = replay()
    assert torch.isnan(row).all() and torch.isnan(wide).all()

    replay = Replay(_wire(record(honest, _known(x)).as_json()), {0: torch.ones(4).untyped_storage()})
    replay.poison_what_it_returns_from_before()
    assert torch.equal(replay(), torch.ones(3))


def test_each_call_of_a_replay_starts_from_the_recorded_state_with_what_earlier_calls_made_poisoned():
    """Judge v22 (Replay.prepare_call): a kernel must not find, in a timed call, what an earlier
    call left (its answer in a reused block, a count in a buffer it keeps), which the checked
    call would not find. The storages made before the call go back to their recorded bytes;
    what the last call allocated is poisoned while still held."""
    x = torch.arange(4, dtype=torch.float32)
    kept = torch.zeros(4)  # made before the call: it travels by value

    def call():
        out = torch.empty(4)
        out.copy_(x)
        kept.copy_(x)  # state the call leaves for the next
        return out

    replay = Replay(_wire(record(call, _known(x)).as_json()), {0: torch.full((4,), 5.0).untyped_storage()})
    out = replay()
    assert torch.equal(out, torch.full((4,), 5.0))
    assert [s.data_ptr() for s in replay.made] == [out.untyped_storage().data_ptr()]
    outside = torch.empty(0).set_(replay.outside[0])
    assert torch.equal(outside, torch.full((4,), 5.0))  # as the call left it
    replay.prepare_call()
    assert torch.equal(outside, torch.zeros(4))  # as recorded
    assert torch.isnan(out).all()  # the last call's output block, poisoned before it can be handed out again
    assert torch.equal(replay(), torch.full((4,), 5.0))
