"""What the optimise-mode protocols share: comparing checks by speed, and the markdown
tables the harness keeps in the workspace for the agent (PERFORMANCE.md, EXPERIMENTS.md,
ITERATIONS.md, STRATEGIES.md).

Where the chip does not time kernels (the CPU interpreter), no version can be shown to be
faster: the first correct one reaches any target, and a later correct one is no gain.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kgb.agents.checks import Checked
from kgb.agents.nofollow import write_text


def reaches(c: Checked | None, target: float) -> bool:
    if c is None or not c.verdict.correct:
        return False
    return c.verdict.speedup is None or c.verdict.speedup >= target


def improves(c: Checked, best: Checked | None, min_gain: float) -> bool:
    """Correct, and faster than `best` by the fraction `min_gain` (any correct one beats none)."""
    if not c.verdict.correct:
        return False
    if best is None:
        return True
    new, old = c.verdict.speedup, best.verdict.speedup
    return new is not None and old is not None and new >= old * (1 + min_gain)


def speed_text(c: Checked) -> str:
    return f"{c.verdict.speedup:.3f}" if c.verdict.speedup is not None else "n/a"


def profiler_hint(device: str) -> str:
    """Which profiler the agent may use on this chip, or that there is none."""
    if device == "cpu":
        return "no profiler on this chip: the kernels run in Triton's CPU interpreter, where speed is not measured"
    found = [tool for tool in ("ncu", "nsys") if shutil.which(tool)]
    return f"{' and '.join(f'`{t}`' for t in found)} available" if found else "no profiler found on this machine"


class Ledger:
    """A markdown table in the workspace, appended one row at a time."""

    def __init__(self, path: Path, title: str, columns: tuple[str, ...]):
        self.path, self.columns = path, columns
        write_text(path, f"# {title}\n\n| {' | '.join(columns)} |\n|{'---|' * len(columns)}\n")

    def add(self, *cells: object) -> None:
        text = " | ".join(str(c).replace("|", "/").replace("\n", " ") for c in cells)
        write_text(self.path, f"| {text} |\n", append=True)
