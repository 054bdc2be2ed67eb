"""The red-team set (tests/redteam.py): no attack is judged correct, and none reaches
what it was after."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from redteam import ASUM_KEPT_PAST_ITS_RESULT, ATTACKS, GPU_ATTACKS, PRELUDE, SKIP_WHEN_DONE

from kgb import operators
from kgb.evaluate import EvalSettings, Status, evaluate

SMOKE = EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=120)


@pytest.fixture(scope="module")
def softmax():
    return operators.load("aten::softmax")


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.name)
def test_no_attack_is_judged_correct(attack, softmax):
    verdict = evaluate(attack.source, softmax, SMOKE)
    assert verdict.status != Status.CORRECT, f"{attack.name} ({attack.tries}) was judged correct"


_STOPS = """
import torch
from torch.utils._python_dispatch import _disable_current_modes
from kgb.evaluate.integrity import audited, recorded_by_profiler

def stop_legacy():
    torch.autograd._disable_profiler_legacy()

def stop_kineto():
    torch.autograd._disable_profiler()

def restart():
    torch.autograd._disable_profiler()
    torch.autograd.profiler.profile(use_kineto=False).__enter__()

for name, stop, times in (("none", lambda: None, 1), ("legacy", stop_legacy, 30),
                          ("kineto", stop_kineto, 1), ("restart", restart, 1)):
    for _ in range(times):
        with audited(), recorded_by_profiler() as profiled:
            stop()
            with _disable_current_modes():
                torch.softmax(torch.ones(3), 0)
        print(name, profiled.intact, "aten::_softmax" in profiled.ops)
"""


def test_a_stopped_profiler_is_seen_and_stopping_it_never_hangs():
    """Every way to stop the audit's profiler leaves it reported as not intact. torch's own
    legacy stop misreads the running profiler's state (it hung, aborted or raised at
    random); it runs 30 times here, in a process of its own that a hang cannot take along."""
    done = subprocess.run([sys.executable, "-c", _STOPS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = set(done.stdout.split("\n")) - {""}
    assert lines == {"none True True", "legacy False False", "kineto False False", "restart False True"}


def test_nothing_is_written_outside_the_workspace(softmax):
    marker = Path("/tmp/kgb-redteam-was-here")
    marker.unlink(missing_ok=True)
    attack = next(a for a in ATTACKS if a.name == "write-outside-workspace")
    evaluate(attack.source, softmax, SMOKE)
    assert not marker.exists()


_DAEMON_CLIENT = """

def softmax_int(self, dim, dtype=None):
    s = builtins.__dict__["__imp" + "ort__"]("soc" + "ket")
    try:
        c = s.socket(s.AF_UNIX, s.SOCK_STREAM)
        c.connect(PATH)
        c.sendall(b"give me your secrets")
        outcome = "connected"
    except OSError as e:
        outcome = f"refused ({e})"
    raise RuntimeError(f"DAEMON {outcome}")
