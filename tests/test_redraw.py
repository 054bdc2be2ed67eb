"""A candidate process that draws a bench case's inputs itself, from the seeds the judge
sends it, instead of receiving them (kgb.evaluate.draws, `Redraw`): the case's own draw once
every other case is checked, then the timing sets T and V (in a judge with a timing process of
its own, as judges had until v15, that process draws T and V). It
computes on the judge's inputs bit for bit, and where its draw differs or cannot be made,
the judge sends them and says so."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kgb import operators
from kgb.evaluate import codec, tensor_storage
from kgb.evaluate.candidate_call import DRAWN, SENDING, Redraw
from kgb.evaluate.candidate_process import CandidateProcess
from kgb.evaluate.draws import (
    candidate_copy,
    digest,
    draw_inputs,
    message_value,
    redraw,
    timing_draws,
)
from kgb.evaluate.phases import Phases
from kgb.evaluate.sandbox import Limits
from kgb.evaluate.timing_lock import TimingLock

SPEC = '''
"""Twice x, into out."""

import torch

from kgb.operators import Case

VERSION = 1
SIGNATURES = """
def twice(x: torch.Tensor, out: torch.Tensor) -> None:
    \\"\\"\\"out = 2 * x\\"\\"\\"
"""
OUTPUT_ARGS = ("out",)
CASES = [Case("small", "smoke", {"n": 64}, seed=3), Case("big", "bench", {"n": 1 << 16}, seed=4)]


def make_inputs(case, gen, device):
    n = case.params["n"]
    x = {draw}
    return {"x": x[1:], "out": torch.empty(n - 1)}


def reference(x, out):
    out.copy_(2 * x)
'''

CANDIDATE = "def twice(x, out):\n    out.copy_(x * 2)\n"  # timed only: a timing is not audited
KERNEL = """
import triton
import triton.language as tl


@triton.jit
def _twice(x, out, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + i, tl.load(x + i, mask=i < n) * 2, mask=i < n)


def twice(x, out):
    _twice[(triton.cdiv(x.numel(), 4096),)](x, out, x.numel(), BLOCK=4096)
"""


def _spec(tmp_path: Path, draw: str = "torch.randn(n, generator=gen)") -> operators.Spec:
    folder = tmp_path / "ops" / "aten" / "twice"
    folder.mkdir(parents=True)
    (folder / "spec.py").write_text(SPEC.replace("{draw}", draw))
    return operators.load_spec(folder / "spec.py")


def _timed(tmp_path: Path, monkeypatch, spec: operators.Spec, give_spec: bool = True):
    """Time the bench case in a real, confined candidate process on the CPU with set T and V
    to redraw; (reply, the judge's storages, the judge's draws, phases)."""
    (tmp_path / "ws").mkdir()
    process = CandidateProcess("cpu", tmp_path / "ws", Limits(cpu_s=120)).wait_ready()
    phase = Phases()
    process.exclusive = TimingLock(None, phase)
    try:
        if give_spec:
            process.give_spec(spec)
        assert process.load(CANDIDATE).failure is None
        case = next(c for c in spec.cases if c.tag == "bench")
        seeds = (case.seed, 987654321)
        drawn = timing_draws(spec, case, seeds, "cpu")
        entry = spec.entry_of(case)
        reply, sent, _ = process.time(entry.name, entry.bind(drawn.cand_t), entry.bind(drawn.cand_v),
                                      Redraw(case.name, seeds))
        assert reply.failure is None, reply.failure
        return reply, sent, drawn, phase
    finally:
        process.close()


def test_the_candidate_process_draws_the_judges_timing_inputs_itself_and_nothing_crosses(tmp_path, monkeypatch):
    spec = _spec(tmp_path)
    reply, sent, drawn, phase = _timed(tmp_path, monkeypatch, spec)
    assert reply.sent_instead == ""
    assert phase.seconds.get(DRAWN, 0) > 0 and phase.seconds.get(SENDING, 0) < 0.5
    # the judge knows the process's storages as its own copies: x's whole storage, then out's
    assert sent.by_id[0]._cdata == drawn.cand_t["x"].untyped_storage()._cdata
    # its recorded call names them so (the interpreter's ops: read x, write out), and nothing it
    # computed came back (judge v35): the judge's set T still holds its poisoned out
    steps = reply.value["recording"]["steps"]
    assert steps[0]["args"]["list"][0]["t"]["s"] == ["in", 0] and steps[-1]["args"]["list"][0]["t"]["s"] == ["in", 1]
    assert torch.isnan(drawn.cand_t["out"]).all()


def test_a_draw_that_comes_out_differently_is_sent_instead_and_says_why(tmp_path, monkeypatch):
    """A make_inputs that draws from the global generator (or with a nondeterministic GPU op)
    gives the candidate process other inputs than the judge's: the checksums differ."""
    spec = _spec(tmp_path, draw="torch.randn(n)")
    reply, _, drawn, phase = _timed(tmp_path, monkeypatch, spec)
    assert "differ from the judge's (storage 0 of" in reply.sent_instead
    assert reply.value["recording"]["steps"]  # recorded on the inputs sent
    assert phase.seconds.get(SENDING, 0) > 0


