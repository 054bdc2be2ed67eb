"""The files method: kernels a user brings, one file per operator.

`method.dir=DIR` holds `<source>__<op>.py` (e.g. `aten__softmax.py`). Operators without
a file end as `no_candidate`.
"""

from __future__ import annotations

from pathlib import Path

from kgb.config import FilesConfig
from kgb.methods import NoCandidate
from kgb.trial import TrialContext


def file_name(op: str) -> str:
    source, _, name = op.partition("::")
    return f"{source}__{name}.py"


class Files:
    def __init__(self, cfg: FilesConfig):
        if not cfg.dir:
            raise ValueError("method=files needs method.dir=DIR")
        self.dir = Path(cfg.dir).expanduser().resolve()
        if not self.dir.is_dir():
            raise ValueError(f"method.dir={cfg.dir}: no such directory")

    def solve(self, ctx: TrialContext) -> None:
        path = self.dir / file_name(ctx.problem.op)
        if not path.is_file():
            raise NoCandidate(f"no file {path.name} in {self.dir}")
        ctx.evaluate(path.read_text(), origin=str(path))
