"""Each kind of faulty candidate gets its own verdict with a readable message."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgb import operators
from kgb.evaluate import COMPILE_STORE, ENGINE, EvalSettings, Status, evaluate
from kgb.evaluate.static import static_check

CANDIDATES = Path(__file__).parent / "candidates"
SMOKE = EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=120)


@pytest.fixture(scope="module")
def softmax():
    return operators.load("aten::softmax")


def judge(spec, name: str, settings: EvalSettings = SMOKE):
    return evaluate((CANDIDATES / name).read_text(), spec, settings)


def test_solution_is_correct(softmax):
    verdict = evaluate(softmax.solution_path.read_text(), softmax, SMOKE)
    assert verdict.status == Status.CORRECT
    assert [c.name for c in verdict.cases] == ["smoke-f32", "smoke-f16-dim0"]
    assert "_softmax_rows" in verdict.kernels


def test_an_autotuned_kernel_runs_in_the_interpreter(softmax):
    verdict = judge(softmax, "softmax_autotuned.py")
    assert verdict.status == Status.CORRECT, verdict.message
    assert verdict.kernels == ("_rows",)


def test_syntax_error_is_a_compile_error(softmax):
    verdict = judge(softmax, "softmax_syntax_error.py")
    assert verdict.status == Status.COMPILE_ERROR
    assert "SyntaxError" in verdict.message


@pytest.mark.parametrize("broken, cause", [("tl.lode(", "AttributeError"), ("tl.load(x_undefined + ", "NameError")])
def test_a_kernel_a_gpu_could_not_compile_is_a_compile_error_in_the_interpreter_too(broken, cause):
    """The interpreter runs a kernel's body as Python: a name `tl` lacks raised only as it ran,
    and was a runtime_error on the CPU where a GPU's compiler gives a compile_error (session 46's
    user walk): the chips' statuses did not compare."""
    spec = operators.load("aten::neg")
    source = spec.solution_path.read_text().replace("tl.load(", broken, 1)
    verdict = evaluate(source, spec, SMOKE)
    assert verdict.status == Status.COMPILE_ERROR, verdict.message
    assert cause in verdict.message


def test_wrong_result_names_the_case_and_the_error(softmax):
    verdict = judge(softmax, "softmax_wrong.py")
    assert verdict.status == Status.WRONG_OUTPUT
    assert "case smoke-f32" in verdict.message and "outside tolerance" in verdict.message


def test_reading_past_a_tensor_is_caught_in_the_interpreter(softmax):
    """The interpreter reads raw host memory, so a load past a tensor's end returned garbage
    that a tl.where then discarded, and the kernel passed on the CPU; on a GPU such a read
    is an illegal address (the triangular-solve solutions, found on an H200)."""
    honest = softmax.solution_path.read_text()
    masked = 'x = tl.load(x_row + cols * x_col_stride, mask=cols < n_cols, other=float("-inf"))'
    assert masked in honest
    unmasked = honest.replace(masked, 'x = tl.where(cols < n_cols, tl.load(x_row + cols * x_col_stride), float("-inf"))')
    verdict = evaluate(unmasked, softmax, SMOKE)
    assert verdict.status == Status.RUNTIME_ERROR
    assert "kernel _softmax_rows loaded" in verdict.message and "outside every tensor it was launched with" in verdict.message


def _through_a_pointer_table(honest: str, offset: str) -> str:
    """The honest softmax, storing into a float32 scratch tensor of its own that the kernel
    reaches through a table of pointers (as batched kernels do), `offset` bytes in."""
    edits = [
        ("def _softmax_rows(x_ptr, y_ptr, n_cols,", "def _softmax_rows(x_ptr, table_ptr, n_cols,"),
        ("    row = tl.program_id(0).to(tl.int64)\n",
         "    row = tl.program_id(0).to(tl.int64)\n    y_ptr = tl.load(table_ptr).to(tl.pointer_type(tl.float32))\n"),
        ("    if rows.numel():",
         "    scratch = torch.empty(rows.shape, dtype=torch.float32, device=self.device)\n"
         f"    table = torch.empty(1, dtype=torch.int64, device=self.device).fill_(scratch.data_ptr() + {offset})\n"
         "    if rows.numel():"),
        ("            rows, out, n_cols,", "            rows, table, n_cols,"),
        ("    return out.reshape", "    out.copy_(scratch)\n    return out.reshape"),
    ]
    for old, new in edits:
        assert old in honest
        honest = honest.replace(old, new)
    return honest