def test_a_process_without_the_spec_is_sent_its_inputs(tmp_path, monkeypatch):
    """The process that ran the checks never gets the spec (its seeds are the checks')."""
    spec = _spec(tmp_path)
    reply, _, drawn, _ = _timed(tmp_path, monkeypatch, spec, give_spec=False)
    assert reply.sent_instead == "the judge sent no spec"
    assert reply.value["recording"]["steps"]


def test_storages_are_numbered_as_the_codec_sends_them():
    base = torch.arange(12.0)
    value = {"sets": [{"args": [base[2:], base.view(3, 4), 5], "kwargs": {"y": torch.ones(2)}},
                      {"args": [(torch.zeros(3), base)], "kwargs": {}}]}
    sent = codec.encode("time", value).sent
    found = tensor_storage.storages_in(value)
    assert [s._cdata for s in found.by_id.values()] == [s._cdata for s in sent.by_id.values()]
    assert [id(t) for t in found.tensors] == [id(t) for t in sent.tensors]


def test_a_checksum_sees_a_changed_byte_and_a_shuffle():
    x = torch.randn(1 << 12)
    first = digest(x.untyped_storage())
    assert digest(x.clone().untyped_storage()) == first
    y = x.clone()
    y.view(torch.uint8)[5] ^= 1
    assert digest(y.untyped_storage()) != first
    assert digest(x.flip(0).contiguous().untyped_storage()) != first
    odd = torch.arange(7, dtype=torch.uint8)  # a tail shorter than a word
    assert digest(odd.untyped_storage()) != digest(torch.arange(1, 8, dtype=torch.uint8).untyped_storage())


def test_the_sets_are_the_two_draws_bound_to_the_entry_with_pure_outputs_poisoned(tmp_path):
    spec = _spec(tmp_path)
    case = next(c for c in spec.cases if c.tag == "bench")
    drawn = timing_draws(spec, case, (case.seed, 11), "cpu")
    value = message_value(spec, case, [drawn.cand_t, drawn.cand_v])
    assert value["sets"][1]["args"][0] is drawn.cand_v["x"] and torch.isnan(value["sets"][1]["args"][1]).all()
    assert torch.isnan(drawn.cand_t["out"]).all()  # torch.empty's bytes would differ between processes
    again = redraw(spec, case, (case.seed, 11), "cpu")
    assert [digest(s) for s in tensor_storage.storages_in(value).by_id.values()] == \
        [digest(s) for s in tensor_storage.storages_in(again).by_id.values()]


def test_a_draw_whose_tensors_share_a_storage_is_copied_as_the_judge_copies_it(tmp_path):
    """The judge's copy gives every tensor a storage of its own (clone_exact); a redraw that
    kept the shared one would number, and checksum, other storages."""
    folder = tmp_path / "ops" / "aten" / "twice"
    folder.mkdir(parents=True)
    (folder / "spec.py").write_text(SPEC.replace('return {"x": x[1:], "out": torch.empty(n - 1)}',
                                                 'return {"x": x[1:], "out": x[:-1]}').replace("{draw}", "torch.randn(n, generator=gen)"))
    spec = operators.load_spec(folder / "spec.py")
    case = next(c for c in spec.cases if c.tag == "bench")
    judge = message_value(spec, case, [candidate_copy(spec, draw_inputs(spec, case, 5, "cpu"))])
    again = redraw(spec, case, (5,), "cpu")
    ours, theirs = tensor_storage.storages_in(judge), tensor_storage.storages_in(again)
    assert len(theirs.by_id) == len(ours.by_id) == 2
    assert [digest(s) for s in ours.by_id.values()] == [digest(s) for s in theirs.by_id.values()]


