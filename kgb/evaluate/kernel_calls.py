"""What an interpreted kernel may name, checked as Triton's compiler would before it runs.

On a GPU, Triton's code generator compiles a kernel's body: a call to anything but a
`@triton.jit` function, `triton.language` or a handful of Python builtins fails to compile,
and so does a read of a global that is not a constant. Triton's CPU interpreter runs the
same body as Python, so a helper that is plain Python (numpy on the loaded block's values)
ran there and a kernel that no GPU compiles was judged `correct` (session 47's red team,
tests/test_redteam_cpu.py).

So each launch in the interpreter first reads the body it is about to run
(kgb.evaluate.kernel_body), and every name the body takes from outside itself (a global, a
builtin, a module's attribute, a launch argument, a default) must be a Triton function, a
Triton value, a module, a constant, or one of the builtins the code generator accepts; every
`@triton.jit` function it reaches is judged the same way. What its names hold is looked up
at every launch, since a module's globals can be rebound between launches. Applied in the
candidate process (chip=cpu) by kgb.evaluate.interpreter; a GPU compiles for real.

Like the rest of what the candidate process observes, this holds against a kernel that
calls Python by mistake (an LLM's host fallback), not against code that patches the
interpreter or this module in its own process (docs/design/threat-model.md).
"""

from __future__ import annotations

import ast
import builtins
import sys
import types
from typing import Any

from triton.compiler.errors import CompilationError

# Imported with this module, not at a launch: the compile check's record step confines
# itself (kgb's files unreadable) before it prepares the interpreter.
from kgb.evaluate.kernel_body import _Body, _body, _record_sources, _Reference

# The Python builtins Triton's code generator resolves inside a kernel
# (CodeGenerator.builtin_namespace, Triton 3.6 and 3.9): any other is a NameError there.
KERNEL_BUILTINS = ("len", "list", "range", "float", "int", "isinstance", "getattr", "hasattr", "print", "min", "max")

# Exactly these types: a subclass could bring operators of its own into the kernel
_CONSTANT_TYPES = frozenset((type(None), bool, int, float, complex, str, bytes, type(Ellipsis)))


class NotTritonError(CompilationError):
    """A kernel names something Triton's compiler would not let it use. A CompilationError,
    so that the verdict is `compile_error`, as the same kernel's is on a GPU."""

    def _format_message(self) -> str:
        if hasattr(self.node, "lineno"):
            return super()._format_message()
        return self.error_message or ""  # an argument's or a whole body's fault: no line to show


class _Scope:
    """What a kernel may name, taken before any candidate code runs, so that a candidate
    cannot add its own function to `triton.language` and have it pass as Triton's."""

    def __init__(self) -> None:
        import triton
        import triton.language as tl
        from triton.runtime import interpreter as itp

        _import_language_extras()
        self.tuple_types = (tuple, getattr(tl.core, "tuple", tuple))
        self.tensor_types = (tl.tensor, *self.tuple_types[1:])  # a tensor, and what may hold one
        self.kernel_builtins = {id(getattr(builtins, name)) for name in KERNEL_BUILTINS}
        self.objects: dict[int, Any] = {}  # id -> object, held so that no id is reused
        self.types: set[type] = set()
        for name, module in list(sys.modules.items()):
            if name == "triton.language" or name.startswith("triton.language."):
                for value in vars(module).values():
                    self._take(value)
        # Triton's own integer helpers, which a kernel may use on constants (constexpr
        # functions in Triton 3.6 and 3.9, whose arguments _refuse_tensors checks)
        for helper in ("cdiv", "next_power_of_2"):
            self._take(getattr(triton, helper, None))
        self.interpreter_globals = vars(itp)
        self.interpreter_codes = _nested_codes(*(getattr(itp, name, None) for name in
                                                 ("_patch_attr", "_patch_lang_core", "_patch_reduce_scan")))

    def _take(self, value: Any) -> None:
        if isinstance(value, types.ModuleType) or not _defined_in_triton(value):
            return
        self.objects[id(value)] = value
        if isinstance(value, type):
            self.types.add(value)
            for member in vars(value).values():
                member = getattr(member, "__func__", member)  # a static or class method's function
                if callable(member) and not isinstance(member, type):
                    self.objects[id(member)] = member

    def holds(self, value: Any) -> bool:
        return id(value) in self.objects and self.objects[id(value)] is value


def _import_language_extras() -> None:
    """libdevice's modules, which a candidate imports only if it uses them: their functions
    must be in the scope before it does."""
    import importlib

    for name in ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice",
                 "triton.language.extra.hip.libdevice"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass


def _defined_in_triton(value: Any) -> bool:
    module = getattr(value, "__module__", None)
    return isinstance(module, str) and (module == "triton" or module.startswith("triton."))


def _nested_codes(*functions: Any) -> frozenset[types.CodeType]:
    """The code of the functions the interpreter defines inside these: its stand-ins for
    `triton.language`'s builtins while a kernel runs (3.9 leaves some in place after a
    launch that called one of triton.language's own jit functions)."""
    codes, stack = set(), [f.__code__ for f in functions if f is not None]
    while stack:
        for const in stack.pop().co_consts:
            if isinstance(const, types.CodeType):
                codes.add(const)
                stack.append(const)
    return frozenset(codes)


