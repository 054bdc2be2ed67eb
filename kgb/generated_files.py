"""Files that a generator writes into `operators/` from a family description, and that CI
checks against it: the ATen and cuBLAS family generators share this, each giving its own
`files()` (every generated path and the text it should hold).

    python -m kgb.<families>            # (re)write every generated file that differs
    python -m kgb.<families> --check    # exit 1, naming them, if any differs; write nothing
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

Files = dict[Path, str]


def family_modules(package: str, path: list[str], provides: str) -> dict[str, ModuleType]:
    """The family modules of a package, by name: those that define the function
    `provides` (`members`, `routines`). Found rather than listed, so that adding a family
    is adding its module; the generator (which reads the families) is not one."""
    found = {}
    for info in sorted(pkgutil.iter_modules(path), key=lambda i: i.name):
        if info.ispkg or info.name.startswith("_") or info.name == "generate":
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        if callable(getattr(module, provides, None)):
            found[info.name] = module
    return found


def split_module(text: str) -> tuple[list[str], str]:
    """A lintable module that a generator pastes into a solution: its import lines (each on
    one line, however it was wrapped) and its body without the docstring and the imports."""
    if text.startswith('"""'):
        text = text[text.index('"""', 3) + 3 :]
    lines = text.strip("\n").splitlines()
    imports = []
    while lines and (not lines[0].strip() or lines[0].startswith(("import ", "from "))):
        line = lines.pop(0)
        while line.count("(") > line.count(")"):  # an import wrapped over several lines
            line += " " + lines.pop(0).strip()
        if line.strip():
            imports.append(line.replace("( ", "(").replace(", )", ")"))
    return imports, "\n".join(lines).strip("\n") + "\n"


def stale(files: Files) -> list[Path]:
    """The generated files whose text on disk differs from what their family renders now."""
    return [p for p, text in files.items() if not p.exists() or p.read_text() != text]


def main(description: str, files: Callable[[], Files], argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="report stale files, write nothing")
    args = parser.parse_args(argv)
    wanted = files()
    if args.check:
        bad = stale(wanted)
        for p in bad:
            print(f"stale: {p}")
        return 1 if bad else 0
    for path in stale(wanted):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(wanted[path])
        print(f"wrote {path}")
    return 0