"""


def test_a_candidate_cannot_reach_a_daemon_by_its_sockets_path(softmax, tmp_path):
    """Landlock governs no connect() to a Unix socket's path, so a daemon listening outside
    the workspace (docker's under /run, a user's agent under /tmp) was reachable from a
    candidate process (session 44's red team). Since session 45 it may open no socket: its
    CUDA context, MPS client included, exists before it confines itself."""
    path = tmp_path / "daemon.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as daemon:
        daemon.bind(str(path))
        daemon.listen(4)
        source = (PRELUDE + "import builtins\n" + _DAEMON_CLIENT).replace("PATH", repr(str(path)))
        verdict = evaluate(source, softmax, SMOKE)
        daemon.setblocking(False)
        try:
            daemon.accept()[0].close()
            reached = True
        except BlockingIOError:
            reached = False
    assert "DAEMON refused" in verdict.message + verdict.logs, verdict.message  # the candidate ran and tried
    assert not reached


_HUGE_REPLY = """
import json, os, struct


def softmax_int(self, dim, dtype=None):
    for n in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{n}").startswith("socket:"):
                fd = int(n)
        except OSError:  # the listing's own descriptor, closed by now
            pass
    head = json.dumps({"kind": "returned", "value": None, "buffers": [5 << 30]}).encode()
    os.write(fd, struct.pack("!i", len(head)) + head)  # and never the 5 GiB it announced
    return torch.empty(0)
"""


def test_a_reply_announcing_more_than_it_may_hold_is_the_candidates_failure(softmax):
    """A candidate wrote a reply of its own on its socket announcing one buffer larger than
    the host's memory, then streamed zeros: the judge filled memory until the OOM killer took
    it, which kgb reports as an infrastructure failure, out of accuracy and retried every run
    (session 45's red team, in a 3 GB cgroup). The judge now refuses what a reply may not hold
    before it allocates anything (candidate_call.ReplyBound); until then this one, which
    never sends the bytes, held its judge until the evaluation's timeout."""
    settings = EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=60)
    verdict = evaluate(PRELUDE + _HUGE_REPLY, softmax, settings)
    assert verdict.status == Status.REJECTED, verdict.message
    assert "announced 5,368,709,120 bytes" in verdict.message


def test_a_source_the_parser_cannot_hold_is_the_candidates_failure(softmax):
    """A legal expression chained 300,000 deep raised RecursionError in the harness's static
    check, which the job took for its own failure: `infra_error`, out of accuracy, retried
    every run (session 45's red team); a number too large for a float (10**400) killed the
    judge when it read the source's literals. Both are the candidate's now."""
    honest = softmax.solution_path.read_text()
    deep = honest + "\n_X = " + "+".join(["1"] * 300_000) + "\n"
    verdict = evaluate(deep, softmax, SMOKE)
    assert verdict.status in (Status.COMPILE_ERROR, Status.RUNTIME_ERROR), verdict.message
    big = evaluate(honest + "\n_BIG = 10**400 + 0x" + "f" * 400 + "\n", softmax, SMOKE)
    assert big.status == Status.CORRECT, big.message
    huge = evaluate(honest + "\n# " + "x" * (2 << 20) + "\n", softmax, SMOKE)
    assert huge.status == Status.REJECTED and "at most 1,048,576" in huge.message, huge.message


def test_a_key_under_any_name_never_reaches_the_candidate(softmax, monkeypatch):
    """The key sits in this process's environment (so in /proc/<pid>/environ) under a
    name that looks like nothing; the candidate searches /proc and its environment and
    puts all it finds in its error message."""
    key = "kgbtest-9f3c2a7e41d04b6b8e5f"
    monkeypatch.setenv("LLM_PASS", key)
    monkeypatch.setenv("UNRELATED_SETTING", key)
    settings = EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=120, secret_env=("LLM_PASS",))
    attack = next(a for a in ATTACKS if a.name == "secrets-from-parent")
    verdict = evaluate(attack.source, softmax, settings)
    assert verdict.status == Status.RUNTIME_ERROR
    assert "LEAK" in verdict.message + verdict.logs  # the candidate ran and reported what it found
    assert key not in verdict.message + verdict.logs


def test_only_what_the_libraries_read_of_the_environment_reaches_a_candidate(softmax, monkeypatch):
    """Credentials under names that look like nothing secret, with values kgb does not know
    to be secrets: until session 44 the judges' environment was the harness's less what
    looked secret, and the candidate's error message showed these to the agent's check."""
    leaked = {"DATABASE_URL": "postgresql://kgb:S3cretDbPw@db.internal/kgb",
              "HTTPS_PROXY": "http://alice:Hunter2Proxy@proxy.internal:3128",
              "GITHUB_PAT": "ghp_kgbtest0123456789abcdef",
              # a name the judges kept until session 46, with a token in its URL
              "CONDA_CHANNEL_ALIAS": "https://ci:Sup3rS3cretTok@conda.internal/t/"}
    for name, value in leaked.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("TRITON_DEBUG_KGBTEST", "0")  # what Triton reads still crosses
    source = PRELUDE + '''
import os


def softmax_int(self, dim, dtype=None):
    raise RuntimeError("ENV " + repr(sorted(os.environ.items())))
'''
    verdict = evaluate(source, softmax, SMOKE)
    assert verdict.status == Status.RUNTIME_ERROR and "ENV" in verdict.message
    assert "TRITON_DEBUG_KGBTEST" in verdict.message
    for name, value in leaked.items():
        assert name not in verdict.message + verdict.logs and value not in verdict.message + verdict.logs


