"""The engine process: one process that has imported torch and Triton, forking a judge per
candidate. The harness's handle on it is kgb.evaluate.engine.

A fresh Python that imports torch, Triton and the judge costs seconds; a fork of a
process that already has costs milliseconds. The engine never touches the GPU itself, so
its children can each start CUDA. It is started once per harness process and setting,
with the judge's scrubbed environment, and dies with the harness (PR_SET_PDEATHSIG, and
end of file on its stdin).

Protocol on stdin/stdout, one JSON object or word per line:
    harness -> engine   {"run": id, "request": path, "log": path, "env": {...}[, "spare": sid]}
                        | {"kill": id}
                        | {"spare": sid, "workspace": path, "log": path, "env": {...}, "device": d,
                           "timeout_s": s}  |  {"drop": sid}
    engine -> harness   ready  |  done <id> <exit status>
A judge child runs in its own process group; `kill` kills that group, and the candidate
process under it dies with its parent. A spare (kgb.evaluate.spare) is a judge started
before its request; a run that names a live spare is handed to it, otherwise (the spare
died) a judge is forked for it as usual; `drop` lets a spare go. A run is done once its
judge says its verdict is written (status 0), or else when the judge ends.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import signal
import sys
from pathlib import Path


def _warm(took: dict[str, float] | None = None) -> None:
    """Import everything a judge and a candidate process use, so that forks start warm;
    each step's seconds go into `took` (benchmarks/engine_start.py). What is imported here
    is the engine's own code, so Python may keep its bytecode (`_bytecode_kept`)."""
    with _bytecode_kept():
        _compiled_ahead()
        _imported(took)


@contextlib.contextmanager
def _bytecode_kept():
    """Python writes the bytecode of the modules imported meanwhile: where it would by
    default (`__pycache__` beside each source it may write to), or under KGB_BYTECODE_PREFIX,
    which the harness sets where its own environment says to write none beside the sources
    (kgb.evaluate.environment). The engine's environment says not to write any
    (PYTHONDONTWRITEBYTECODE, for every judge and candidate process forked from it), and on a
    host whose packages came without bytecode every engine start compiled torch,
    torch._dynamo and the rest from their sources again (session 69: 11.2 s on an H100
    host, against 3.4 s with the bytecode). A prefix hides the bytecode beside the sources,
    so it is given up again once the engine's imports are done."""
    before = sys.dont_write_bytecode, sys.pycache_prefix
    sys.dont_write_bytecode = False
    sys.pycache_prefix = os.environ.get("KGB_BYTECODE_PREFIX") or before[1]
    try:
        yield
    finally:
        sys.dont_write_bytecode, sys.pycache_prefix = before


# The packages of the engine's imports, most modules first (on this project's CPU machine: torch
# 1,040 of the 2,037 it imports, sympy 419 through torch._dynamo, kgb 130, Triton 94, NumPy 87,
# mpmath 51), and the hosts whose cores can compile them beside the imports.
AHEAD_PACKAGES = ("torch", "sympy", "kgb", "triton", "numpy", "mpmath")
AHEAD_FROM_CORES = 8


