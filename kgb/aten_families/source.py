"""The pieces a generated solution.py is assembled from: the kernel files under
`kernels/`, written once as lintable modules and pasted into every solution that needs
them (a candidate is one self-contained file, so a solution cannot import them)."""

from __future__ import annotations

from pathlib import Path

from kgb.generated_files import split_module

KERNELS = Path(__file__).parent / "kernels"
IMPORTS = "import torch\nimport triton\nimport triton.language as tl\n"


def kernel_body(name: str) -> str:
    """kernels/<name>.py without its docstring and imports."""
    return split_module((KERNELS / f"{name}.py").read_text())[1]


def solution(kernel_files: list[str], tail: str, imports: str = IMPORTS) -> str:
    """A self-contained solution: the imports, the kernel files in order, then `tail`
    (the member's own kernels and entry points), two blank lines apart."""
    parts = [kernel_body(k) for k in kernel_files] + [tail.strip("\n") + "\n"]
    # two blank lines before a function or decorator after the imports, as isort wants
    gap = "\n\n" if parts[0].startswith(("@", "def ")) else "\n"
    return imports + gap + "\n\n".join(parts)