def test_the_checking_process_draws_a_case_it_is_given_the_seed_of(tmp_path):
    """Once the spec is given (after every case that is not benched), a call may name its
    inputs' seed: the process computes on the judge's draw and writes back into its copies."""
    spec = _spec(tmp_path)
    (tmp_path / "ws").mkdir()
    process = CandidateProcess("cpu", tmp_path / "ws", Limits(cpu_s=120)).wait_ready()
    phase = Phases()
    process.exclusive = TimingLock(None, phase)
    try:
        process.give_spec(spec)
        assert process.load(CANDIDATE).failure is None
        case = next(c for c in spec.cases if c.tag == "bench")
        pristine = draw_inputs(spec, case, case.seed, "cpu")
        cand_in = message_value(spec, case, [pristine])  # the judge's copy: x and a poisoned out
        cand_in["args"][1].fill_(float("nan"))
        reply = process.call("twice", tuple(cand_in["args"]), {}, Redraw(case.name, (case.seed,)))
        assert reply.failure is None and reply.sent_instead == ""
        assert torch.equal(cand_in["args"][1], 2 * pristine["x"])
        assert phase.seconds.get(DRAWN, 0) > 0
    finally:
        process.close()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_every_bench_case_of_a_judgement_is_drawn_by_its_candidate_process():
    """The GPU's generator draws the same inputs in the judge and in the candidate process, so
    nothing of sets T and V crosses: no timing mode says its inputs were sent."""
    from kgb.evaluate import EvalSettings, evaluate
    from kgb.evaluate.bench_case import SENT_NOT_DRAWN

    spec = operators.load("aten::softmax")
    settings = EvalSettings(device="cuda", case_tags=("smoke", "check", "bench"), time_cases=("bench",), timeout_s=600)
    verdict = evaluate(spec.solution_path.read_text(), spec, settings)
    assert verdict.correct, verdict.message
    timed = [c for c in verdict.cases if c.latency_us is not None]
    assert timed and not [c.timing_mode for c in timed if SENT_NOT_DRAWN in (c.timing_mode or "")]
    # the judge timed the baselines (none was given) and says how, as it does the candidate's
    assert all(c.baseline_mode and c.baseline_mode.split()[0] in ("eager", "graph") for c in timed), timed
    assert verdict.phase_s.get(DRAWN, 0) > 0
    # both processes held a bench case's inputs, and say so for the memory gate's table
    assert verdict.gpu_mib["judge"] > 0 and verdict.gpu_mib["candidate"] > 0, verdict.gpu_mib


def test_a_judge_checks_bench_cases_last_and_gives_the_spec_only_after_the_re_checks(tmp_path, monkeypatch):
    """The checking process may draw the bench cases' inputs (and so know every case's seed)
    only once no check on a seed it could know in advance is left: after the other cases
    and their re-checks on secret seeds. It draws them then, and the verdict stands."""
    from kgb.evaluate import case_runner, judge

    spec = _spec(tmp_path)
    spec.module.CASES.insert(0, spec.module.CASES.pop())  # bench first in the spec
    seen: list[str] = []
    given, checked = CandidateProcess.give_spec, case_runner.CaseRunner.check

    def give_spec(self, spec):
        seen.append("spec")
        return given(self, spec)

    def check(self, case, seed, redraw=False):
        seen.append(f"{case.name}{' again' if seed != case.seed else ''}{' drawn there' if redraw else ''}")
        return checked(self, case, seed, redraw)

    monkeypatch.setenv("TRITON_INTERPRET", "1")  # as the engine runs judges on the CPU
    monkeypatch.setattr(judge, "draws_bench_inputs", lambda device: True)
    monkeypatch.setattr(CandidateProcess, "give_spec", give_spec)
    monkeypatch.setattr(case_runner.CaseRunner, "check", check)
    emitted: list[dict] = []
    request = {"spec": str(spec.path), "source": KERNEL, "workspace": str(tmp_path / "ws"), "timeout_s": 120,
               "device": "cpu", "case_tags": ["smoke", "bench"], "time_tags": [], "repeats": 5, "warmup": 1}
    final = judge.run(request, emitted.append)
    assert final["status"] == "correct", final["message"]
    assert seen == ["small", "small again", "spec", "big drawn there"]
    assert [c["name"] for c in emitted] == ["small", "big"]
    assert final["phase_s"].get(DRAWN, 0) > 0


LIAR = KERNEL + '''

import sys

_server = sys.modules["kgb.evaluate.candidate"].Server


def _lying(self, draw):
    """Claim the judge's checksums, and compute on inputs of its own (x zeroed)."""
    from kgb.evaluate import codec, draws, tensor_storage

    case = next(c for c in self.spec.cases if c.name == draw["case"])
    value = draws.redraw(self.spec, case, tuple(draw["seeds"]), self.device)
    value["args"][0].zero_()
    codec.send(self.conn, "drawn")
    return value, tensor_storage.storages_in(value)


_server.drawn = _lying
'''


def test_a_candidate_that_claims_the_judges_checksums_for_inputs_of_its_own_is_judged_wrong(tmp_path, monkeypatch):
    """The checksums guard against accidents, not forgers: a process that says `drawn` over
    other inputs computes on them, and its answer is compared with the reference on the
    judge's draw (threat model, judge v11)."""
    from kgb.evaluate import judge

    spec = _spec(tmp_path)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(judge, "draws_bench_inputs", lambda device: True)
    request = {"spec": str(spec.path), "source": LIAR, "workspace": str(tmp_path / "ws"), "timeout_s": 120,
               "device": "cpu", "case_tags": ["smoke", "bench"], "time_tags": [], "repeats": 5, "warmup": 1}
    final = judge.run(request, lambda case: None)
    assert final["status"] == "wrong_output", final["message"]
    assert "case big" in final["message"]