def test_a_kernel_may_reach_its_own_scratch_through_a_pointer_table_but_not_past_it(softmax):
    """The interpreter's bounds check also admits tensors the call made (it had judged this
    honest pattern an illegal address), and still catches a store past their end."""
    honest = softmax.solution_path.read_text()
    verdict = evaluate(_through_a_pointer_table(honest, "0"), softmax, SMOKE)
    assert verdict.status == Status.CORRECT, verdict.message
    verdict = evaluate(_through_a_pointer_table(honest, "4 * scratch.numel()"), softmax, SMOKE)
    assert verdict.status == Status.RUNTIME_ERROR
    assert "kernel _softmax_rows stored" in verdict.message


def test_pytorch_delegation_is_rejected(softmax):
    verdict = judge(softmax, "softmax_torch.py")
    assert verdict.status == Status.REJECTED
    assert "aten::_softmax" in verdict.message or "aten::softmax" in verdict.message


def test_endless_loop_times_out(softmax):
    verdict = judge(softmax, "softmax_hang.py", EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=8))
    assert verdict.status == Status.TIMEOUT
    assert "8 s" in verdict.message
    assert verdict.eval_s < 30


def test_hard_crash_is_a_runtime_error(softmax):
    verdict = judge(softmax, "softmax_crash.py")
    assert verdict.status == Status.RUNTIME_ERROR
    assert "SIGABRT" in verdict.message


def test_mutating_an_input_is_wrong(softmax):
    verdict = judge(softmax, "softmax_mutates.py")
    assert verdict.status == Status.WRONG_OUTPUT
    assert "modified its input self" in verdict.message


def test_secrets_do_not_reach_the_worker(softmax, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-secret")
    verdict = judge(softmax, "softmax_env.py")
    assert verdict.status == Status.RUNTIME_ERROR
    assert "environment visible: []" in verdict.message


def test_uninitialised_output_is_caught(softmax, tmp_path):
    # Launches a kernel that writes nothing: the output keeps whatever empty() held.
    source = (CANDIDATES / "softmax_hang.py").read_text().replace(
        "    while True:\n        time.sleep(0.1)\n",
        "    import torch\n    out = torch.empty_like(self)\n    _k[(1,)](out, BLOCK=16)\n    return out.fill_(float('nan'))\n",
    )
    assert evaluate(source, softmax, SMOKE).status == Status.WRONG_OUTPUT


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("import subprocess\n", "imports subprocess"),
        ("import ctypes as c\n", "imports ctypes"),
        ("import os\nos.system('ls')\n", "uses os.system"),
        ("import triton\ntriton.knobs.runtime.launch_enter_hook.add(print)\n", "uses .knobs"),
        ("import triton\nk.add_pre_run_hook(print)\n", "uses .add_pre_run_hook"),
        ("def softmax_int(self, dim, dtype=None):\n    return self\n", "does not import triton"),
    ],
)
def test_static_check_reasons(source, reason):
    reasons = static_check(source, ("softmax_int",))
    assert any(reason in r for r in reasons), reasons


def test_static_check_requires_the_entry_points():
    source = "import triton\n@triton.jit\ndef k(x):\n    pass\n"
    assert static_check(source, ("softmax_int",)) == ["does not define the entry point(s) softmax_int"]


SOLUTION_HEAD = "def softmax_int(self: torch.Tensor, dim: int, dtype: torch.dtype | None = None) -> torch.Tensor:"

