"""The kernel launches that a candidate makes in Triton's CPU interpreter, recorded as data.

A launch is noted as enough to compile it again with no GPU present
(kgb.evaluate.launch_compiler): which kernel, the Triton type of each argument (`*fp32`,
`i32`, ...), the constexpr values and the launch options (num_warps, num_stages). Each
distinct launch is noted once, while the interpreter still runs it as usual. The launches
go from the process that records them to the one that compiles them as JSON, which the
judge reads back without unpickling anything that a candidate's process wrote
(kgb.evaluate.crosscompile, which runs both).
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kgb.operators import Spec

LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion")
_TRITON_TYPES = {
    "float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
    "bool": "i1", "complex64": "fp32", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5",
}


@dataclass(frozen=True)
class Launch:
    """One distinct kernel launch, enough to compile it again."""

    kernel: str  # the @triton.jit function's name in the candidate module
    signature: tuple[tuple[str, str], ...]  # (parameter, Triton type or "constexpr")
    constexprs: tuple[tuple[str, Any], ...]
    options: tuple[tuple[str, int], ...] = field(default=())


def _plain(value: Any) -> Any:
    """A constexpr value as JSON: the judge never unpickles what a candidate's process wrote."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, tuple | list):
        return {"tuple" if isinstance(value, tuple) else "list": [_plain(v) for v in value]}
    if type(value).__name__ == "constexpr" and hasattr(value, "value"):  # tl.constexpr(x): x is what compiles
        return _plain(value.value)
    if hasattr(value, "item") and type(value).__module__ == "numpy":
        return _plain(value.item())
    name = getattr(value, "name", None)
    if type(value).__name__ == "dtype" and isinstance(name, str):
        return {"tl_dtype": name}
    raise TypeError(f"a constexpr of type {type(value).__name__} cannot be recorded")


def _unplain(value: Any) -> Any:
    if isinstance(value, dict) and ("tuple" in value or "list" in value):
        items = [_unplain(v) for v in value.get("tuple", value.get("list"))]
        return tuple(items) if "tuple" in value else items
    if isinstance(value, dict) and "tl_dtype" in value:
        import triton.language as tl

        found = [d for d in vars(tl).values() if isinstance(d, tl.dtype) and d.name == value["tl_dtype"]]
        if not found:
            raise ValueError(f"unknown Triton dtype {value['tl_dtype']!r}")
        return found[0]
    return value


def launches_to_json(launches: list[Launch]) -> str:
    return json.dumps([{"kernel": la.kernel, "signature": la.signature,
                        "constexprs": [(k, _plain(v)) for k, v in la.constexprs], "options": la.options}
                       for la in launches])


def launches_from_json(text: str) -> list[Launch]:
    return launches_from_data(json.loads(text))


def launches_from_data(data: Any) -> list[Launch]:
    """The launches of `launches_to_json`'s text, parsed: KeyError, TypeError, ValueError or
    AttributeError for data of another shape."""
    if not isinstance(data, list):
        raise TypeError("not a list of launches")
    return [Launch(str(d["kernel"]), tuple((str(a), str(b)) for a, b in d["signature"]),
                   tuple((str(k), _unplain(v)) for k, v in d["constexprs"]),
                   tuple((str(k), v) for k, v in d["options"])) for d in data]


def _triton_type(value: Any) -> str | None:
    """The Triton type of a runtime argument, or None for a constexpr-like value."""
    import torch

    if isinstance(value, torch.Tensor):
        return "*" + _TRITON_TYPES[str(value.dtype).removeprefix("torch.")]
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if -(2**31) <= value < 2**31 else ("i64" if value < 2**63 else "u64")
    if isinstance(value, float):
        return "fp32"
    return None


def _is_constexpr(param: inspect.Parameter) -> bool:
    return "constexpr" in str(param.annotation)


def launch_of(fn: Any, args: tuple, kwargs: dict) -> Launch:
    signature_of_fn = inspect.signature(fn)
    params = signature_of_fn.parameters
    # launch options (num_warps...) are not kernel parameters; others such as an autotune
    # config's ir_override do not change what is compiled here
    extra = {k: kwargs.pop(k) for k in list(kwargs) if k not in params}
    options = {k: v for k, v in extra.items() if k in LAUNCH_OPTIONS}
    bound = signature_of_fn.bind(*args, **kwargs)
    bound.apply_defaults()
    signature, constexprs = [], []
    for name, value in bound.arguments.items():
        kind = None if _is_constexpr(params[name]) else _triton_type(value)
        signature.append((name, kind or "constexpr"))
        if kind is None:
            constexprs.append((name, value))
    return Launch(fn.__name__, tuple(signature), tuple(constexprs), tuple(sorted(options.items())))


@contextlib.contextmanager
def recording() -> Iterator[list[Launch]]:
    """Notes every interpreted launch while it still runs as usual."""
    from triton.runtime.interpreter import InterpretedFunction

    launches: list[Launch] = []
    original = InterpretedFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        launch = launch_of(self.fn, args, dict(kwargs))
        if launch not in launches:
            launches.append(launch)
        return original(self, *args, grid=grid, warmup=warmup, **kwargs)

    InterpretedFunction.run = run
    try:
        yield launches
    finally:
        InterpretedFunction.run = original


def record(spec_path: Path | Spec, candidate: Path, tags: set[str], name: str = "crosscompile_candidate") -> list[Launch]:
    """Runs `candidate` (imported as module `name`) on the cases of the spec (a path, or the
    Spec loaded) with these tags in the interpreter."""
    import torch

    from kgb.evaluate.draws import draw_inputs
    from kgb.evaluate.interpreter import prepare_interpreter
    from kgb.operators import _import_file, load_spec

    assert os.environ.get("TRITON_INTERPRET") == "1", "recording needs Triton's interpreter"
    prepare_interpreter()
    spec = load_spec(spec_path) if isinstance(spec_path, str | Path) else spec_path
    module = _import_file(candidate, name)
    with recording() as launches, torch.no_grad():
        for case in spec.cases:
            if str(case.tag) in tags:
                entry = spec.entry_of(case)
                args, kwargs = entry.bind(draw_inputs(spec, case, case.seed, "cpu"))
                getattr(module, entry.name)(*args, **kwargs)
    return launches
