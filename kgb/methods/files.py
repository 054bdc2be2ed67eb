"""The files method: kernels a user brings, one file per operator.

`method.dir=DIR` holds `<source>__<op>.py` (e.g. `aten__softmax.py`). Operators without
a file end as `no_candidate`, whose reason names a misnamed file that is near the name
looked for. Before the job, `folder_warning` (kgb.preflight) tells of a folder with no
file for the job's operators, and of files that name no operator at all.

A trial's key covers the file's content (`input_digest`; a missing file is its own state),
so that an edited or added file is judged again by the next run of the job, and the text
judged is the text the key was made of, whatever happens to the file meanwhile.
"""

from __future__ import annotations

import difflib
import hashlib
from pathlib import Path

from kgb import operators
from kgb.config import FilesConfig
from kgb.methods import NoCandidate
from kgb.trial import TrialContext

NAMING = "files are named <source>__<op>.py, e.g. aten__softmax.py"


def file_name(op: str) -> str:
    source, _, name = op.partition("::")
    return f"{source}__{name}.py"


def stray_files(folder: Path) -> list[str]:
    """The .py files of `folder` that name no operator kgb knows: misnamed, most likely."""
    known = {file_name(op) for op in operators.discover()}
    return sorted(p.name for p in folder.glob("*.py") if p.name not in known and not p.name.startswith((".", "_")))


def near(name: str, names: list[str]) -> str | None:
    return next(iter(difflib.get_close_matches(name, names, n=1)), None)


def folder_warning(folder: Path, ops: list[str]) -> str | None:
    """What is likely a mistake in the folder a job over `ops` reads, in one sentence; None if nothing."""
    strays = stray_files(folder)
    named = [f"{s} (did you mean {hint}?)" if (hint := near(s, [file_name(op) for op in ops])) else s
             for s in strays[:5]]
    odd = f"{', '.join(named)}{', ...' if len(strays) > 5 else ''} name no operator and will not be judged"
    if not any((folder / file_name(op)).is_file() for op in ops):
        return (f"method.dir={folder} has no file for any of this job's {len(ops)} operator(s), so every trial "
                f"will end no_candidate{'; ' + odd if strays else ''} ({NAMING})")
    return f"method.dir={folder}: {odd} ({NAMING})" if strays else None


class Files:
    def __init__(self, cfg: FilesConfig):
        if not cfg.dir:
            raise ValueError("method=files needs method.dir=DIR")
        self.dir = Path(cfg.dir).expanduser().resolve()
        if not self.dir.is_dir():
            raise ValueError(f"method.dir={cfg.dir}: no such directory")
        self.texts: dict[str, str | None] = {}  # op -> its file's text as first read (None: no file)

    def text(self, op: str) -> str | None:
        if op not in self.texts:
            path = self.dir / file_name(op)
            self.texts[op] = path.read_text() if path.is_file() else None
        return self.texts[op]

    def input_digest(self, op: str) -> str:
        """The file's content, in the trial's key (kgb.methods): an edited file is a new trial."""
        try:
            text = self.text(op)
        except (OSError, UnicodeError) as e:  # the trial reads it again, and ends saying why
            return f"unreadable: {type(e).__name__}"
        return "missing" if text is None else hashlib.sha256(text.encode()).hexdigest()

    def solve(self, ctx: TrialContext) -> None:
        path = self.dir / file_name(ctx.problem.op)
        text = self.text(ctx.problem.op)
        if text is None:
            hint = near(path.name, stray_files(self.dir))
            raise NoCandidate(f"no file {path.name} in {self.dir}" + (f"; did you mean {hint}?" if hint else ""))
        ctx.evaluate(text, origin=str(path))
