"""How the judge ends a candidate process (kgb.evaluate.candidate_process): `kill` ends it
without waiting, `close` reaps it, and the reply files it still held are left for the judge's
exit to free (kgb.evaluate.leftovers), not unmapped on the way to the verdict."""

from __future__ import annotations

import os
import weakref

import torch

from kgb.evaluate import leftovers
from kgb.evaluate.candidate_process import CandidateProcess
from kgb.evaluate.sandbox import Limits


def test_a_killed_process_is_reaped_by_close_and_its_last_reply_is_left_for_the_exit(tmp_path):
    (tmp_path / "ws").mkdir()
    process = CandidateProcess("cpu", tmp_path / "ws", Limits(cpu_s=120)).wait_ready()
    try:
        assert process.load("def f(x):\n    return x * 2\n").failure is None
        reply = process.call("f", (torch.ones(1 << 20),), {})  # 4 MB back: in a memory file
        assert reply.failure is None and torch.equal(reply.value, torch.full((1 << 20,), 2.0))
        held = [weakref.ref(t) for t in process._read]
        assert held
        del reply
        process.kill()
        assert process.closed and process._read == ()
        assert all(r() is not None for r in held)  # in leftovers, not freed
        assert all(any(t is r() for t in leftovers._left[-1]) for r in held)
        process.kill()  # again: nothing
        process.close()
        # reaped: the pid is no child of this process any more
        try:
            os.waitpid(process.pid, os.WNOHANG)
            raise AssertionError("the process was not reaped")
        except ChildProcessError:
            pass
        process.close(wait=False)  # a reaped process: nothing
    finally:
        process.close()
    for _ in range(leftovers.KEPT):
        leftovers.leave(None)
    assert all(r() is None for r in held)  # freed once KEPT more things are left


def test_what_the_judge_lets_go_of_mid_judgement_is_freed_by_a_thread_beside_it():
    """An earlier reply's file, let go of once the next call is handed over, is unmapped in
    the judge's freeing thread, not its own (0.085 s of reshape's judge on an H100, session 61)."""
    import threading

    freed_in = []

    class Reply:
        def __del__(self):
            freed_in.append(threading.current_thread().name)

    held = (Reply(),)
    leftovers.free_beside(held)
    del held
    leftovers.drained()
    assert freed_in == ["kgb freeing"]
