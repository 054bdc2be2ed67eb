"""kgb.syntax.parse from many threads at once: CPython 3.11's `ast.parse` fails there with
"AST constructor recursion depth mismatch" when a thread switch lands inside it (seen in
CI: four evaluations started at once, each parsing its candidate)."""

from __future__ import annotations

import gc
import threading
import time
from pathlib import Path

from kgb import syntax

SOURCE = (Path(__file__).parent.parent / "kgb" / "evaluate" / "case_runner.py").read_text()


def test_threads_parsing_at_once_never_fail():
    failures: list[BaseException] = []

    def switch_threads(phase, info):  # a collection that runs Python code lets another thread in
        time.sleep(0)

    def parse_many() -> None:
        for _ in range(40):
            try:
                syntax.parse(SOURCE)
            except SystemError as exc:
                failures.append(exc)

    threshold = gc.get_threshold()
    gc.callbacks.append(switch_threads)
    gc.set_threshold(50)  # collections while the AST is built, so that threads switch inside it
    try:
        threads = [threading.Thread(target=parse_many) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        gc.callbacks.remove(switch_threads)
        gc.set_threshold(*threshold)
    assert not failures, failures[0]
