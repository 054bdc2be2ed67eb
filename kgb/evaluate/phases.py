"""Where one judgement's wall time goes, phase by phase (`Verdict.phase_s`;
benchmarks/throughput.py sums them over a sweep)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


class Phases:
    """Wall seconds per named phase, summed over an evaluation's cases. Phases nest: time
    spent in an inner phase (waiting for the GPU inside a timing) counts for the inner one
    only, so that the phases add up to the time they cover."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._open: list[str] = []

    @property
    def current(self) -> str:
        """The innermost phase open now, or ""."""
        return self._open[-1] if self._open else ""

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        self._open.append(name)
        try:
            yield
        finally:
            self._open.pop()
            elapsed = time.perf_counter() - started
            self.seconds[name] = self.seconds.get(name, 0.0) + elapsed
            if self._open:
                outer = self._open[-1]
                self.seconds[outer] = self.seconds.get(outer, 0.0) - elapsed
