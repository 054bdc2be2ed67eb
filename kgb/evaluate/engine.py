"""The warm engine: one process that has imported torch and Triton, forking a judge per candidate.

A fresh Python that imports torch, Triton and the judge costs seconds; a fork of a
process that already has costs milliseconds. The engine never touches the GPU itself, so
its children can each start CUDA. It is started once per harness process and setting,
with the judge's scrubbed environment, and dies with the harness (PR_SET_PDEATHSIG, and
end of file on its stdin).

Protocol on stdin/stdout, one JSON object or word per line:
    harness -> engine   {"run": id, "request": path, "log": path, "env": {...}[, "spare": sid]}
                        | {"kill": id}
                        | {"spare": sid, "workspace": path, "log": path, "env": {...}, "device": d,
                           "timeout_s": s, "processes": n}  |  {"drop": sid}
    engine -> harness   ready  |  done <id> <exit status>
A judge child runs in its own process group; `kill` kills that group, and the candidate
process under it dies with its parent. A spare (kgb.evaluate.spare) is a judge started
before its request; a run that names a live spare is handed to it, otherwise (the spare
died) a judge is forked for it as usual; `drop` lets a spare go.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path


def _warm() -> None:
    """Import everything a judge and a candidate process use, so that forks start warm."""
    import importlib

    import torch  # noqa: F401
    import triton  # noqa: F401
    import triton.language  # noqa: F401

    import kgb.evaluate.judge  # noqa: F401

    importlib.import_module("torch._dynamo")
    if os.environ.get("TRITON_INTERPRET") == "1":
        from kgb.evaluate.interpreter import prepare_interpreter

        prepare_interpreter()


def _judge_child(log: str, env: dict[str, str], body, done_fd: int) -> None:
    """In a forked child: become a judge process (a process group of its own, dying with the
    engine, its output in `log`, `env` set) and run `body`; never returns. Once `body` has
    returned (the verdict is written), a byte on `done_fd` tells the engine so: the process
    still has its CUDA context to tear down as it exits, a while that no evaluation needs
    to wait for."""
    code = 0
    try:
        os.setsid()
        from kgb.evaluate.sandbox import die_with_parent

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
    except BaseException:  # noqa: BLE001 - the harness reads the log
        import traceback

        traceback.print_exc()
        code = 70
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


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
    os.close(orders_w)  # it reads end of file, closes its candidate processes and exits
    _kill_group(pid)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# --------------------------------------------------------------------- in the harness


# The engine asks to die with its parent (PR_SET_PDEATHSIG), and Linux sends that signal
# when the *thread* that started it ends, not the process. Engines are shared: one started
# by a trial's worker thread, or by the request thread of an agent's check, would be killed
# when that thread ends, with every judgement in flight on it. So every engine is started
# by one thread that lives as long as the harness process.
_starts: queue.Queue = queue.Queue()


def _starter() -> None:
    while True:
        start, box, started = _starts.get()
        try:
            box.append(start())
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller, raised there
            box.append(exc)
        started.set()


_starter_thread: threading.Thread | None = None
_starter_lock = threading.Lock()


def _start_from_the_lasting_thread(start):
    global _starter_thread
    with _starter_lock:
        if _starter_thread is None or not _starter_thread.is_alive():
            _starter_thread = threading.Thread(target=_starter, name="kgb-engine-starter", daemon=True)
            _starter_thread.start()
    box: list = []
    started = threading.Event()
    _starts.put((start, box, started))
    started.wait()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


class EngineDied(RuntimeError):
    """The engine process ended: an infrastructure failure, not a verdict on a candidate."""


# Spare judges an engine holds at once, one per settings (a multi-GPU host's evaluations
# differ in CUDA_VISIBLE_DEVICES): each holds a judge and its candidate processes, on a GPU
# three CUDA contexts.
MAX_SPARES = 4


@dataclass(frozen=True)
class Spare:
    """A spare judge the engine holds for the next evaluation of these settings (`key`); its
    workspace is `workdir / "candidate"`, its log `workdir / "stderr.log"`."""
    sid: str
    key: str
    workdir: Path


@dataclass
class _Pending:
    done: threading.Event = field(default_factory=threading.Event)
    status: int | None = None


class Engine:
    """The harness's handle on one engine process; safe to use from several threads."""

    def __init__(self, env: dict[str, str]):
        self.proc = _start_from_the_lasting_thread(lambda: subprocess.Popen(
            [sys.executable, "-m", "kgb.evaluate.engine"], env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1,
            start_new_session=True,
        ))
        self._lock = threading.Lock()
        self._pending: dict[str, _Pending] = {}
        self.leases = 0  # evaluations holding this engine (kgb.evaluate._engine counts them)
        self._next = 0
        self._spares: dict[str, Spare] = {}  # by settings key, the oldest first
        first = self.proc.stdout.readline() if self.proc.stdout else ""
        if first.strip() != "ready":
            raise EngineDied(f"the evaluation engine did not start (exit {self.proc.poll()})")
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            words = line.split()
            if len(words) == 3 and words[0] == "done":
                with self._lock:
                    pending = self._pending.get(words[1])
                if pending is not None:
                    pending.status = int(words[2])
                    pending.done.set()
        with self._lock:  # the engine is gone: wake everyone who waits
            for pending in self._pending.values():
                pending.done.set()

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None


    def take_spare(self, key: str) -> Spare | None:
        """The spare judge for settings `key`, now this caller's to `run`; None if there is
        none for them."""
        with self._lock:
            return self._spares.pop(key, None)

    def start_spare(self, key: str, workdir: Path, order: dict) -> None:
        """Have a spare judge started in `workdir` for the next evaluation of settings `key`,
        unless one for them is there already; past MAX_SPARES, the oldest is let go.
        `order`: the spare's device, timeout_s, processes and env (kgb.evaluate.spare)."""
        dropped: list[Path] = []
        with self._lock:
            if key in self._spares:
                dropped.append(workdir)
            else:
                self._next += 1
                self._spares[key] = Spare(f"s{self._next}", key, workdir)
                self._send(json.dumps({**order, "spare": self._spares[key].sid,
                                       "workspace": str(workdir / "candidate"), "log": str(workdir / "stderr.log")}))
            while len(self._spares) > MAX_SPARES:
                oldest = self._spares.pop(next(iter(self._spares)))
                self._send(json.dumps({"drop": oldest.sid}))
                dropped.append(oldest.workdir)
        for folder in dropped:
            shutil.rmtree(folder, ignore_errors=True)

    def run(self, request: Path, log: Path, env: dict[str, str], timeout_s: float, spare: Spare | None = None) -> str:
        """Judge one request, on `spare` if it is still up; "ok", "timeout" or
        "died:<reason>", as the judge process ended."""
        with self._lock:
            self._next += 1
            rid = str(self._next)
            pending = self._pending[rid] = _Pending()
            self._send(json.dumps({"run": rid, "request": str(request), "log": str(log), "env": env,
                                   **({"spare": spare.sid} if spare else {})}))
        try:
            if not pending.done.wait(timeout_s):
                with self._lock:
                    self._send(json.dumps({"kill": rid}))
                pending.done.wait(30)
                return "timeout"
            if pending.status is None:
                raise EngineDied("the evaluation engine died")
            return _outcome(pending.status)
        finally:
            with self._lock:
                self._pending.pop(rid, None)

    def _send(self, line: str) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise EngineDied("the evaluation engine died") from exc

    def forget_spares(self) -> None:
        """Remove the spares' folders (once the engine is closed, or at exit: the engine, and
        its spares with it, die with this process)."""
        with self._lock:
            spares, self._spares = list(self._spares.values()), {}
        for spare in spares:
            shutil.rmtree(spare.workdir, ignore_errors=True)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.forget_spares()


def _outcome(status: int) -> str:
    if os.WIFEXITED(status):
        code = os.WEXITSTATUS(status)
        return "ok" if code == 0 else f"died:exit code {code}"
    sig = os.WTERMSIG(status)
    try:
        return f"died:killed by signal {signal.Signals(sig).name}"
    except ValueError:
        return f"died:killed by signal {sig}"


if __name__ == "__main__":
    serve()