def _compiled_ahead() -> bool:
    """Where the engine's imports find no bytecode (a host whose packages came without it, and
    where kgb's own prefix is new: its first start), compile their packages' sources in worker
    processes beside the imports; whether it began. The imports compile one module after
    another on one core, while the first judges wait for them and the host's other cores stand
    idle: on an H100 host the engine's first start took 8.92 s against 3.87 s with the bytecode
    there (session 70, 16 cores, the host 87% idle in a first job's first 10 s). The workers
    write where the imports look (`_bytecode_kept`'s prefix); an import that comes to a module
    first compiles it itself, as before. The compile is not the engine's child, whose ends its
    loop reaps as judges' (`serve`), and it runs on after the imports, at a lower priority, at
    most until it has compiled the packages once."""
    import importlib.util
    import subprocess

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    torch = importlib.util.find_spec("torch")
    if cores < AHEAD_FROM_CORES or torch is None or not torch.origin:
        return False
    if os.path.exists(importlib.util.cache_from_source(torch.origin)):
        return False  # compiled at an earlier start (or shipped)
    folders = [os.path.dirname(found.origin) for name in AHEAD_PACKAGES
               if (found := importlib.util.find_spec(name)) is not None and found.origin]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if sys.pycache_prefix:
        env["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix
    # bash starts the compile in the background and ends at once: the compile is not our child
    command = 'nice -n 5 "$0" -m compileall -q -j "$1" "${@:2}" > /dev/null 2>&1 &'
    try:
        subprocess.run(["bash", "-c", command, sys.executable, str(cores - 2), *folders], env=env,
                       stdin=subprocess.DEVNULL, check=False)
    except OSError:  # no bash here: the imports compile alone, as before
        return False
    return True


def _imported(took: dict[str, float] | None) -> None:
    import importlib
    import time

    def step(name: str, work) -> None:
        started = time.perf_counter()
        work()
        if took is not None:
            took[name] = time.perf_counter() - started

    step("torch", lambda: importlib.import_module("torch"))
    step("triton", lambda: importlib.import_module("triton.language"))
    step("the judge", lambda: importlib.import_module("kgb.evaluate.judge"))
    # A candidate process loads its spec from text, with the repo out of reach: the kgb modules
    # specs import are imported here, once, for every fork. (A judge started alone has
    # imported its own spec's before it forks its candidate process.)
    step("specs' libraries", lambda: importlib.import_module("kgb.operators").import_spec_libraries())
    step("torch._dynamo", lambda: importlib.import_module("torch._dynamo"))
    if os.environ.get("TRITON_INTERPRET") == "1":
        step("the interpreter", lambda: importlib.import_module("kgb.evaluate.interpreter").prepare_interpreter())
    else:
        step("Triton's compiler", warm_compiler)


def warm_compiler() -> None:
    """What Triton works out at a process's first compile and keeps for the process's life,
    worked out here once for every fork: its key hashes Triton's own files, libtriton among
    them (415 MB in Triton 3.6, 500 MB in 3.9), and the code generator is imported then.
    Every candidate process did both at its first compile, about half a second of a host
    core each (`benchmarks/first_compile.py`), with 16 of them compiling at once. Neither
    touches the GPU, and the key names only Triton's installation."""
    import importlib

    importlib.import_module("triton.compiler.code_generator")
    cache = importlib.import_module("triton.runtime.cache")
    if hasattr(cache, "triton_key"):  # Triton 3.x; another version works it out as before
        cache.triton_key()


def _judge_child(log: str, env: dict[str, str], body, done_fd: int) -> None:
    """In a forked child: become a judge process (a process group of its own, dying with the
    engine, its output in `log`, `env` set) and run `body`; never returns. Once `body` has
    returned (the verdict is written), a byte on `done_fd` tells the engine so: the process
    still has its CUDA context to tear down as it exits, a while that no evaluation needs
    to wait for."""
    from kgb.evaluate.sandbox import die_with_parent, exit_after

    def judge() -> None:
        os.setsid()
        die_with_parent()
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.environ.update(env)
        import tempfile

        tempfile.tempdir = None  # the engine computed its own; this judge's TMPDIR is the workspace
        body()
        sys.stdout.flush()
        sys.stderr.flush()
        os.write(done_fd, b"1")

    exit_after(judge)


def _run_child(request: str, log: str, env: dict[str, str], done_fd: int) -> None:
    """In the forked child: become the judge for one request; never returns."""
    from kgb.evaluate.judge import serve_request

    _judge_child(log, env, lambda: serve_request(Path(request)), done_fd)


def serve() -> None:
    """The engine's loop: fork a judge per request, report each one's end."""
    from kgb.evaluate.sandbox import die_with_parent

    die_with_parent()
    # SLURM signals every process of a job step at preemption (USR2); the job's own process
    # decides the requeue, and the engine (its judges and candidates inherit this) must not
    # die of it mid-judgement, or the trial in flight is logged as the judge's failure.
    signal.signal(signal.SIGUSR2, signal.SIG_IGN)
    _warm()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, str] = {}  # pid -> request id ("" for a spare not yet handed one)
    spares: dict[str, tuple[int, int]] = {}  # spare id -> (pid, its order pipe)
    said: dict[int, int] = {}  # the read end of a judge's pipe that says its verdict is written -> its pid
    reported: set[int] = set()  # judges whose run was reported done before they ended
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    buffer = b""
    stdin = sys.stdin.fileno()
    while True:
        ready, _, _ = select.select([stdin, wake_r, *said], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
        for fd in [fd for fd in ready if fd in said]:
            pid = said.pop(fd)
            written = os.read(fd, 1)  # b"": it ended without saying so; its exit status says how
            os.close(fd)
            if written and children.get(pid):
                out.write(f"done {children[pid]} 0\n")
                out.flush()
                reported.add(pid)
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            rid = children.pop(pid)
            for sid, (spare_pid, orders_w) in list(spares.items()):
                if spare_pid == pid:  # a spare that died unused: its run, if one comes, forks a judge
                    os.close(orders_w)
                    del spares[sid]
            if rid and pid not in reported:
                out.write(f"done {rid} {status}\n")
                out.flush()
            reported.discard(pid)
        if stdin not in ready:
            continue
        chunk = os.read(stdin, 65536)
        if not chunk:  # the harness is gone
            for pid in children:
                _kill_group(pid)
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            order = json.loads(line)
            if "run" in order:
                spare = spares.pop(str(order.get("spare")), None)
                if spare is not None and _handed(spare, order["request"]):
                    pid = spare[0]
                else:
                    done_r, done_w = os.pipe()
                    pid = os.fork()
                    if pid == 0:
                        _close(done_r, *said)
                        _run_child(order["request"], order["log"], order["env"], done_w)
                    os.close(done_w)
                    said[done_r] = pid
                children[pid] = str(order["run"])
            elif "drop" in order:
                spare = spares.pop(str(order["drop"]), None)
                if spare is not None:
                    _let_go(spare)
            elif "spare" in order:
                orders_r, orders_w = os.pipe()
                done_r, done_w = os.pipe()
                pid = os.fork()
                if pid == 0:
                    _close(orders_w, done_r, *said)
                    from kgb.evaluate.spare import serve_spare

                    _judge_child(order["log"], order["env"], functools.partial(serve_spare, order, orders_r, done_w),
                                 done_w)
                os.close(orders_r)
                os.close(done_w)
                said[done_r] = pid
                spares[str(order["spare"])] = (pid, orders_w)
                children[pid] = ""  # not reported: no evaluation waits for it
            elif "kill" in order:
                for pid, rid in children.items():
                    if rid == str(order["kill"]):
                        _kill_group(pid)


def _close(*fds: int) -> None:
    """In a forked judge: the engine's descriptors that are not its own."""
    for fd in fds:
        os.close(fd)


def _handed(spare: tuple[int, int], request: str) -> bool:
    """Give the spare its request; False if it is gone."""
    pid, orders_w = spare
    try:
        os.write(orders_w, (json.dumps({"request": request}) + "\n").encode())
        return True
    except OSError:
        return False
    finally:
        os.close(orders_w)


def _let_go(spare: tuple[int, int]) -> None:
    pid, orders_w = spare
    os.close(orders_w)  # it reads end of file, closes its candidate process and exits
    _kill_group(pid)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


if __name__ == "__main__":
    serve()