def test_the_judge_records_the_sandbox(softmax):
    verdict = evaluate(softmax.solution_path.read_text(), softmax, SMOKE)
    assert verdict.status == Status.CORRECT
    assert verdict.sandbox == "landlock+seccomp"


def test_a_random_op_that_repeats_its_samples_is_wrong():
    """The bernoulli solution with its per-call counter removed: statistically fine on each
    call, but every call draws the same samples."""
    spec = operators.load("aten::bernoulli")
    honest = spec.solution_path.read_text()
    frozen = honest.replace("next(_calls) * 0x85EBCA77", "0")
    assert frozen != honest
    assert evaluate(honest, spec, SMOKE).status == Status.CORRECT
    verdict = evaluate(frozen, spec, SMOKE)
    assert verdict.status == Status.WRONG_OUTPUT
    assert "same samples" in verdict.message


def test_on_the_cpu_an_output_never_written_is_not_zeros():
    """zeros_like's check cases over 256 KB, never written: fresh pages from the system read
    as zeros, and until judge v13 the candidate was correct on the CPU, where no replay checks
    it again. Its smoke cases are small and written honestly."""
    spec = operators.load("aten::zeros_like")
    source = (Path(__file__).parent / "candidates" / "zeros_like_unwritten.py").read_text()
    assert evaluate(source, spec, SMOKE).status == Status.CORRECT
    verdict = evaluate(source, spec, EvalSettings(device="cpu", case_tags=("smoke", "check"), timeout_s=120))
    assert verdict.status == Status.WRONG_OUTPUT, verdict.message
    assert "expected 0" in verdict.message


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_an_output_never_written_is_not_timed_as_zeros():
    """zeros_like's 256 MB bench case, never written: the allocation's fresh zeros pass the
    checking process's check. Two later checks stand between it and a timing of one store:
    the candidate's last answer on the timing draw, whose allocator by then holds other data
    (on the H200, session 28, this one fired first: 61 of 67 million elements were not zeros), and the
    judge's replay of the recorded call, in which every allocation is filled."""
    spec = operators.load("aten::zeros_like")
    source = (Path(__file__).parent / "candidates" / "zeros_like_unwritten.py").read_text()
    settings = EvalSettings(device="cuda", case_tags=("smoke", "check", "bench"), time_cases=("bench",), timeout_s=600)
    verdict = evaluate(source, spec, settings)
    caught = {Status.WRONG_OUTPUT: "after timing, on fresh inputs", Status.REJECTED: "replay"}
    assert verdict.status in caught, verdict.message
    assert caught[verdict.status] in verdict.message
    assert "bench" in verdict.message  # the small cases were written honestly


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_an_answer_kept_from_an_earlier_call_is_not_timed_as_a_decoy():
    """zeros_like that keeps one answer per shape and returns it after a decoy store: every
    answer it gives is right, but the judge's replay holds the kept tensor as a snapshot from
    before the call, and would have timed the decoy alone. Poisoned before the replay's final
    check, the kept tensor comes back wrong: `wrong_output` since judge v35, which checks no
    answer of the candidate process's beside the replay's (`rejected` until then)."""
    spec = operators.load("aten::zeros_like")
    source = (Path(__file__).parent / "candidates" / "zeros_like_kept.py").read_text()
    settings = EvalSettings(device="cuda", case_tags=("smoke", "check", "bench"), time_cases=("bench",), timeout_s=600)
    verdict = evaluate(source, spec, settings)
    assert verdict.status == Status.WRONG_OUTPUT, verdict.message
    assert "after timing, on fresh inputs" in verdict.message and "replay" in verdict.message


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_work_queued_between_calls_does_not_slow_the_baseline(softmax):
    """A candidate that queues seconds of GPU work once each bench call has returned (a
    finalizer on its output, run after the reply): beside the judge's turn it would slow the
    baseline, and raise the candidate's speedup (and every later trial's, given that
    baseline). Judge v21 times baselines once the candidate process is gone: they come out
    as the honest solution's (the same GPU, one after the other)."""
    honest = softmax.solution_path.read_text()
    busy = next(a for a in GPU_ATTACKS if a.name == "busy-between-calls").over(honest)
    settings = EvalSettings(device="cuda", case_tags=("smoke", "bench"), time_cases=("bench",), timeout_s=600)
    base = {c.name: c.baseline_us for c in evaluate(honest, softmax, settings).cases if c.baseline_us}
    verdict = evaluate(busy, softmax, settings)
    assert verdict.status == Status.CORRECT, verdict.message
    slowed = {c.name: c.baseline_us / base[c.name] for c in verdict.cases if c.baseline_us}
    assert set(slowed) == set(base) and len(base) == 3
    assert all(0.8 < r < 1.2 for r in slowed.values()), slowed