# Honest code that an earlier judge turned away: each variant of the solution must pass.
HONEST_VARIANTS = {
    "a threading lock": lambda s: "import threading\n_LOCK = threading.Lock()\n" + s.replace(
        "    out_dtype = self.dtype", "    with _LOCK:\n        pass\n    out_dtype = self.dtype"),
    "platform.system()": lambda s: "import platform\n_OS = platform.system()\n" + s,
    "a kernel made by calling triton.jit": lambda s: s.replace("@triton.jit\ndef _softmax_rows", "def _softmax_rows_py")
    + "\n_softmax_rows = triton.jit(_softmax_rows_py)\n",
    "an aliased import of jit": lambda s: s.replace("import triton\n", "import triton\nfrom triton import jit as tjit\n")
    .replace("@triton.jit", "@tjit"),
    "the entry point under an if": lambda s: s.replace(SOLUTION_HEAD, "if True:\n    pass\n\n\n" + SOLUTION_HEAD),
    "a dtype conversion with .to()": lambda s: s.replace(
        "    return out.reshape(xt.shape).movedim(-1, dim)",
        "    return out.to(torch.float32).to(out_dtype).reshape(xt.shape).movedim(-1, dim)"),
}


@pytest.mark.parametrize("variant", HONEST_VARIANTS)
def test_honest_code_is_not_turned_away(softmax, variant):
    source = HONEST_VARIANTS[variant](softmax.solution_path.read_text())
    assert source != softmax.solution_path.read_text()
    verdict = evaluate(source, softmax, SMOKE)
    assert verdict.status == Status.CORRECT, verdict.message


HARNESS = """
import sys, threading, time
from kgb import operators
from kgb.evaluate import EvalSettings, _engines, evaluate
spec = operators.load("aten::softmax")
source = open(sys.argv[1]).read()
threading.Thread(target=lambda: evaluate(source, spec, EvalSettings(timeout_s=600)), daemon=True).start()
while not _engines:
    time.sleep(0.1)
print(next(iter(_engines.values())).proc.pid, flush=True)
time.sleep(600)
"""

# a harness started after one was killed: one evaluation, to its end
NEXT_HARNESS = """
from kgb import operators
from kgb.evaluate import EvalSettings, evaluate
spec = operators.load("aten::softmax")
print(evaluate(spec.solution_path.read_text(), spec, EvalSettings(device="cpu", case_tags=("smoke",))).status)
"""


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_kill_minus_nine_of_the_harness_takes_every_judge_and_candidate_with_it(tmp_path):
    script = tmp_path / "harness.py"
    script.write_text(HARNESS)
    # A temporary folder of its own: an engine started meanwhile by a test beside this one
    # (pytest-xdist) would remove the killed harness's folders before they are looked for.
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    harness = subprocess.Popen([sys.executable, str(script), str(CANDIDATES / "softmax_hang.py")],
                               stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parent.parent, env=env)
    engine = int(harness.stdout.readline())
    deadline = time.time() + 120
    family: list[int] = []
    while time.time() < deadline:  # engine -> judges -> candidate processes, the candidate hanging
        judges = _children(engine)  # the one judging, and the spare started meanwhile
        family = [engine, *judges, *(c for j in judges for c in _children(j))]
        if len(family) >= 5:
            break
        time.sleep(0.2)
    assert len(family) >= 5, f"the candidate never started: {family}"
    harness.kill()
    harness.wait()
    deadline = time.time() + 20
    while time.time() < deadline and any(_alive(p) for p in family):
        time.sleep(0.2)
    assert not [p for p in family if _alive(p)]
    # its evaluation's folder and its spare's are left; the next harness to start removes them
    left = sorted((tmp_path / "tmp").glob(f"kgb-eval-{socket.gethostname()}-{harness.pid}-*"))
    assert len(left) >= 2, left
    next_run = subprocess.run([sys.executable, "-c", NEXT_HARNESS], capture_output=True, text=True, timeout=300,
                              cwd=Path(__file__).parent.parent, env=env)
    assert next_run.returncode == 0 and "correct" in next_run.stdout, next_run.stderr[-2000:]
    assert not [f for f in left if f.exists()]


