"""What a kernel's body takes from outside itself, read from the text the interpreter compiles.

kgb.evaluate.kernel_calls judges, at each launch in Triton's CPU interpreter, what a kernel
names; this module reads what it names. It reads the very source text the interpreter
compiles for a jit function (kept as the interpreter compiles it, not a second reading of the
file that could find other text): every name the body looks up in its globals or builtins,
with the chain of attributes it reads of each, and the first construct it uses that would let
a body bind names this reading does not follow (an import, a lambda, a nested function,
`global`, a store outside the kernel, a computed `getattr`, the interpreter's or Triton's
internals). A function's body is read once; what its names hold is for kernel_calls to look
up at every launch.
"""

from __future__ import annotations

import ast
import inspect
import symtable
import textwrap
from dataclasses import dataclass
from typing import Any

# `.handle` is the interpreter's numpy array under a tensor (an MLIR value a kernel cannot
# compute with on a GPU); underscored names are Triton's internals, no part of its language.
_INTERNAL_ATTRIBUTES = ("handle",)

# Scopes a kernel could open to bind names this reading does not follow; Triton's code
# generator supports none of them.
_REFUSED_CONSTRUCTS = {
    ast.Import: "an import", ast.ImportFrom: "an import", ast.Global: "a global statement",
    ast.Nonlocal: "a nonlocal statement", ast.Lambda: "a lambda", ast.FunctionDef: "a nested function",
    ast.AsyncFunctionDef: "a nested function", ast.ClassDef: "a class",
}


@dataclass(frozen=True)
class _Reference:
    """A name a body takes from outside itself, and the attributes it reads of it."""

    node: ast.AST
    root: str
    attributes: tuple[str, ...]
    called: bool  # the function of a call, not only named


@dataclass(frozen=True)
class _Body:
    """What one function's body takes from outside itself, read once from its source."""

    name: str
    src: str
    parameters: tuple[str, ...]
    references: tuple[_Reference, ...]
    refusal: tuple[ast.AST, str] | None  # where, and why, raised anew at each launch


_sources: dict[Any, str] = {}  # function -> the source text the interpreter compiled for it
_bodies: dict[Any, _Body] = {}


def _body(fn: Any) -> _Body:
    body = _bodies.get(fn)
    if body is None:
        body = _bodies[fn] = _read(fn)
    return body


def _read(fn: Any) -> _Body:
    name = getattr(fn, "__qualname__", getattr(fn, "__name__", "?"))
    parameters = tuple(inspect.signature(fn).parameters)
    src = _sources.get(fn)
    if src is None and not _interpreter_compiles():
        src = _source_of(fn)
    if src is None:
        return _Body(name, "", parameters, (), (ast.Module(), f"the source of {name} cannot be read: Triton's compiler compiles "
                                                  "a kernel from its source, and kgb checks what a kernel calls there"))
    definition = _definition(src, fn.__name__)
    if definition is None:
        return _Body(name, src, parameters, (), (ast.Module(), f"{name}'s source defines no function {fn.__name__}"))
    reader = _Reader(src, name, _global_names(src, fn.__name__))
    for statement in definition.body:
        reader.visit(statement)
    return _Body(name, src, parameters, tuple(reader.references), reader.refusal)


def _interpreter_compiles() -> bool:
    """Whether the interpreter compiles each jit function from its source text (Triton 3.6
    and 3.9), which is then the text to read: where it found none, it runs the function's
    code as it is, and what that code calls is unknown to a reading of the file."""
    from triton.runtime import interpreter as itp

    return hasattr(itp, "FunctionRewriter")


def _source_of(fn: Any) -> str | None:
    """The source of a function where the interpreter runs its code as it is (Triton 3.2)."""
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None


def _definition(src: str, name: str) -> ast.FunctionDef | None:
    """The definition the interpreter keeps: the last of that name its source text binds."""
    found = None
    for statement in ast.parse(src).body:
        if isinstance(statement, ast.FunctionDef) and statement.name == name:
            found = statement
    return found


