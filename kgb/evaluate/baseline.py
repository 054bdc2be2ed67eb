"""A case's speed baseline (PyTorch's op, or the library routine the spec names), timed by
the judge in the same timing turn as its replay of the candidate's call when it can be: a
turn waits for every running work section of the GPU to end, and once is enough for both.
It is prepared (warmed up, captured) before, in a work section, like the replay.

It is timed on the judge's own draw of the case's timed inputs (set T, which nothing else
reads), with the protocol the replay uses (kgb.evaluate.timing.measure), so that their
ratio is fair.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch

from kgb.evaluate.nvml import clocks_around
from kgb.evaluate.phases import Phases
from kgb.evaluate.timing import Prepared, Timing, measure, prepare
from kgb.evaluate.timing_lock import trace
from kgb.evaluate.verdict import CROWDED_TURN, Turn
from kgb.operators import Spec


def routine(spec: Spec, entry: str, device: str) -> tuple[str, Callable[..., object]]:
    """What an entry point's speed is measured against on `device`, and its name: the
    library routine the spec's `speed_baseline` names (libcublas), or PyTorch's op (the
    spec's reference) where it names none or that routine cannot run here."""
    hook = getattr(spec.module, "speed_baseline", None)
    found = hook(entry, device) if hook is not None else None
    return found if found is not None else ("torch", spec.reference_for(entry))


class BaselineTiming:
    """`prepare` it in a work section, then call it inside a timing turn; then `us` is the
    median, or `missing` says why there is none (a routine this library cannot run: the case
    has no speedup, and no other baseline replaces it), or `broke` says how it left this
    process's CUDA context unusable."""

    def __init__(self, call: Callable[[], object], repeats: int, warmup: int, phase: Phases, tag: str = ""):
        self.call, self.repeats, self.warmup, self.phase = call, repeats, warmup, phase
        self.tag = tag  # the operator and case, for the judges' trace
        self.done = False
        self.prepared: Prepared | None = None
        self.timing: Timing | None = None
        self.missing = ""
        self.broke = ""
        self.turn: Turn | None = None  # how the turn that timed it went, said by whoever held it

    def prepare(self) -> None:
        if self.prepared is None and not self.done:
            with self._failing(), self.phase("baseline warm-up"):
                self.prepared = prepare(self.call, self.warmup)

    def __call__(self) -> None:
        if self.done:
            return
        self.prepare()
        self.done = True
        if self.prepared is not None:
            with clocks_around() as clock:
                began = time.monotonic()
                with self._failing(), self.phase("baseline timing"):
                    self.timing = measure(self.prepared, self.repeats)
            self.prepared = None
            if self.timing is not None:  # a chip's first run measures ~590 of these in the turns (session 34: 44-60 s)
                t = self.timing
                trace("measure", began, began, time.monotonic(), tag=self.tag, who="baseline", mode=t.mode,
                      repeats=t.repeats, steps={k: round(v, 4) for k, v in t.steps.items()}, **clock)

    @property
    def us(self) -> float | None:
        """The median, once the turn's kernel-clock session has ended (timing.Timing.counted)."""
        if self.timing is not None:
            self.timing = self.timing.counted()
        return self.timing.median_us if self.timing is not None else None

    @property
    def mode(self) -> str | None:
        """How it was timed, as the candidate's timing_mode says it: "eager" or "graph", and
        the timing's note (e.g. repetitions whose profiler records were lost)."""
        if self.us is None:
            return None
        t = self.timing
        return t.mode + (f" ({t.note})" if t.note else "") + (f"; {CROWDED_TURN}" if self.turn is Turn.CROWDED else "")

    @contextmanager
    def _failing(self) -> Iterator[None]:
        """Whatever the routine raises is this baseline's, not the judgement's."""
        try:
            yield
        except torch.AcceleratorError as exc:  # sticky: no CUDA call in this process works after it
            self.done = True
            self.broke = f"the speed baseline raised {type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
        except Exception as exc:  # noqa: BLE001 - e.g. a routine this libcublas does not support
            self.done = True
            self.missing = f"; no baseline: {type(exc).__name__}: {str(exc)[:300]}"