@pytest.mark.slow
def test_a_process_keeps_few_warm_engines(monkeypatch):
    """Each engine holds torch and Triton (~370 MB): a long job or a test suite that kept one
    per distinct environment ran the CI machine out of memory. One in use is never closed."""
    import kgb.evaluate as ev

    with ev._engine(SMOKE) as first:
        monkeypatch.setenv("PYTEST_CURRENT_TEST", "another test (call)")
        with ev._engine(SMOKE) as again:
            assert again is first, "a per-test variable started a second engine"
        started = []
        for i in range(ev.MAX_ENGINES + 1):  # each distinct environment has its own engine
            monkeypatch.setenv(f"KGB_TEST_VALUE_{i}", f"value-{i}")
            with ev._engine(SMOKE) as engine:
                started.append(engine)
        assert first.alive and first in ev._engines.values(), "an engine in use was closed"
    assert len(ev._engines) <= ev.MAX_ENGINES + 1
    closed = [e for e in started if e not in ev._engines.values()]
    assert closed and all(not e.alive for e in closed)


def test_an_engine_outlives_the_thread_that_started_it():
    """The engine dies with its parent *thread* (PR_SET_PDEATHSIG): one started by a trial's
    worker thread or an agent's check request died when that thread ended, with every
    judgement in flight on it, and the next evaluation paid for a fresh engine."""
    import threading

    from kgb.evaluate.engine import Engine

    started: list[Engine] = []
    thread = threading.Thread(target=lambda: started.append(Engine(dict(os.environ))))
    thread.start()
    thread.join()
    [engine] = started
    try:
        time.sleep(0.5)  # the kernel's signal is immediate; leave it time to be delivered
        assert engine.alive, f"the engine died with its thread (exit {engine.proc.returncode})"
    finally:
        engine.close()


def test_a_random_op_whose_reference_cannot_vary_is_not_turned_away(tmp_path):
    """bernoulli with p = 0 draws zeros every time: two equal draws are then no sign of a
    candidate that memoises its samples (found on an H200, where all cases run)."""
    # the spec narrowed to that case (and the smoke cases every spec needs, not judged here):
    # all of its check cases took a minute in the interpreter
    bernoulli = operators.load("aten::bernoulli")
    narrowed = tmp_path / "aten" / "bernoulli" / "spec.py"
    narrowed.parent.mkdir(parents=True)
    narrowed.write_text(bernoulli.path.read_text() + '\nCASES = [c for c in CASES if c.name == "p-zero" or c.tag == "smoke"]\n')
    spec = operators.load_spec(narrowed)
    assert [c.name for c in spec.cases_for({"check"})] == ["p-zero"]
    settings = EvalSettings(device="cpu", case_tags=("check",), timeout_s=300)
    verdict = evaluate(bernoulli.solution_path.read_text(), spec, settings)
    assert verdict.correct, verdict.message
    assert any(c.name == "p-zero" and c.status == Status.CORRECT for c in verdict.cases)


def test_a_verdict_says_where_the_judges_time_went(softmax):
    verdict = evaluate(softmax.solution_path.read_text(), softmax, SMOKE)
    assert verdict.correct
    assert {"draw", "reference", "candidate", "compare"} <= set(verdict.phase_s)
    assert all(s >= 0 for s in verdict.phase_s.values())
    assert sum(verdict.phase_s.values()) <= verdict.eval_s
    # the harness's steps around the judge: the judge ran inside the engine's run
    assert set(verdict.harness_s) == {COMPILE_STORE, ENGINE}
    assert verdict.judge_s <= verdict.harness_s[ENGINE] <= verdict.eval_s