_scope: _Scope | None = None


# ----------------------------------------------------------------------------- judging

_ABSENT = object()


class _Launch:
    """One launch's check: every body it reaches, each once."""

    def __init__(self, scope: _Scope) -> None:
        self.scope = scope
        self.read: set[int] = set()

    def kernel(self, fn: Any, run_fn: Any) -> None:
        """A jit function's body, and the defaults its parameters take."""
        if id(fn) in self.read:
            return
        self.read.add(id(fn))
        body = _body(fn)
        if body.refusal is not None:
            raise _refused(body, *body.refusal)
        for reference in body.references:
            self.reference(body, fn, reference)
        defaults = [*(getattr(run_fn, "__defaults__", None) or ()), *(getattr(run_fn, "__kwdefaults__", None) or {}).values()]
        for value in defaults:
            self.argument(value, f"a default of {body.name}'s parameters")

    def reference(self, body: _Body, fn: Any, reference: _Reference) -> None:
        """The name and each attribute read of it, in turn: `mod.helper` is judged at
        `mod`, a module, and at `helper`."""
        value, path = _resolve(fn, reference.root), (reference.root, *reference.attributes)
        for depth in range(len(path)):
            if depth:
                value = getattr(value, path[depth], _ABSENT)
            if value is _ABSENT:
                return  # the interpreter raises its NameError or AttributeError, a compile error as on a GPU
            problem = self.problem(value)
            if problem is not None:
                verb = "calls" if reference.called and depth == len(path) - 1 else "names"
                raise _refused(body, reference.node, f"{body.name} {verb} `{'.'.join(path[:depth + 1])}`, {problem}")

    def argument(self, value: Any, what: str) -> None:
        from triton.runtime import interpreter as itp

        if hasattr(value, "data_ptr") or type(value) is getattr(itp, "TensorDescriptor", None):
            return  # a pointer in the kernel, or a descriptor of one, made by the interpreter
        problem = self.problem(value)
        if problem is not None:
            raise NotTritonError("", ast.Module(), f"{what} is {problem}")

    def problem(self, value: Any) -> str | None:
        """Why a kernel may not name this value, or None where it may."""
        value = _unwrapped(value)
        if _is_jit(value) and not self.scope.holds(value):  # triton.language's own are not read
            self.kernel(value.fn, _rewritten(value))
            return None
        if self.allowed(value):
            return None
        if type(value) in self.scope.tuple_types or _is_namedtuple(value):
            return next(filter(None, map(self.problem, _items(value))), None)
        what = _describe(value)
        if callable(value):
            return (f"{what}, which is not a Triton function: a kernel may call only @triton.jit functions, "
                    f"triton.language and the builtins Triton's compiler accepts ({', '.join(KERNEL_BUILTINS)}). "
                    "Triton's compiler refuses it on a GPU; the CPU interpreter would run it as Python")
        return (f"{what}, which is not a Triton value: a kernel may read only Triton's functions and values, "
                "modules, numbers, strings and tuples of them")

    def allowed(self, value: Any) -> bool:
        """A value with no behaviour a kernel could reach but Triton's own."""
        kind = type(value)
        if kind in _CONSTANT_TYPES or isinstance(value, types.ModuleType) or _is_torch_dtype(value):
            return True
        if _is_numpy_scalar(value):
            return True
        if self.scope.holds(value) or id(value) in self.scope.kernel_builtins:
            return True
        if kind in self.scope.types and not isinstance(value, self.scope.tuple_types):
            return True  # a dtype, a constexpr's type, an enum of triton.language's
        if isinstance(value, types.MethodType):
            return self.scope.holds(value.__func__) and self.problem(value.__self__) is None
        if _is_constexpr_function(value) or _is_namedtuple_type(value):
            return True  # a constexpr_function's arguments are checked as it is called (_refuse_tensors)
        return self.interpreter_stand_in(value)

    def interpreter_stand_in(self, value: Any) -> bool:
        """One of the interpreter's own stand-ins for a `triton.language` builtin."""
        import functools

        if isinstance(value, functools.partial):
            return self.interpreter_stand_in(value.func) and self.problem((*value.args, *value.keywords.values())) is None
        if not isinstance(value, types.FunctionType) or value.__code__ not in self.scope.interpreter_codes:
            return False
        return value.__globals__ is self.scope.interpreter_globals and self.problem(tuple(value.__defaults__ or ())) is None


def _refused(body: _Body, node: ast.AST, message: str) -> NotTritonError:
    return NotTritonError(body.src, node, message)


def _unwrapped(value: Any) -> Any:
    import triton.language as tl

    while type(value) is tl.constexpr:  # a subclass of it could bring operators of its own
        value = value.value
    return value


def _items(value: Any) -> tuple:
    """A Python or Triton tuple's (or a list's) items."""
    return tuple(value) if isinstance(value, tuple | list) else tuple(getattr(value, "values", ()))


