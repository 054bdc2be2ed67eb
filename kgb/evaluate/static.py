"""The static check: reasons to reject a candidate before running it."""

from __future__ import annotations

import ast

# Modules that reach outside the worker or around the integrity audit.
FORBIDDEN_MODULES = {
    "ctypes", "cffi", "subprocess", "socket", "multiprocessing", "threading", "signal",
    "importlib", "pickle", "marshal", "shutil", "requests", "urllib", "http", "kgb",
    "torch.utils.cpp_extension", "cupy", "numba", "pycuda", "jax",
}
FORBIDDEN_CALLS = {"exec", "eval", "compile", "__import__", "open", "globals", "breakpoint"}
FORBIDDEN_ATTRIBUTES = {"system", "popen", "fork", "execv", "execve", "spawnv", "load_inline"}


def _is_triton_jit(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = ast.unparse(target)
    return name.split(".")[-1] in {"jit", "autotune", "heuristics"}


def static_check(source: str, entry_points: tuple[str, ...], kernel_required: bool = True) -> list[str]:
    """Reasons to reject `source`; an empty list means it may run.

    A syntax error is not a reason here: the worker reports it as a compile error with
    Python's own message.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    reasons = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                if any(name == m or name.startswith(m + ".") for m in FORBIDDEN_MODULES):
                    reasons.append(f"line {node.lineno}: imports {name}, which is not allowed")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in FORBIDDEN_CALLS:
                reasons.append(f"line {node.lineno}: calls {node.func.id}(), which is not allowed")
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRIBUTES:
            reasons.append(f"line {node.lineno}: uses .{node.attr}, which is not allowed")
    kernels = [
        n for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef) and any(_is_triton_jit(d) for d in n.decorator_list)
    ]
    if not kernels and kernel_required:
        reasons.append("defines no @triton.jit kernel")
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    defined |= {
        t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
    }
    missing = [e for e in entry_points if e not in defined]
    if missing:
        reasons.append(f"does not define the entry point(s) {', '.join(missing)}")
    return reasons
