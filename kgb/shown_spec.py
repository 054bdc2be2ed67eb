"""What of a spec a process that runs candidate code may hold: the spec's module without
its cases, and the cases it is shown.

An agent's `./check` runs the smoke and bench cases; the `check` cases are hidden, to test
what it was not shown, and a candidate could print whatever its process holds into the
agent's check report. So a GPU candidate process, which draws its bench inputs itself,
gets the spec's text without its CASES statement and the shown cases as data
(kgb.evaluate.candidate_process.give_spec), and the compile check's record step, which runs
the candidate in its own process, keeps only the cases it runs (tests/test_hidden_cases.py).
"""

from __future__ import annotations

import ast
import gc
import sys
from pathlib import Path

from kgb.operators import CaseTag, Spec, load_spec, spec_from_text


def load_shown(path: Path, tags: set[str]) -> Spec:
    """The spec at `path` with only its cases of these tags (and its smoke cases), its module
    holding no other: for a process that runs candidate code (kgb.evaluate.crosscompile's
    steps), which could otherwise find the hidden cases in memory. The whole spec is
    loaded first to know them, then let go of."""
    full = load_spec(path)
    shown = [c for c in full.cases if str(c.tag) in tags or c.tag == CaseTag.SMOKE]
    del full
    spec = spec_from_text(text_without_cases(path), Path(path).resolve(), lambda: shown)
    _forget_case_modules()
    gc.collect()  # the first module and its cases sit in reference cycles
    return spec


def text_without_cases(path: Path) -> str:
    """The module of a spec file without its CASES statement, nor its comments: what a
    process that draws inputs needs of the spec (make_inputs and what it uses), and nothing of
    the cases it is not to know (a candidate process: the hidden ones)."""
    tree = ast.parse(Path(path).read_text())
    tree.body = [node for node in tree.body if not (
        isinstance(node, ast.Assign | ast.AnnAssign)
        and "CASES" in {t.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                        if isinstance(t, ast.Name)})]
    return ast.unparse(tree)


def _forget_case_modules() -> None:
    """Let go of the families' case modules (`*_cases`, kept out of the spec libraries) that a
    spec's loading imported."""
    for name in [n for n in sys.modules if n.startswith("kgb.") and n.endswith("_cases")]:
        parent, _, leaf = name.rpartition(".")
        sys.modules.pop(name)
        if hasattr(sys.modules.get(parent), leaf):
            delattr(sys.modules[parent], leaf)