def _global_names(src: str, name: str) -> frozenset[str]:
    """The names the function (or a comprehension in it) looks up in its globals and
    builtins, by Python's own scoping."""
    table = None
    for child in symtable.symtable(src, "<kernel>", "exec").get_children():
        if child.get_name() == name and child.get_type() == "function":
            table = child
    names, stack = set(), [table] if table is not None else []
    while stack:
        scope = stack.pop()
        names.update(symbol.get_name() for symbol in scope.get_symbols() if symbol.is_global())
        stack.extend(scope.get_children())
    return frozenset(names)


class _Reader(ast.NodeVisitor):
    """Collects a body's references to outside names and the first construct refused."""

    def __init__(self, src: str, name: str, global_names: frozenset[str]) -> None:
        self.src, self.name, self.global_names = src, name, global_names
        self.references: list[_Reference] = []
        self.refusal: tuple[ast.AST, str] | None = None
        self.callees: set[ast.AST] = set()

    def refuse(self, node: ast.AST, message: str) -> None:
        if self.refusal is None:
            self.refusal = (node, f"{self.name}: {message}")

    def generic_visit(self, node: ast.AST) -> None:
        construct = _REFUSED_CONSTRUCTS.get(type(node))
        if construct is not None:
            self.refuse(node, f"{construct} in a kernel, which Triton's compiler refuses")
            return
        super().generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self.global_names:
            self.references.append(_Reference(node, node.id, (), node in self.callees))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attributes, base = _attribute_chain(node)
        for attribute in attributes:
            self.check_attribute(node, attribute)
        if isinstance(base, ast.Name) and base.id in self.global_names:
            if not isinstance(node.ctx, ast.Load):
                self.refuse(node, f"assigns to `{ast.unparse(node)}`, outside the kernel")
            self.references.append(_Reference(node, base.id, attributes, node in self.callees))
        else:
            self.visit(base)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        _, base = _attribute_chain(node.value)
        if not isinstance(node.ctx, ast.Load) and isinstance(base, ast.Name) and base.id in self.global_names:
            self.refuse(node, f"assigns to `{ast.unparse(node)}`, outside the kernel")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.callees.add(node.func)
        if isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            self.read_getattr(node)
        self.generic_visit(node)

    def read_getattr(self, node: ast.Call) -> None:
        """`getattr(x, "name")` reads what `x.name` does; a name computed as the kernel runs
        could be any attribute."""
        if len(node.args) < 2 or not (isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            self.refuse(node, f"`{ast.unparse(node)}` reads an attribute whose name is not a constant")
            return
        attribute = node.args[1].value
        self.check_attribute(node, attribute)
        attributes, base = _attribute_chain(node.args[0])
        if isinstance(base, ast.Name) and base.id in self.global_names:
            self.references.append(_Reference(node, base.id, (*attributes, attribute), node in self.callees))

    def check_attribute(self, node: ast.AST, attribute: str) -> None:
        if attribute in _INTERNAL_ATTRIBUTES or attribute.startswith("_"):
            self.refuse(node, f"`{ast.unparse(node)}` reads `.{attribute}`, the interpreter's or Triton's internals, "
                              "no part of Triton's language")


def _attribute_chain(node: ast.AST) -> tuple[tuple[str, ...], ast.AST]:
    """`a.b.c` as ("b", "c") and the node of `a`."""
    attributes = []
    while isinstance(node, ast.Attribute):
        attributes.append(node.attr)
        node = node.value
    return tuple(reversed(attributes)), node


def _record_sources() -> None:
    """Keep the text the interpreter compiles for each jit function: the check reads that,
    not a second reading of the file that could find other text."""
    from triton.runtime import interpreter as itp

    rewriter = getattr(itp, "FunctionRewriter", None)
    if rewriter is None or getattr(rewriter._transform_ast, "_kgb_recorded", False):
        return
    transform = rewriter._transform_ast

    def _transform_ast(self, src):
        _sources[self.fn] = src
        return transform(self, src)

    _transform_ast._kgb_recorded = True  # type: ignore[attr-defined]
    rewriter._transform_ast = _transform_ast
