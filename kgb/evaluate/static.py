"""The static check: reasons to reject a candidate before running it.

A filter for the obvious, not the sandbox: the candidate process is confined by the
kernel (kgb.evaluate.sandbox) whatever this check lets through, so this check stays
narrow enough never to turn away honest code (a `threading.Lock`, `platform.system()`, a
kernel made by calling `triton.jit(fn)`, an entry point defined under an `if`).
"""

from __future__ import annotations

import ast

from kgb import syntax

# Modules that exist to reach outside the process, around the audit, or into the judge.
FORBIDDEN_MODULES = {
    "ctypes", "cffi", "subprocess", "socket", "multiprocessing", "pickle", "marshal", "requests",
    "urllib", "http", "kgb", "torch.utils.cpp_extension", "cupy", "numba", "pycuda", "jax",
    "gc", "_thread", "concurrent",
}
FORBIDDEN_CALLS = {"exec", "eval", "compile", "__import__", "breakpoint"}
# Attributes that register code to run outside the judged calls, or reach interpreter
# internals: hooks and knobs of Triton, tracing and frame access in Python.
FORBIDDEN_ATTRIBUTES = {
    "add_pre_run_hook", "launch_enter_hook", "launch_exit_hook", "jit_cache_hook",
    "jit_post_compile_hook", "kernel_load_start_hook", "kernel_load_end_hook", "knobs",
    "settrace", "setprofile", "addaudithook", "_getframe", "load_inline", "__subclasses__",
    "__globals__", "__builtins__", "f_back", "f_globals", "f_locals", "gi_frame", "tb_frame",
}
# Far above any kernel file (the known-good solutions' longest is tens of KB); a source of many
# MB is a candidate filling the harness's parser, its event log and MLflow's artifacts.
MAX_SOURCE_BYTES = 1 << 20
OS_PROCESS_CALLS = {"system", "popen", "fork", "forkpty", "execv", "execve", "execvp", "spawnv", "kill"}


def _defined_names(body: list[ast.stmt]) -> set[str]:
    """Names a module binds at import, looking into top-level if/try/with blocks."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.If | ast.With | ast.For | ast.While):
            names |= _defined_names(node.body) | _defined_names(getattr(node, "orelse", []))
        elif isinstance(node, ast.Try):
            names |= _defined_names(node.body) | _defined_names(node.orelse) | _defined_names(node.finalbody)
            for handler in node.handlers:
                names |= _defined_names(handler.body)
    return names


def _imports_triton(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "triton" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "triton":
            return True
    return False


def static_check(source: str, entry_points: tuple[str, ...], kernel_required: bool = True) -> list[str]:
    """Reasons to reject `source`; an empty list means it may run.

    A syntax error is not a reason here: the judge reports it as a compile error with
    Python's own message.
    """
    if (size := len(source.encode("utf-8", "surrogatepass"))) > MAX_SOURCE_BYTES:
        return [f"is {size:,} bytes long; a candidate may be at most {MAX_SOURCE_BYTES:,}"]
    try:
        tree = syntax.parse(source)
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
        elif isinstance(node, ast.Attribute):
            if node.attr in FORBIDDEN_ATTRIBUTES:
                reasons.append(f"line {node.lineno}: uses .{node.attr}, which is not allowed "
                               "(hooks, knobs and interpreter internals run code outside the judged calls)")
            elif node.attr in OS_PROCESS_CALLS and isinstance(node.value, ast.Name) and node.value.id == "os":
                reasons.append(f"line {node.lineno}: uses os.{node.attr}, which is not allowed")
    if kernel_required and not _imports_triton(tree):
        reasons.append("does not import triton: values must be computed by Triton kernels")
    missing = [e for e in entry_points if e not in _defined_names(tree.body)]
    if missing:
        reasons.append(f"does not define the entry point(s) {', '.join(missing)}")
    return reasons