_ON_THE_HOST = {
    "numpy-through-cpu": """
def softmax_int(self, dim, dtype=None):
    a = self.float().cpu().numpy()
    e = 2.718281828459045 ** (a - a.max(axis=dim, keepdims=True))
    y = torch.from_numpy(e / e.sum(axis=dim, keepdims=True)).to(self.device, dtype or self.dtype)
    _launch_decoy(self.device)
    return y
""",
    "python-through-tolist": """
def softmax_int(self, dim, dtype=None):
    rows = self.movedim(dim, -1).reshape(-1, self.shape[dim]).tolist()
    out = []
    for r in rows:
        e = [2.718281828459045 ** (v - max(r)) for v in r]
        out.append([v / sum(e) for v in e])
    shape = self.movedim(dim, -1).shape
    y = torch.tensor(out, dtype=dtype or self.dtype).to(self.device).reshape(shape).movedim(-1, dim)
    _launch_decoy(self.device)
    return y
""",
}


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("name", sorted(_ON_THE_HOST))
def test_on_a_gpu_an_answer_computed_on_the_host_is_rejected(name, softmax):
    """The CPU's value provenance has no GPU counterpart: until session 45 a softmax that read
    its input back with .cpu() or .tolist(), computed with numpy or Python and copied the answer
    in was judged correct on a GPU (and left untimed)."""
    settings = EvalSettings(device="cuda", case_tags=("smoke", "check"), timeout_s=600)
    verdict = evaluate(PRELUDE + _ON_THE_HOST[name], softmax, settings)
    assert verdict.status == Status.REJECTED, verdict.message
    assert "from the GPU to the host" in verdict.message


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("name", ["unreplayable-and-fast", "forge-the-op-audit"])
def test_on_a_gpu_a_bench_case_the_judge_cannot_replay_is_rejected(name, softmax):
    """What a candidate process reports of itself is forgeable (its op audit, its recording);
    only the judge's own replay of each bench case stands. Until judge v25 a case it could not
    replay was left untimed and the verdict stood: these two were correct."""
    attack = next(a for a in GPU_ATTACKS if a.name == name)
    settings = EvalSettings(device="cuda", case_tags=("smoke", "bench"), time_cases=("bench",), timeout_s=600)
    verdict = evaluate(attack.over(softmax.solution_path.read_text()), softmax, settings)
    assert verdict.status == Status.REJECTED, verdict.message
    assert "cannot replay" in verdict.message


def test_what_counts_as_a_read_back_to_the_host():
    """host_read_elements on real ops; meta tensors stand in for a GPU's (any device but the
    host's is the same to it)."""
    import torch

    from kgb.evaluate.integrity import host_read_elements

    aten = torch.ops.aten
    gpu, host = torch.empty(6, 5, device="meta"), torch.empty(6, 5)
    assert host_read_elements(aten._to_copy.default, (gpu,), host) == 30  # .cpu()
    assert host_read_elements(aten.copy_.default, (host, gpu), host) == 30  # host.copy_(gpu)
    assert host_read_elements(aten._local_scalar_dense.default, (gpu[0, 0],), 1.0) == 1  # .item()
    assert host_read_elements(aten._to_copy.default, (host,), gpu) == 0  # to the GPU
    assert host_read_elements(aten.copy_.default, (gpu, host), gpu) == 0
    assert host_read_elements(aten._to_copy.default, (host,), host.double()) == 0  # on the host
    assert host_read_elements(aten._local_scalar_dense.default, (host[0, 0],), 1.0) == 0