def _is_numpy_scalar(value: Any) -> bool:
    """A numpy number or dtype, of numpy's own types (a subclass could bring operators)."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, (np.generic, np.dtype)) and type(value).__module__.startswith("numpy")


def _is_torch_dtype(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.dtype)


def _is_jit(value: Any) -> bool:
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    return isinstance(value, (InterpretedFunction, JITFunction)) and isinstance(getattr(value, "fn", None), types.FunctionType)


def _is_constexpr_function(value: Any) -> bool:
    from triton.runtime import jit

    kind = getattr(jit, "ConstexprFunction", None)
    return kind is not None and type(value) is kind


def _is_namedtuple_type(value: Any) -> bool:
    """A namedtuple class that defines no behaviour of its own: operators on its values are
    a tuple's."""
    if not (isinstance(value, type) and value.__bases__ == (tuple,) and hasattr(value, "_fields")):
        return False
    return not any(callable(member) and name.startswith("__") and name not in ("__new__", "__repr__", "__getnewargs__")
                   for name, member in vars(value).items())


def _is_namedtuple(value: Any) -> bool:
    return _is_namedtuple_type(type(value))


def _rewritten(kernel: Any) -> Any:
    """The function the interpreter runs for a jit function: compiled from its source, which
    kgb.evaluate.kernel_body reads from the compile (_record_sources)."""
    rewrite = getattr(kernel, "rewrite", None)
    return rewrite() if rewrite is not None else kernel.fn


def _resolve(fn: Any, name: str) -> Any:
    """A global or builtin name as the function's code looks it up."""
    scope = fn.__globals__
    if name in scope:
        return scope[name]
    names = scope.get("__builtins__", builtins)
    names = names if isinstance(names, dict) else vars(names)
    return names.get(name, _ABSENT)


def _describe(value: Any) -> str:
    kind = type(value)
    if isinstance(value, type):
        return f"the class {value.__module__}.{value.__qualname__}"
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    module = getattr(value, "__module__", None)
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)) or kind.__name__ == "ufunc":
        where = f"{module}." if isinstance(module, str) and module != "builtins" else ""
        return f"the function {where}{name}"
    if callable(value):
        return f"a callable {kind.__module__}.{kind.__qualname__}"
    return f"a {kind.__module__}.{kind.__qualname__}"


# --------------------------------------------------------------------------- patching

def check_launch(kernel: Any, args: tuple, kwargs: dict) -> None:
    """Raises NotTritonError where the launched kernel, or a function it reaches, names what
    Triton's compiler would not let it use; its arguments included."""
    assert _scope is not None, "patch_interpreter_calls comes first"
    launch = _Launch(_scope)
    launch.kernel(kernel.fn, _rewritten(kernel))
    body = _body(kernel.fn)
    # Launch options (num_warps and the like) are no parameter: the interpreter drops them
    bound = {**dict(zip(body.parameters, args, strict=False)),
             **{k: v for k, v in kwargs.items() if k in body.parameters}}
    for name, value in bound.items():
        launch.argument(value, f"{body.name}'s argument {name}")


def _check_launches() -> None:
    from triton.runtime.interpreter import InterpretedFunction

    run = InterpretedFunction.run
    if getattr(run, "_kgb_checked", False):
        return

    def checked_run(self, *args, grid, warmup, **kwargs):
        if not warmup:
            check_launch(self, args, kwargs)
        return run(self, *args, grid=grid, warmup=warmup, **kwargs)

    checked_run._kgb_checked = True  # type: ignore[attr-defined]
    InterpretedFunction.run = checked_run


class TensorAtCompileTime(TypeError):
    """A TypeError, as the interpreter's other compile errors are caused (kgb.evaluate.candidate)."""


def _refuse_tensors() -> None:
    """A `@triton.constexpr_function` runs as Python at compile time, on constants: in the
    interpreter a tensor passed to it would hand Python the kernel's values."""
    from triton.runtime import jit

    kind = getattr(jit, "ConstexprFunction", None)
    if kind is None or getattr(kind.__call__, "_kgb_checked", False):
        return
    call = kind.__call__
    tensor_types = _scope.tensor_types if _scope is not None else ()

    def holds_tensor(value: Any) -> bool:
        if isinstance(value, tensor_types[0]):
            return True
        return isinstance(value, (tuple, list, *tensor_types[1:])) and any(map(holds_tensor, _items(value)))

    def __call__(self, *args, **kwargs):
        for value in (*args, *kwargs.values()):
            if holds_tensor(value):
                raise TensorAtCompileTime(
                    f"the constexpr_function {getattr(self.fn, '__qualname__', '?')} is given a tensor: it runs at "
                    "compile time, on constants, and a tensor's values exist only as the kernel runs")
        return call(self, *args, **kwargs)

    __call__._kgb_checked = True  # type: ignore[attr-defined]
    kind.__call__ = __call__


def patch_interpreter_calls() -> None:
    global _scope
    if _scope is None:
        _scope = _Scope()
    _record_sources()
    _check_launches()
    _refuse_tensors()