def test_a_candidate_process_holds_only_its_own_socket_and_stdio(softmax):
    verdict = judge(softmax, "softmax_fds.py")
    assert verdict.status == Status.RUNTIME_ERROR
    held = verdict.message.split("descriptors open: ", 1)[1].split("}", 1)[0] + "}"
    kinds = eval(held)  # noqa: S307 - a dict of ints and strings the candidate printed
    sockets = [fd for fd, kind in kinds.items() if kind == "socket"]
    assert len(sockets) == 1, kinds  # its own; never a sibling's, nor the judge's end of one
    assert kinds.get(0) == "/dev/null"  # not the engine's order pipe
    assert not [kind for fd, kind in kinds.items() if kind == "pipe" and fd not in (1, 2)], kinds


def test_a_written_list_of_tensors_is_compared_by_default():
    """vLLM's copy_blocks writes lists of caches: without a compare of the spec's own, the
    default comparison left them out, and a candidate that never wrote them passed."""
    from types import SimpleNamespace

    import torch

    from kgb.evaluate.case_runner import CaseRunner

    runner = CaseRunner.__new__(CaseRunner)
    runner.spec = SimpleNamespace(module=SimpleNamespace(), output_args=(), inout_args=("caches",), written_args=("caches",))
    case = SimpleNamespace(name="c", reduction=1)
    written = {"caches": [torch.ones(4), torch.full((3,), 2.0)]}
    stale = {"caches": [torch.ones(4), torch.zeros(3)]}
    message, _, _ = runner._compare(case, None, None, written, stale)
    assert message and "argument caches[1]" in message
    assert runner._compare(case, None, None, written, {"caches": [t.clone() for t in written["caches"]]})[0] is None


def test_an_engine_started_ahead_serves_the_first_evaluation(monkeypatch):
    """run.py starts the engine while the job gets ready (kgb.evaluate.start_engine); the first
    evaluation then forks its judge from that engine instead of starting one."""
    import json
    import uuid

    import kgb.evaluate as ev

    monkeypatch.setenv("KGB_TEST_ENGINE_OF", uuid.uuid4().hex)  # an engine of this test's own
    settings = EvalSettings(device="cpu")
    key = json.dumps(ev.engine_env(settings), sort_keys=True)
    ev.start_engine(settings)
    deadline = time.monotonic() + 120
    while not (key in ev._engines and ev._engines[key].alive) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert key in ev._engines, "the engine did not come up by itself"
    started = ev._engines[key]
    monkeypatch.setattr(ev, "Engine", lambda env: pytest.fail("the evaluation started an engine of its own"))
    try:
        spec = operators.load("aten::t")
        assert evaluate(spec.solution_path.read_text(), spec, settings).status == Status.CORRECT
        assert ev._engines[key] is started
    finally:
        with ev._engines_lock:
            ev._engines.pop(key, None)
        started.close()


def test_run_py_starts_the_engine_its_job_judges_with_before_it_imports_torch(monkeypatch):
    """kgb.job.head_start guesses the job's judging settings without torch: a CPU job's engine is
    the one its evaluations then use; a GPU chip on a machine whose driver lists no GPU gets none."""
    import json
    import uuid

    import kgb.evaluate as ev
    from kgb.config import ChipConfig, Config, EvalConfig
    from kgb.job import Chip, eval_settings, head_start

    monkeypatch.setenv("KGB_TEST_ENGINE_OF", uuid.uuid4().hex)  # an engine of this test's own
    asked = []
    monkeypatch.setattr(ev, "start_engine", asked.append)
    monkeypatch.setattr("kgb.evaluate.gpus.memory_mib", lambda: [])
    head_start(Config(chip=ChipConfig(name="nvidia", backend="cuda")))
    head_start(Config(chip=ChipConfig(name="cpu", backend="cpu"), eval=EvalConfig(cases="smoke")))
    [guessed] = asked
    real = eval_settings(EvalConfig(cases="smoke"), Chip("cpu", "cpu", "", True, "here"))
    assert json.dumps(ev.engine_env(guessed), sort_keys=True) == json.dumps(ev.engine_env(real), sort_keys=True)
    monkeypatch.setattr("kgb.evaluate.gpus.memory_mib", lambda: [143771])
    head_start(Config(chip=ChipConfig(name="auto", backend="auto")))
    assert asked[-1].device == "cuda"
