"""The evaluation engine (kgb.evaluate.engine_process) reports a judgement done once the judge has
written its verdict, not once the judge process has ended: ending takes a GPU judge a
while (its CUDA context is torn down as it exits), which no evaluation needs to wait for.
A judge that fails before its verdict is reported by how it ended, as before."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from kgb.evaluate import EvalSettings, engine_env

# The engine with a stand-in judge: it writes its pid where the request says, raises if the
# request's name says so, and takes 20 s to exit once done (as a slow CUDA teardown would).
DRIVER = """
import os, time
from pathlib import Path

from kgb.evaluate import engine_process as engine

real_exit = os._exit


def slow_exit(code):
    time.sleep(20)
    real_exit(code)


def judge(request, log, env, done_fd):
    os._exit = slow_exit  # in this forked judge only

    def body():
        Path(request).write_text(str(os.getpid()))
        if "fails" in request:
            raise RuntimeError("no verdict")

    engine._judge_child(log, env, body, done_fd)


engine._run_child = judge
engine.serve()
"""


def _line(proc: subprocess.Popen, within_s: float) -> str:
    ready, _, _ = select.select([proc.stdout], [], [], within_s)
    assert ready, f"nothing from the engine within {within_s} s"
    return proc.stdout.readline().strip()


def test_a_judgement_is_done_when_its_verdict_is_written_not_when_its_process_ends(tmp_path):
    env = engine_env(EvalSettings(device="cpu"))
    proc = subprocess.Popen([sys.executable, "-c", DRIVER], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, bufsize=1, start_new_session=True)
    try:
        assert _line(proc, 60) == "ready"
        for rid, name in (("1", "judged"), ("2", "fails")):
            request = tmp_path / name
            proc.stdin.write(json.dumps({"run": rid, "request": str(request), "log": str(tmp_path / f"{name}.log"),
                                         "env": {}}) + "\n")
            proc.stdin.flush()
        started = time.monotonic()
        first = _line(proc, 15)
        assert first == "done 1 0", first  # before the judge's 20 s exit
        judge = int((tmp_path / "judged").read_text())
        os.kill(judge, 0)  # still there, tearing down
        # the one that failed says so by its exit status (70), after its exit
        second = _line(proc, 60)
        assert second.startswith("done 2 ") and second != "done 2 0", second
        assert time.monotonic() - started > 19
        assert "no verdict" in (tmp_path / "fails.log").read_text()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        for name in ("judged", "fails"):
            pid = (tmp_path / name).read_text() if (tmp_path / name).exists() else ""
            if pid:
                try:
                    os.killpg(int(pid), signal.SIGKILL)  # each judge is a process group of its own
                except ProcessLookupError:
                    pass


def test_the_engine_works_out_tritons_compile_key_before_it_forks():
    # In a fresh process: the key is cached for the process, so this one's would hide a miss.
    # Every candidate process forked from the engine inherits it, and no longer hashes
    # Triton's files (libtriton's hundreds of MB) at its first compile
    # (benchmarks/first_compile.py).
    probe = (
        "from triton.runtime.cache import triton_key\n"
        "from kgb.evaluate.engine_process import warm_compiler\n"
        "assert triton_key.cache_info().currsize == 0\n"
        "warm_compiler()\n"
        "assert triton_key.cache_info().currsize == 1\n"
        "import sys; assert 'triton.compiler.code_generator' in sys.modules\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_gpu_engines_processes_start_cuda_with_one_work_queue(monkeypatch):
    """Eight queues per context (the driver's default) made each CUDA start and end of a sweep
    cost twice to four times as much (benchmarks/start_cost.py); the judge's timing uses one
    stream. Whatever the user's shell says, the judges of one judge version start alike."""
    monkeypatch.setenv("CUDA_DEVICE_MAX_CONNECTIONS", "8")
    assert engine_env(EvalSettings(device="cuda"))["CUDA_DEVICE_MAX_CONNECTIONS"] == "1"


def test_the_engine_keeps_the_bytecode_of_what_it_imports_and_nothing_forked_from_it_does(tmp_path, monkeypatch):
    """The engine's environment says not to write bytecode, for the judges and candidate
    processes forked from it; its own imports (torch, torch._dynamo, kgb) keep theirs, or a
    host whose packages came without bytecode compiles them at every engine start."""
    import importlib
    import sys

    from kgb.evaluate.engine_process import _bytecode_kept

    for name in ("kgb_probe_kept", "kgb_probe_not_kept", "kgb_probe_prefixed"):
        (tmp_path / f"{name}.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.delenv("KGB_BYTECODE_PREFIX", raising=False)
    with _bytecode_kept():
        importlib.import_module("kgb_probe_kept")
    assert sys.dont_write_bytecode  # what is forked afterwards writes none
    importlib.import_module("kgb_probe_not_kept")
    cached = {p.name.split(".")[0] for p in (tmp_path / "__pycache__").iterdir()}
    assert cached == {"kgb_probe_kept"}
    # where the harness's environment says to write none beside the sources: under kgb's prefix
    prefix = tmp_path / "prefix"
    monkeypatch.setenv("KGB_BYTECODE_PREFIX", str(prefix))
    with _bytecode_kept():
        importlib.import_module("kgb_probe_prefixed")
    assert sys.pycache_prefix is None and sys.dont_write_bytecode
    assert [p.name.split(".")[0] for p in prefix.rglob("*.pyc")] == ["kgb_probe_prefixed"]
    assert {p.name.split(".")[0] for p in (tmp_path / "__pycache__").iterdir()} == {"kgb_probe_kept"}


def test_the_engine_is_told_where_to_keep_bytecode_only_where_the_harness_may_not_write_it(monkeypatch, tmp_path):
    """A harness whose environment says to write no bytecode gives its engine kgb's cache for
    it; one whose environment lets Python write it there leaves it beside the sources."""
    from kgb.evaluate.compile_cache import users_cache

    settings = EvalSettings(device="cpu")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("KGB_BYTECODE_PREFIX", raising=False)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert engine_env(settings)["KGB_BYTECODE_PREFIX"] == str(users_cache("pycache")) == str(tmp_path / "kgb" / "pycache")
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE")
    env = engine_env(settings)
    assert "KGB_BYTECODE_PREFIX" not in env and env["PYTHONDONTWRITEBYTECODE"] == "1"


def test_a_first_start_compiles_its_imports_packages_beside_them_where_no_bytecode_is_there(tmp_path, monkeypatch):
    """On a host of many cores the engine's first start compiles its imports' packages in worker
    processes (compileall) while it imports, into the prefix its imports read; not where the
    bytecode is there already, nor on a host of few cores, and never as the engine's child (its
    loop reaps every child as a judge's)."""
    import importlib.util
    import sys
    import time

    from kgb.evaluate import engine_process

    package = tmp_path / "src" / "kgb_probe_ahead"
    package.mkdir(parents=True)
    for name in ("__init__", "first", "second"):
        (package / f"{name}.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.setattr(engine_process, "AHEAD_PACKAGES", ("kgb_probe_ahead",))
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)))
    assert not engine_process._compiled_ahead()  # four cores: the imports alone
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))

    def children() -> set[str]:  # running or ended, until reaped
        return {pid for task in Path("/proc/self/task").iterdir() for pid in (task / "children").read_text().split()}

    before = children()
    assert engine_process._compiled_ahead()
    assert children() <= before  # none of it is this process's child
    compiled = [importlib.util.cache_from_source(str(package / f"{name}.py")) for name in ("__init__", "first", "second")]
    deadline = time.monotonic() + 60
    while not all(os.path.exists(path) for path in compiled) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(os.path.exists(path) for path in compiled)
    torch_bytecode = Path(importlib.util.cache_from_source(importlib.util.find_spec("torch").origin))
    torch_bytecode.parent.mkdir(parents=True, exist_ok=True)
    torch_bytecode.write_bytes(b"")
    assert not engine_process._compiled_ahead()  # compiled at an earlier start