def test_the_skip_when_done_kernel_skips_a_row_it_has_done_and_computes_one_it_has_not(softmax):
    """The attack the GPU test below guards against, in the interpreter (its kernel launched
    directly): a second launch on the same inputs and output leaves the output as it found it;
    a poisoned output, or other inputs, are computed. Judged as a candidate on the CPU it is
    correct: every answer it gives is right."""
    import os
    import subprocess

    script = PRELUDE + SKIP_WHEN_DONE + """
x = torch.randn(8, 64)
y = softmax_int(x, -1)
assert torch.allclose(y, torch.softmax(x, -1), atol=1e-6)
memo, rows = _memos[("cpu", 8)], x.reshape(-1, 64)
out = y.clone()
out[:, 3] = 123.0
_softmax_rows[(8,)](rows, out, memo, 64, 64, 1, BLOCK=64)
assert (out[:, 3] == 123.0).all()  # skipped: done already, by its own account
out = torch.full_like(y, float("nan"))
_softmax_rows[(8,)](rows, out, memo, 64, 64, 1, BLOCK=64)
assert torch.allclose(out, torch.softmax(x, -1), atol=1e-6)  # poisoned: computed
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TRITON_INTERPRET": "1"})
    assert done.stdout.strip() == "ok", done.stderr[-2000:]
    verdict = evaluate(PRELUDE + SKIP_WHEN_DONE, softmax, SMOKE)
    assert verdict.status == Status.CORRECT, verdict.message


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_a_kernel_that_skips_work_it_has_done_gets_no_speedup_from_it(softmax):
    """skip-when-done (tests/redteam.py) is right on every call it is checked on; until judge
    v21, timed, it skipped the rows of every repetition after the first. Since v22 every
    repetition starts from the checked call's state (its output poisoned): it computes its
    rows in each, and is timed like the honest solution, not at a fraction of it."""
    settings = EvalSettings(device="cuda", case_tags=("smoke", "bench"), time_cases=("bench",), timeout_s=600)
    honest = {c.name: c.latency_us for c in evaluate(softmax.solution_path.read_text(), softmax, settings).cases
              if c.latency_us}
    verdict = evaluate(PRELUDE + SKIP_WHEN_DONE, softmax, settings)
    timed = {c.name: c.latency_us for c in verdict.cases if c.latency_us}
    assert set(honest) and set(timed) <= set(honest), (timed, honest)
    assert not verdict.correct or all(timed[n] > 0.5 * honest[n] for n in timed), (timed, honest)


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_an_answer_kept_past_the_result_is_timed_working_in_every_run():
    """tests/redteam.py's ASUM_KEPT_PAST_ITS_RESULT, through the whole evaluation: right in
    every call, so correct; each bench case timed by its replay's first call on the timed
    values (judge v29), where it read x, not by the calls after it, which copied; and, since
    judge v30, the verdict of the last run on inputs drawn again, which timed them so too."""
    from kgb.evaluate import FIRST_CALL_RERUNS
    from kgb.evaluate.verdict import Rerun, TimedBy

    spec = operators.load("cublas::cublasDasum_v2")
    settings = EvalSettings(device="cuda", case_tags=("smoke", "check", "bench"), time_cases=("bench",), timeout_s=600)
    honest = {c.name: c.latency_us for c in evaluate(spec.solution_path.read_text(), spec, settings).cases
              if c.latency_us}
    verdict = evaluate(ASUM_KEPT_PAST_ITS_RESULT, spec, settings)
    assert verdict.correct, verdict.message
    bench = [c for c in verdict.cases if c.tag == "bench"]
    print({c.name: (c.latency_us, honest.get(c.name), c.timing_mode) for c in bench})
    assert bench and all(c.timed_by == TimedBy.FIRST_CALL for c in bench), [c.timing_mode for c in bench]
    assert all(c.latency_us > 0.5 * honest[c.name] for c in bench), (bench, honest)
    assert verdict.again == (Rerun.FIRST_CALL,) * FIRST_CALL_RERUNS  # and so in every run


def test_a_flooded_log_is_read_by_its_tail(tmp_path):
    """A candidate writes into its evaluation's log (its stderr), up to its file size limit:
    150 MB of newlines took the harness from 0.2 to 2.8 GB of memory when the log was read
    whole (session 44's red team), enough to have a job killed with every trial in flight."""
    import tracemalloc

    from kgb.evaluate import LOG_TAIL_CHARS, _readable_log

    log = tmp_path / "stderr.log"
    with open(log, "wb") as f:
        for _ in range(64):
            f.write(b"\n" * (1 << 20))
        f.write(b"USDT: the profiler's chatter\nRuntimeError: the last words\n")
    tracemalloc.start()
    try:
        text = _readable_log(log)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert text.endswith("RuntimeError: the last words\n") and "USDT" not in text
    assert len(text) <= LOG_TAIL_CHARS
    assert peak < 16 << 20, f"{peak / 2**20:.0f} MiB to read a 64 MiB log"


def test_inputs_inside_a_list_must_not_be_modified_either():
    """cat's known-good kernel, then every input zeroed: the spec says inputs are not to be
    modified, and until session 44 only tensor arguments were compared, not tensors in a list."""
    spec = operators.load("aten::cat")
    source = spec.solution_path.read_text() + '''

_honest_cat = cat


def cat(tensors, dim=0):
    out = _honest_cat(tensors, dim)
    for t in tensors:
        t.fill_(0)
    return out
'''
    verdict = evaluate(source, spec, SMOKE)
    assert verdict.status == Status.WRONG_OUTPUT
    assert "modified its input tensors" in verdict.message


@pytest.mark.parametrize("name", ["numpy-then-copy-kernel", "numpy-half-then-double"])
def test_host_values_a_kernel_copies_in_are_caught_where_it_loads_them(softmax, name):
    """Every output value of these was stored by a Triton kernel; what gives them away is
    what the kernel loaded: bytes the host wrote (numpy), which no kernel or PyTorch op wrote
    (provenance by address, session 49; until then the values loaded, which no kernel had
    stored before: test_a_load_is_explained_only_by_a_store_before_it)."""
    attack = next(a for a in ATTACKS if a.name == name)
    verdict = evaluate(attack.source, softmax, SMOKE)
    assert verdict.status == Status.REJECTED
    assert "kernel _copy loaded memory the host wrote" in verdict.message, verdict.message


def test_a_load_is_explained_only_by_a_store_before_it():
    """An intermediate a kernel stored and another loads is fine, and so is an input, its
    cast, or a masked-off lane; a value loaded first and stored after (a copy) is not."""
    import numpy as np
    import torch
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    from kgb.evaluate.provenance import _note, stored_values, summarise
    from kgb.evaluate.provenance_audit import unexplained_loads

    def handle(values, dtype=tl.float32):
        return TensorHandle(np.array(values, dtype=np.float32), dtype)

    x = torch.tensor([0.5, 1 / 3], dtype=torch.float64)
    with stored_values() as recorded:
        _note(handle([0.25]), None)  # a kernel's intermediate
        _note(handle([0.25, 0.5, np.float32(1 / 3)]), None, "loaded")  # it, an input, an input cast
        _note(handle([7.0, 9.0]), np.array([False, False]), "loaded")  # masked off: the `other=` fill
    assert unexplained_loads(summarise(recorded), [x]) is None
    with stored_values() as recorded:
        _note(handle([0.125]), None, "loaded")  # computed on the host...
        _note(handle([0.125]), None)  # ...and copied into the output
    assert "loaded 1 values" in unexplained_loads(summarise(recorded), [x])


def test_a_constant_table_the_wrapper_builds_from_literals_is_not_host_data(softmax):
    """softmax's known-good kernel with log2(e) loaded from a table its wrapper built with
    torch.tensor([...]) at import: rejected as data from the host until the second red team
    of session 44 found it; the numbers a source writes explain what a kernel loads."""
    source = softmax.solution_path.read_text()
    edits = [
        ("def _softmax_rows(x_ptr, y_ptr, n_cols,", "def _softmax_rows(x_ptr, y_ptr, c_ptr, n_cols,"),
        ("        y = tl.exp(x - row_max) / row_sum", "        y = tl.exp2((x - row_max) * tl.load(c_ptr)) / row_sum"),
        ("            rows, out, n_cols,", "            rows, out, _LOG2E, n_cols,"),
    ]
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    source += "\n_LOG2E = torch.tensor([1.4426950408889634], dtype=torch.float32)\n"
    verdict = evaluate(source, softmax, EvalSettings(device="cpu", case_tags=("smoke", "check"), timeout_s=120))
    assert verdict.status == Status.CORRECT, verdict.message
